#include "schedule.h"

#include "../query/query.h"

uint32_t sched_epoch_ms(int16_t units)
{
    if (units == QUERY_EPOCH_ONCE)
        return SCHED_ONCE_MS;
    return units > 0 ? (uint32_t)units * SCHED_EPOCH_UNIT_MS : SCHED_EPOCH_UNIT_MS;
}

uint8_t sched_intervals(uint32_t epoch_ms)
{
    uint32_t n;
    if (epoch_ms < SCHED_SHORT_EPOCH_MS)
        return (uint8_t)SCHED_INTERVALS_MAX;
    n = (epoch_ms + SCHED_INTERVAL_TARGET_MS / 2u) / SCHED_INTERVAL_TARGET_MS;
    if (n < SCHED_INTERVALS_MIN)
        return (uint8_t)SCHED_INTERVALS_MIN;
    return (uint8_t)(n > SCHED_INTERVALS_MAX ? SCHED_INTERVALS_MAX : n);
}

uint32_t sched_interval_ms(uint32_t epoch_ms)
{
    uint32_t i = epoch_ms / sched_intervals(epoch_ms);
    return i ? i : 1u;
}

uint32_t sched_jitter_span(uint32_t interval_ms)
{
    uint32_t half = interval_ms / 2u;
    uint32_t fits = interval_ms > SCHED_TX_GUARD_MS ? interval_ms - SCHED_TX_GUARD_MS : 0u;
    return fits > half ? fits : half;
}

uint32_t sched_start_base(uint32_t now, uint32_t epoch_ms, uint8_t deepest)
{
    uint32_t delay = epoch_ms > SCHED_START_DELAY_MS ? epoch_ms : SCHED_START_DELAY_MS;
    uint32_t earliest;
    if (deepest != SCHED_DEPTH_UNKNOWN) {
        /* The wave leaves in the next control period and crosses one slot per level
         * (plus a period for a lost part asked again); the deepest level begins epoch
         * 1 (deepest + 2) intervals before it ends. */
        uint32_t reach = 2u * SCHED_CTL_PERIOD_MS + (uint32_t)deepest * SCHED_CTL_SLOT_MS;
        uint32_t lead = ((uint32_t)deepest + 2u) * sched_interval_ms(epoch_ms);
        if (reach + lead > epoch_ms + delay)
            delay = reach + lead - epoch_ms;
    }
    earliest = now + delay;
    return earliest / epoch_ms + (earliest % epoch_ms ? 1u : 0u);
}

uint32_t sched_rebase(uint32_t start, uint32_t epoch_ms, uint32_t label)
{
    return start / epoch_ms - label + 1u;
}

uint32_t sched_label_start(uint32_t base, uint32_t epoch_ms, uint32_t label)
{
    return (base + label - 1u) * epoch_ms;
}

uint32_t sched_next_label(uint32_t now, uint32_t base, uint32_t epoch_ms, uint8_t slot,
                          uint32_t min_label)
{
    /* Work on epoch e begins (slot + 2) intervals before its end (sched_work_start).
     * The first e with that at or after now: */
    uint32_t lead = ((uint32_t)slot + 2u) * sched_interval_ms(epoch_ms);
    uint32_t epoch_now = now / epoch_ms; /* index of the epoch containing now */
    uint32_t e = epoch_now - base + 1u;  /* its number (wraps below 1: not started) */
    uint32_t label;
    /* Step back far enough that the first candidate certainly lies before now. */
    e -= lead / epoch_ms + 1u;
    for (label = e;; label++)
        if (sched_due(now, sched_work_start(base, epoch_ms, slot, label)))
            break;
    if ((int32_t)(label - min_label) < 0)
        label = min_label;
    return label;
}

uint32_t sched_work_start(uint32_t base, uint32_t epoch_ms, uint8_t slot, uint32_t label)
{
    return (base + label) * epoch_ms - ((uint32_t)slot + 2u) * sched_interval_ms(epoch_ms);
}

uint8_t sched_slot_depth(uint8_t depth)
{
    return depth > SCHED_MAX_SLOT_DEPTH ? (uint8_t)SCHED_UNROUTED_SLOT : depth;
}

uint32_t sched_interval_start(uint32_t epoch_start, uint32_t epoch_ms, uint8_t k)
{
    uint32_t end = epoch_start + epoch_ms;
    return end - ((uint32_t)k + 1u) * sched_interval_ms(epoch_ms);
}

uint32_t sched_down_offset(uint32_t now, uint8_t depth)
{
    uint32_t phase = ((uint32_t)depth * SCHED_CTL_SLOT_MS) % SCHED_CTL_PERIOD_MS;
    return (now % SCHED_CTL_PERIOD_MS + SCHED_CTL_PERIOD_MS - phase) % SCHED_CTL_PERIOD_MS;
}

uint32_t sched_wave_ms(uint32_t epoch_ms)
{
    return epoch_ms >= SCHED_LONG_EPOCH_MS ? epoch_ms : 0u;
}

uint32_t sched_wave_since(uint32_t now, uint32_t wave_ms, uint8_t depth)
{
    if (!wave_ms)
        return sched_down_offset(now, depth);
    /* Epochs start at multiples of the epoch in logical time (sched_label_start), hence
     * of wave_ms, a whole fraction of it; the slots follow each start one level per
     * slot, not modulo a period, so a wave crosses any depth in one burst (depth 254:
     * 16 s; within the shortest long epoch's half, 3.1 s, to depth 47 -- far deeper
     * than a tree the radio forms). */
    return (now - (uint32_t)depth * SCHED_CTL_SLOT_MS) % wave_ms;
}
