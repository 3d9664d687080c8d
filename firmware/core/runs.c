#include "runs.h"

#include "../ops/agg.h"
#include "clock.h"
#include "mote_state.h"
#include "observe.h"
#include "processing.h"
#include "schedule.h"
#include "sharing.h"
#include "stops.h"
#include "txpath.h"

/* How late an epoch's work may begin rather than be skipped: two intervals, what a move
 * two levels deeper shifts it by. (All but an interval let a 100-node lossy grid at 1 s
 * form a two-node routing cycle: the nodes furthest behind, catching up, switched
 * parents on stale depths.) */
static uint32_t run_late_ms(const query_run *run)
{
    return 2u * sched_interval_ms(run->epoch_ms);
}

static uint32_t interval_start(const query_run *run, uint8_t k)
{
    return sched_interval_start(run->epoch_start, run->epoch_ms, k);
}

/*
 * `slots enabled=0` (core/commands.c): the naive alternative the slot schedule is
 * measured against (TODS 2005 §6.1.1, Fig 12), not a mode to deploy. Every node keeps
 * the root's intervals whatever its depth -- listens in interval 1, transmits at the
 * start of interval 0, with no jitter -- and never sleeps while a query runs (mote.c),
 * so children are heard throughout. A parent's record for epoch e is then out before
 * any child's can arrive (a frame takes time on the air), and each child's joins the
 * parent's next record (results.c, record_is_late): TAG's pipelining, one level an
 * epoch, so COUNT on a tree of depth d first counts every node in epoch d (the root
 * emits at its epoch's end and still merges its own children's of the same epoch).
 * Without the jitter the level's sends start together; the MAC's initial backoff
 * spreads them.
 */
static uint8_t unslotted(const mote_state *st) { return (st->flags & MOTE_F_UNSLOTTED) != 0; }

/*
 * The node's down wave, taken as an epoch begins (schedule.h): the epoch of its running
 * queries -- the longest, should several run -- once every one has begun an epoch and
 * has long epochs; else every period's. Only here, as every node of a query begins an
 * epoch about together (and at run_start on a node that ran nothing): a new query is
 * spread, and a RATE forwarded, in the wave the children still keep. Taken at once, the
 * wave of a query completing at a relay held its last part for the next epoch's start,
 * where a whole level forwarded at once (MAX, COUNT over 1,000 nodes at 8 s, `logistic`:
 * 990 of them counted, 579 so), and a RATE went down in a wave its children did not
 * listen in.
 */
static void take_wave(mote_state *st)
{
    uint8_t i;
    uint32_t longest = 0;
    for (i = 0; i < QUERY_SLOTS; i++) {
        const query_run *run = &st->run[i];
        if (st->queries.slot[i].status < QUERY_RUNNING)
            continue;
        if (!run->epoch || !sched_wave_ms(run->epoch_ms)) {
            longest = 0;
            break;
        }
        if (run->epoch_ms > longest)
            longest = run->epoch_ms;
    }
    st->wave_units = (uint16_t)(longest / SCHED_EPOCH_UNIT_MS);
}

/* Records the node may send for the query this epoch: one per aggregate expression
 * and group slot in use (TAG, processing.h). */
static uint32_t records_expected(const mote_state *st, uint8_t slot)
{
    const query *q = &st->queries.slot[slot];
    uint32_t groups = st->run[slot].groups.count ? st->run[slot].groups.count : 1u, n = 0;
    uint8_t e;
    for (e = 0; e < q->num_exprs; e++)
        if (QUERY_IS_AGG_EXPR(&q->exprs[e]))
            n++;
    return n * groups;
}

/*
 * Range of the random transmit start from the start of the node's interval.
 * Tuples: nothing waits for them within the epoch -- relays of tuples listen
 * all along (run_relays_tuples) and forward as they come -- so they may start
 * anywhere before the same interval of the next epoch, less one interval: the
 * next epoch's work at this depth begins there. A level contending in its one
 * interval collided where it need not: at the Intel lab's 31 s, 16-31 root
 * children in 3.9 s. Epochs under SCHED_SHORT_EPOCH_MS keep the interval's
 * span (sched_jitter_span): at 1 s, where a lossy 25-node grid is past what
 * the channel carries anyway, spreading over the epoch slowed stops down
 * (the down wave meets the sends). Aggregate records: the whole burst of
 * them, one packet time each, must end inside it -- where the parent listens --
 * so k records leave k packet times less room (none: start at once). How many
 * records fit one interval (interval / SCHED_TX_GUARD_MS: 2 at 1 s epochs, 10 at 2 s) is
 * the schedule's limit on aggregates x groups.
 */
