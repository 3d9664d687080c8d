#include "runs.h"

#include "../ops/agg.h"
#include "processing.h"
#include "schedule.h"
#include "txpath.h"

static uint32_t interval_start(const query_run *run, uint8_t k)
{
    return sched_interval_start(run->epoch_start, run->epoch_ms, k);
}

static uint32_t epoch_end(const query_run *run) { return run->epoch_start + run->epoch_ms; }

static void schedule_wake(mote_state *st, query_run *run)
{
    run->slot_depth = sched_slot_depth(routing_depth(&st->rt));
    run->phase = PH_WAKE;
    run->next_at = interval_start(run, (uint8_t)(run->slot_depth + 1u));
}

static uint8_t group_slots_wanted(const query *q)
{
    uint8_t e;
    for (e = 0; e < q->num_exprs; e++)
        if (QUERY_IS_AGG_EXPR(&q->exprs[e]) && q->exprs[e].u.agg.group_field != QUERY_NO_GROUP)
            return GROUPS_MAX;
    return 1;
}

uint8_t run_start(mote_state *st, uint8_t slot)
{
    query_run *run = &st->run[slot];
    uint8_t groups = group_slots_wanted(&st->queries.slot[slot]);
    uint16_t need = proc_layout(st, slot, groups);
    /* Fewer group slots rather than no query when memory is short. */
    while (groups > 1 && st->arena_used + need > AGG_ARENA_BYTES)
        need = proc_layout(st, slot, --groups);
    if (st->arena_used + need > AGG_ARENA_BYTES) {
        st->stats.queries_refused++;
        qtable_free(&st->queries, slot);
        return 0;
    }
    run->arena_off = st->arena_used;
    run->arena_len = need;
    st->arena_used = (uint16_t)(st->arena_used + need);
    groups_reset(&run->groups, groups);
    run->epoch = 0;
    run->drain_left = 0;
    run->emitted = 0;
    run_retime(st, slot);
    return 1;
}

void run_stop(mote_state *st, uint8_t slot)
{
    query_run *run = &st->run[slot];
    uint16_t end = (uint16_t)(run->arena_off + run->arena_len), i;
    uint8_t k;
    /* Compact: later queries' states slide down over the freed bytes. */
    for (i = end; i < st->arena_used; i++)
        st->arena[i - run->arena_len] = st->arena[i];
    for (k = 0; k < QUERY_SLOTS; k++)
        if (k != slot && st->queries.slot[k].status >= QUERY_RUNNING && st->run[k].arena_off >= end)
            st->run[k].arena_off = (uint16_t)(st->run[k].arena_off - run->arena_len);
    st->arena_used = (uint16_t)(st->arena_used - run->arena_len);
    run->arena_len = 0;
    st->gate_open &= (uint8_t)~(1u << slot);
    st->listening &= (uint8_t)~(1u << slot);
    qtable_free(&st->queries, slot);
}

void run_drain(mote_state *st, uint8_t slot)
{
    st->queries.slot[slot].status = QUERY_DRAINING;
    st->stopped_qid = st->queries.slot[slot].qid;
    st->run[slot].drain_left = DRAIN_EPOCHS;
}

void run_retime(mote_state *st, uint8_t slot)
{
    query_run *run = &st->run[slot];
    run->epoch_ms = sched_epoch_ms(st->queries.slot[slot].epoch_units);
    run->epoch_start = sched_next_boundary(mote_now(st), run->epoch_ms);
    schedule_wake(st, run);
    st->gate_open &= (uint8_t)~(1u << slot);
    st->listening &= (uint8_t)~(1u << slot);
}

void run_adopt_epoch(mote_state *st, uint8_t slot, uint16_t epoch)
{
    query_run *run = &st->run[slot];
    uint16_t ahead = (uint16_t)(epoch - run->epoch); /* modulo 2^16 */
    if (ahead != 0 && ahead < 0x8000u)
        run->epoch = epoch;
}

/* Each phase does its work and schedules the next one. */
static void phase_wake(mote_state *st, uint8_t slot)
{
    query *q = &st->queries.slot[slot];
    query_run *run = &st->run[slot];
    uint32_t jitter = 0, half = sched_interval_ms(run->epoch_ms) / 2u;
    if (q->status == QUERY_DRAINING) {
        if (run->drain_left == 0) {
            run_stop(st, slot);
            return;
        }
        run->drain_left--;
    }
    run->epoch++;
    run->emitted = 0;
    st->stats.epochs++;
    st->listening |= (uint8_t)(1u << slot);
    if (q->status == QUERY_RUNNING)
        proc_sample(st, slot);
    /* Siblings share the interval: a random start spreads them and lets snooping work. */
    if (st->id != MOTE_ROOT_ID && half)
        jitter = st->hal->rand16(st->hal->ctx) % half;
    run->phase = PH_TRANSMIT;
    run->next_at = interval_start(run, run->slot_depth) + jitter;
}

static void phase_transmit(mote_state *st, uint8_t slot)
{
    query *q = &st->queries.slot[slot];
    query_run *run = &st->run[slot];
    uint32_t interval = sched_interval_ms(run->epoch_ms);
    st->gate_open |= (uint8_t)(1u << slot);
    run->tx_until = epoch_end(run) - (uint32_t)run->slot_depth * interval;
    if (q->has_agg)
        proc_emit(st, slot);
    if (q->status == QUERY_RUNNING &&
        ((q->num_epochs && run->epoch >= q->num_epochs) || q->epoch_units == QUERY_EPOCH_ONCE))
        run_drain(st, slot);
    /* Awake through the parent's interval too (sync, route liveness), but silent: our
     * children are asleep then. */
    run->phase = PH_SLEEP;
    run->next_at = run->slot_depth ? epoch_end(run) - (uint32_t)(run->slot_depth - 1u) * interval
                                   : epoch_end(run);
}

static void phase_sleep(mote_state *st, uint8_t slot)
{
    query_run *run = &st->run[slot];
    st->gate_open &= (uint8_t)~(1u << slot);
    st->listening &= (uint8_t)~(1u << slot);
    run->epoch_start = epoch_end(run);
    schedule_wake(st, run);
}

void run_advance(mote_state *st, uint8_t slot, uint32_t now)
{
    /* Bounded: one epoch's phases at most, even after a long stall. */
    uint8_t steps;
    for (steps = 0; steps < 3; steps++) {
        query_run *run = &st->run[slot];
        if (st->queries.slot[slot].status < QUERY_RUNNING || !sched_due(run->next_at, now))
            return;
        if (run->phase == PH_WAKE)
            phase_wake(st, slot);
        else if (run->phase == PH_TRANSMIT)
            phase_transmit(st, slot);
        else
            phase_sleep(st, slot);
    }
}
