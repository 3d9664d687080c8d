#include "schedule.h"

#include "../query/query.h"

uint32_t sched_epoch_ms(int16_t units)
{
    if (units == QUERY_EPOCH_ONCE)
        return SCHED_ONCE_MS;
    return units > 0 ? (uint32_t)units * SCHED_EPOCH_UNIT_MS : SCHED_EPOCH_UNIT_MS;
}

uint32_t sched_interval_ms(uint32_t epoch_ms)
{
    uint32_t i = epoch_ms / SCHED_INTERVALS;
    return i ? i : 1u;
}

uint32_t sched_jitter_span(uint32_t interval_ms)
{
    uint32_t half = interval_ms / 2u;
    uint32_t fits = interval_ms > SCHED_TX_GUARD_MS ? interval_ms - SCHED_TX_GUARD_MS : 0u;
    return fits > half ? fits : half;
}

uint32_t sched_next_boundary(uint32_t now, uint32_t epoch_ms)
{
    uint32_t into = now % epoch_ms;
    return into ? now + (epoch_ms - into) : now;
}

uint8_t sched_slot_depth(uint8_t depth)
{
    return depth > SCHED_MAX_DEPTH ? (uint8_t)SCHED_MAX_DEPTH : depth;
}

uint32_t sched_interval_start(uint32_t epoch_start, uint32_t epoch_ms, uint8_t k)
{
    uint32_t end = epoch_start + epoch_ms;
    return end - ((uint32_t)k + 1u) * sched_interval_ms(epoch_ms);
}