static uint32_t transmit_span(const mote_state *st, uint8_t slot)
{
    const query_run *run = &st->run[slot];
    uint32_t interval = sched_interval_ms(run->epoch_ms), need;
    if (!st->queries.slot[slot].has_agg)
        return run->epoch_ms >= SCHED_SHORT_EPOCH_MS ? run->epoch_ms - interval - SCHED_TX_GUARD_MS
                                                     : sched_jitter_span(interval);
    need = records_expected(st, slot) * SCHED_TX_GUARD_MS;
    return interval > need ? interval - need : 0u;
}

/*
 * The random part of the transmit start, drawn when the time is fixed -- over the whole
 * span for a node that listened for children too. Relays once drew their records'
 * from the later half, so that a child's record still in retries would not come
 * after theirs (it is late then: passed on unmerged for an ancestor or the gateway
 * to merge, or dropped if its aggregate cannot spill, core/results.c). But a level's
 * records then shared half an interval: on a grid with a 30 m range (28 neighbours)
 * 20 siblings sent 20 records of 50 ms into 0.5 s, and COUNT at 2 s gave up 40-57 %
 * of them. Over the whole span, seeds 1-10: COUNT over 1,000 nodes 954.5 -> 976
 * (median of seeds), MAX 25 exact .993 -> .997 on `logistic`; COUNT 100 on `sinr` 94.8
 * -> 95.5, its 1,000 nodes 361 -> 343; the dense grid's COUNT 20-25 -> 25-33 of 49.
 */
static uint32_t jitter(mote_state *st, uint8_t slot)
{
    uint32_t span = transmit_span(st, slot);
    return st->id != MOTE_ROOT_ID && span && !unslotted(st) ? st->hal->rand16(st->hal->ctx) % span
                                                             : 0u;
}

/*
 * First wake-up of the epoch starting at run->epoch_start (core/schedule.h):
 * for the children's interval if there are children (the root always: its
 * reading must precede its children's records, as for every parent) -- and for
 * an aggregate query always: a neighbour may take the node as its parent at any
 * epoch boundary, and its record, finding the node asleep, would miss its epoch.
 * Otherwise at the start of the own interval for a leaf that may snoop a
 * sibling's MIN/MAX, else at the transmit time itself.
 */
static void schedule_epoch(mote_state *st, uint8_t slot, uint8_t children_slot)
{
    query_run *run = &st->run[slot];
    if (st->id == MOTE_ROOT_ID || st->queries.slot[slot].has_agg ||
        run_may_have_children(st)) {
        run->phase = PH_WAKE;
        run->next_at = interval_start(run, children_slot);
    } else if (proc_snoops(st, &st->queries.slot[slot])) {
        run->phase = PH_WAKE;
        run->next_at = interval_start(run, run->slot_depth);
    } else {
        run->phase = PH_WAKE_TRANSMIT;
        run->next_at = interval_start(run, run->slot_depth) + jitter(st, slot);
    }
}

/*
 * The slot whose interval a parent wakes for: its children's, one deeper than its own --
 * but in the first epoch after its depth fell (was: the last epoch's slot depth), the one
 * its children still send in. They learn the new depth from its packets, and sleep through
 * them until then: the parent answers a child's record of a stale depth with a beacon
 * (results.c, admit_from_child). On a 1,000-node grid on `sinr` (seed 1), 15 % of the sends
 * to a parent found it asleep, nine in ten of them from a child whose parent had since
 * come closer to the root; a relay so left out takes its subtree's records with it.
 * Aggregates only: tuples carry their epoch and their relays listen all along, and an
 * earlier wake-up moved the sampling (SELECT 100 @8 s on `sinr` .945 -> .93).
 */
