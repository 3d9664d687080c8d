#include "running.h"

#include "compiler.h"
#include "mote_state.h"
#include "schedule.h"

uint8_t run_any(const mote_state *st)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING)
            return 1;
    return 0;
}

uint8_t run_assembling(const mote_state *st)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status == QUERY_ASSEMBLING)
            break;
    return i;
}

uint8_t run_asks_at_once(const mote_state *st)
{
    return run_tuples_running(st) && run_assembling(st) < QUERY_SLOTS;
}

uint8_t run_slot_of(const mote_state *st, uint8_t qid)
{
    uint8_t slot = qtable_find(&st->queries, qid);
    return slot < QUERY_SLOTS && st->queries.slot[slot].status >= QUERY_RUNNING ? slot
                                                                                  : QUERY_SLOTS;
}

uint8_t run_kind_slots(const mote_state *st, uint8_t has_agg)
{
    uint8_t i, bit = 1u, slots = 0;
    for (i = 0; i < QUERY_SLOTS; i++, bit <<= 1)
        if (st->queries.slot[i].status >= QUERY_RUNNING && st->queries.slot[i].has_agg == has_agg)
            slots |= bit;
    return slots;
}

uint8_t run_tuples_running(const mote_state *st) { return run_kind_slots(st, 0) != 0; }

uint8_t run_aggregates_running(const mote_state *st) { return run_kind_slots(st, 1) != 0; }

uint8_t run_relays_tuples(const mote_state *st)
{
    return run_tuples_running(st) && run_may_have_children(st);
}

/*
 * Whether to listen in the children's interval: yes if a neighbour routes
 * through us (routing's view, or results heard lately), and also if one could
 * -- a neighbour one level deeper may switch to us any epoch, and a record
 * that finds us asleep is merged an epoch late. Only a node at the rim of the
 * tree sleeps through it.
 */
uint8_t run_may_have_children(const mote_state *st)
{
    const routing *rt = &st->rt;
    uint8_t i, n = routing_neighbor_count(rt), below = (uint8_t)(routing_depth(rt) + 1u);
    if (st->child_epochs != 0)
        return 1;
    for (i = 0; i < n; i++) {
        const routing_neighbor *nb = routing_neighbor_at(rt, i);
        if ((nb->flags & ROUTING_NB_CHILD) || nb->depth == below)
            return 1;
    }
    return 0;
}

uint32_t run_send_wave(const mote_state *st)
{
    return (uint32_t)st->wave_units * SCHED_EPOCH_UNIT_MS / SCHED_LONG_WAVES;
}

MOTE_NOINLINE uint32_t run_wave_since(const mote_state *st, uint32_t now, uint8_t depth)
{
    return sched_wave_since(now, run_send_wave(st), depth);
}

uint32_t run_tx_until(const query_run *run)
{
    return run_epoch_end(run) - (uint32_t)run->slot_depth * sched_interval_ms(run->epoch_ms);
}