static uint8_t children_slot(const query *q, const query_run *run, uint8_t was)
{
    uint8_t next = (uint8_t)(run->slot_depth + 1u);
    return q->has_agg && was >= next && was != SCHED_UNROUTED_SLOT &&
                   run->slot_depth != SCHED_UNROUTED_SLOT
               ? (uint8_t)(was + 1u)
               : next;
}

/*
 * The next epoch to work on: the first one after `after` whose work at the
 * node's present slot depth has not begun (schedule.h).
 */
static void plan_epoch(mote_state *st, uint8_t slot, uint32_t after)
{
    const query *q = &st->queries.slot[slot];
    query_run *run = &st->run[slot];
    uint32_t label, now = mote_now(st);
    uint8_t was = run->slot_depth, aggregates = run_aggregates_running(st);
    /* Between epochs is when a better parent may be taken; within one the parent is
     * held while aggregates run, so records go where they are expected
     * (net/routing.h). Tuples carry their epoch and may take any way up. */
    routing_hold_switches(&st->rt, 0);
    routing_hold_switches(&st->rt, aggregates);
    routing_keep_steady(&st->rt, aggregates);
    run->slot_depth = unslotted(st) ? 0u : sched_slot_depth(routing_depth(&st->rt));
    /* A relay that lost its parent keeps its slot while it looks for another: it mostly
     * finds one about as deep, and its children still send in the interval below. In the
     * unrouted slot, at the end of the epoch, it took the next route's slot only once
     * that slot's work was ahead again: a relay at depth 34 skipped four epochs of 8 s
     * for a search of one, its subtree with it (1,000-node grid on `sinr`, seed 1). */
    if (q->has_agg && routing_depth(&st->rt) == ROUTING_DEPTH_NONE && was > SCHED_UNROUTED_SLOT)
        run->slot_depth = was;
    /* An epoch whose work at this depth began a little ago (run_late_ms) is still
     * taken, late: a move to a deeper parent starts the next epoch's work earlier, and
     * the epoch would be skipped -- a reading lost for the sake of a schedule. Its
     * records may miss the parent (counted late there); tuples do not. */
    label = sched_next_label(now, q->epoch_base, run->epoch_ms, run->slot_depth, after + 1u);
    if (label != after + 1u &&
        now - sched_work_start(q->epoch_base, run->epoch_ms, run->slot_depth, label - 1u) <
            run_late_ms(run))
        label--;
    run->label = label;
    run->epoch_start = sched_label_start(q->epoch_base, run->epoch_ms, label);
    schedule_epoch(st, slot, children_slot(q, run, was));
}

static void next_epoch(mote_state *st, uint8_t slot)
{
    plan_epoch(st, slot, st->run[slot].label);
}

/*
 * Group slots for a query: one without GROUP BY; with it as many as GROUPS_MAX
 * and half the free arena allow -- the other half is for the queries that may
 * come: taking all but a sliver left a second GROUP BY query one slot per relay
 * -- and few enough that its records are numbered in a byte (processing.c). A
 * relay holds a slot for every group of its subtree; one without a slot is not
 * lost in the wide layout (processing.h), but it takes a place in the radio
 * queue, which is far dearer than a slot.
 */
static uint8_t group_slots_wanted(mote_state *st, uint8_t slot)
{
    const query *q = &st->queries.slot[slot];
    uint16_t room = (uint16_t)((AGG_ARENA_BYTES - st->arena_used) / 2u);
    uint8_t e, groups = GROUPS_MAX, grouped = 0;
    for (e = 0; e < q->num_exprs; e++)
        if (QUERY_IS_AGG_EXPR(&q->exprs[e]) && q->exprs[e].u.agg.group_field != QUERY_NO_GROUP)
            grouped = 1;
    if (!grouped)
        return 1;
    if (q->num_exprs && groups > 250u / q->num_exprs)
        groups = (uint8_t)(250u / q->num_exprs);
    while (groups > 1 && proc_layout(st, slot, groups) > room)
        groups--;
    return groups;
}

/* Without a base from the query's trailer: the root starts the count (after the
 * start delay), another node at its next boundary (TinyDB 1.x behaviour). */
static void choose_base(mote_state *st, uint8_t slot)
{
    query *q = &st->queries.slot[slot];
    uint32_t now = mote_now(st), epoch_ms = sched_epoch_ms(q->epoch_units);
    if (q->base_known != QUERY_BASE_NONE)
        return;
    if (st->id == MOTE_ROOT_ID) {
        q->epoch_base = sched_start_base(now, epoch_ms, routing_deepest(&st->rt));
        q->base_known = QUERY_BASE_SET;
    } else {
        q->epoch_base = now / epoch_ms + 1u;
        q->base_known = QUERY_BASE_GUESSED;
    }
}

/* Whether a query other than `slot`'s runs. */
static uint8_t run_others(const mote_state *st, uint8_t slot)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (i != slot && st->queries.slot[i].status >= QUERY_RUNNING)
            return 1;
    return 0;
}

uint8_t run_start(mote_state *st, uint8_t slot)
{
    query_run *run = &st->run[slot];
    uint8_t groups = group_slots_wanted(st, slot);
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
    groups_reset(&run->groups, proc_groups(st, slot), groups);
    run->drain_left = 0;
    run->emitted = 0;
    run->label = 0;
    run->epoch = 0;
    st->answered &= (uint8_t)~(1u << slot);
    if (!run_others(st, slot)) /* its children run nothing either: they listen all along */
        st->wave_units = 0;
    choose_base(st, slot);
    run_retime(st, slot);
    observe_query(st->hal, st->queries.slot[slot].qid, 0, QUERY_RUNNING);
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
    st->waiting &= (uint8_t)~(1u << slot);
    observe_query(st->hal, st->queries.slot[slot].qid, run->epoch, QUERY_FREE);
    qtable_free(&st->queries, slot);
}

void run_drain(mote_state *st, uint8_t slot)
{
    st->queries.slot[slot].status = QUERY_DRAINING;
    stops_remember(st, st->queries.slot[slot].qid);
    st->run[slot].drain_left = DRAIN_EPOCHS;
    observe_query(st->hal, st->queries.slot[slot].qid, st->run[slot].epoch, QUERY_DRAINING);
}

void run_retime(mote_state *st, uint8_t slot)
{
    query_run *run = &st->run[slot];
    run->epoch_ms = sched_epoch_ms(st->queries.slot[slot].epoch_units);
    plan_epoch(st, slot, run->label);
    st->gate_open &= (uint8_t)~(1u << slot);
    st->listening &= (uint8_t)~(1u << slot);
    st->waiting &= (uint8_t)~(1u << slot);
}

/* Past the last epoch of a FOR clause, or the one epoch of ONCE. */
static uint8_t past_last_epoch(const query *q, uint32_t label)
{
    if (q->epoch_units == QUERY_EPOCH_ONCE)
        return label > 1u;
    return q->num_epochs && label > q->num_epochs;
}

/*
 * The root floods a new query once; a node that missed every part learns of it by
 * hearing a neighbour's result of it (core/sharing.c) -- and nobody has results if the
 * flood died at the first hop: the root's two broadcasts of a COUNT collided at each of its
 * eleven neighbours (25-node grid on `sinr`, seed 9), and only the root ever ran the
 * query. So the root sends the parts again, as to a neighbour that asked for all of them,
 * at epochs 2, 4, 8, 16... until a child's result of the query comes in. Neighbours that
 * hold the query drop the copies, and a query nobody can answer (no row passes its WHERE)
 * costs one copy in a doubling number of epochs.
 */
static void echo_unanswered(mote_state *st, uint8_t slot)
{
    uint16_t e = st->run[slot].epoch;
    if (st->id == MOTE_ROOT_ID && e >= 2u && !(e & (e - 1u)) && !(st->answered & (1u << slot)))
        share_query(st, slot);
}

/* New epoch: count it, sample. 0 if the query has finished draining (slot freed). */
static uint8_t begin_epoch(mote_state *st, uint8_t slot)
{
    query *q = &st->queries.slot[slot];
    query_run *run = &st->run[slot];
    /* A late joiner of a bounded query may find its epochs over already. */
    if (q->status == QUERY_RUNNING && past_last_epoch(q, run->label))
        run_drain(st, slot);
    if (q->status == QUERY_DRAINING) {
        if (run->drain_left == 0) {
            run_stop(st, slot);
            return 0;
        }
        run->drain_left--;
    }
    proc_emit_abandon(st, slot);
    run->epoch = (uint16_t)run->label; /* begun: the number observers and records carry */
    take_wave(st);
    run->emitted = 0;
    st->stats.epochs++;
    st->gate_open &= (uint8_t)~(1u << slot);
    if (st->child_epochs)
        st->child_epochs--;
    if (q->status == QUERY_RUNNING) {
        proc_sample(st, slot);
        echo_unanswered(st, slot);
    }
    return 1;
}

/* Each phase does its work and schedules the next one. */
static void phase_wake(mote_state *st, uint8_t slot)
{
    query_run *run = &st->run[slot];
    if (!begin_epoch(st, slot))
        return;
    st->listening |= (uint8_t)(1u << slot);
    run->phase = PH_TRANSMIT;
    run->next_at = interval_start(run, run->slot_depth) + jitter(st, slot);
}

static void phase_transmit(mote_state *st, uint8_t slot, uint32_t now)
{
    query *q = &st->queries.slot[slot];
    query_run *run = &st->run[slot];
    uint32_t interval = sched_interval_ms(run->epoch_ms);
    if (run->phase == PH_WAKE_TRANSMIT && !begin_epoch(st, slot))
        return;
    st->listening &= (uint8_t)~(1u << slot);
    st->gate_open |= (uint8_t)(1u << slot);
    st->held.waits = 0; /* a result the parent missed gets another chance in this slot */
    /* The root's records go to the UART, where nothing collides: it takes its
     * children's records through its whole interval and emits at the epoch's end. */
    if (q->has_agg && st->id != MOTE_ROOT_ID)
        proc_emit(st, slot);
    if (q->status == QUERY_RUNNING && past_last_epoch(q, run->label + 1u))
        run_drain(st, slot);
    /* Beacons ride on this wake-up rather than on an alarm of their own. */
    tx_beacon_period(st, now);
    if (st->id == MOTE_ROOT_ID) {
        run->phase = PH_PARENT; /* at the root: the end of its own interval */
        run->next_at = run_epoch_end(run);
        return;
    }
    share_on_transmit(st); /* the parent listens now */
    run->phase = PH_PARENT;
    /* A leaf child of the root at long epochs does not wait for it: the root listens all
     * along, counts no misses (miss_limit) and sends nothing in its interval but a
     * beacon, and the wait, up to two intervals of P / 8, was a share of the epoch: at
     * 327.66 s a leaf of a star was awake 25 s an epoch, all but 0.3 s of it waiting
     * (docs/papers.md, §3.6). A relay waits on: its children's records that come after
     * its own still find it awake. Shorter epochs keep the wait (delivery is measured
     * there). */
    if (routing_parent(&st->rt) == MOTE_ROOT_ID && sched_wave_ms(run->epoch_ms) &&
        !run_may_have_children(st)) {
        run->next_at = now;
        return;
    }
    /* The parent listens through its own interval: results may go until its end.
     * Waiting for it lasts until a packet it starts there has ended. */
    run->next_at = run->slot_depth ? run_tx_until(run) + interval : run_epoch_end(run);
    st->send_until = sched_later(st->send_until, run->next_at);
    run->next_at += SCHED_TX_GUARD_MS;
    st->waiting |= (uint8_t)(1u << slot);
}

/* The root at the end of its interval: emit, and on to the next epoch. */
static void phase_root_emit(mote_state *st, uint8_t slot)
{
    if (st->queries.slot[slot].has_agg)
        proc_emit(st, slot);
    next_epoch(st, slot);
}

static void phase_parent(mote_state *st, uint8_t slot)
{
    st->waiting &= (uint8_t)~(1u << slot);
    next_epoch(st, slot);
}

uint8_t run_begin_early(mote_state *st, uint8_t slot, uint16_t epoch)
{
    query_run *run = &st->run[slot];
    if (epoch != (uint16_t)run->label || run->epoch == epoch)
        return 0;
    if (run->phase == PH_WAKE) { /* as at the wake-up, only sooner */
        phase_wake(st, slot);
        return run->epoch == epoch;
    }
    if (run->phase != PH_WAKE_TRANSMIT || !begin_epoch(st, slot))
        return 0;
    st->listening |= (uint8_t)(1u << slot);
    run->phase = PH_TRANSMIT; /* at the transmit time already drawn */
    return 1;
}

/*
 * At epochs of a beacon period or more the parent beacons in every interval of its own,
 * after its results (mote.c): an aggregate's wait lasts until the beacon, which alone
 * carries the route generation (net/routing.h). Ended by the parent's first result, it never heard
 * one, and generations stopped at the first level that sleeps: a relay that lost its
 * parent waited for a neighbour's newer generation that never came, unrouted, its
 * subtree with it (a 1,000-node grid on `sinr`: 9 epochs of 8 s, 220 nodes behind it).
 */
void run_parent_heard(mote_state *st, uint8_t beacon)
{
    uint8_t i;
    /* Parts of an unfinished or requested query may still come in the parent's interval;
     * and a node with results still to send keeps at it while the parent is active (a
     * parent deaf behind its full queue is heard forwarding as it makes room). */
    if (share_awaiting(st) || st->held.valid || radioq_count(&st->rq))
        return;
    for (i = 0; i < QUERY_SLOTS; i++)
        if ((st->waiting & (1u << i)) && st->queries.slot[i].status >= QUERY_RUNNING &&
            st->run[i].phase == PH_PARENT &&
            (beacon || !st->queries.slot[i].has_agg || st->run[i].epoch_ms < BEACON_PERIOD_MS))
            phase_parent(st, i);
}

/*
 * Whether the parent surely sends in its interval of this query: a result of
 * its own every epoch -- no WHERE to fail, no MIN/MAX a sibling's may suppress.
 */
static uint8_t parent_talks(const mote_state *st, const query *q)
{
    uint8_t e;
    for (e = 0; e < q->num_exprs; e++)
        if (q->exprs[e].kind == QEXPR_SEL || q->exprs[e].kind == QEXPR_STRING_SEL)
            return 0;
    return !proc_snoops(st, q); /* the parent snoops as we do: commands reach every node */
}

/*
 * A parent interval passed unheard: is it a miss, and how many in a row make
 * the parent lost? Where some running query has the parent talk every epoch,
 * only those intervals count, ROUTING_PARENT_MAX_MISSES of them: a congested
 * parent is left soon. Where none has, a parent with no reading that passes a
 * WHERE says nothing at all in its intervals; what it surely sends is a beacon
 * a period, riding on one of them (mote.c): then every interval counts, as
 * many as two beacon periods hold over the running queries. 0: not a miss --
 * nor is any interval of the root, whose results go to its UART.
 */
static uint8_t miss_limit(const mote_state *st, uint8_t slot)
{
    uint32_t windows = 0;
    uint8_t i, talking = 0;
    if (routing_parent(&st->rt) == MOTE_ROOT_ID)
        return 0;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING) {
            talking |= parent_talks(st, &st->queries.slot[i]);
            if (st->run[i].epoch_ms)
                windows += (2u * BEACON_PERIOD_MS + st->run[i].epoch_ms - 1u) / st->run[i].epoch_ms;
        }
    if (talking)
        return parent_talks(st, &st->queries.slot[slot]) ? ROUTING_PARENT_MAX_MISSES : 0u;
    if (windows < ROUTING_PARENT_MAX_MISSES)
        return ROUTING_PARENT_MAX_MISSES;
    return windows > 250u ? 250u : (uint8_t)windows;
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
        else if (run->phase == PH_TRANSMIT || run->phase == PH_WAKE_TRANSMIT)
            phase_transmit(st, slot, now);
        else if (st->id == MOTE_ROOT_ID)
            phase_root_emit(st, slot);
        else {
            /* The parent's interval passed unheard: what routing may count as a miss. */
            uint8_t limit = miss_limit(st, slot);
            if ((st->flags & MOTE_F_RECORD_LOST) && (limit == 0 || limit > RECORD_LOST_MISSES))
                limit = RECORD_LOST_MISSES;
            st->flags &= (uint8_t)~MOTE_F_RECORD_LOST;
            if (limit)
                routing_parent_missed(&st->rt, limit);
            phase_parent(st, slot);
        }
    }
}
