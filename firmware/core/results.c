#include "results.h"

#include "../net/le16.h"
#include "../result/bundle.h"
#include "../result/result.h"
#include "clock.h"
#include "mote_state.h"
#include "processing.h"
#include "querymsg.h"
#include "runs.h"
#include "sharing.h"
#include "stops.h"
#include "timesync.h"
#include "txpath.h"

/*
 * A result of a query this node does not run: a stopped one's straggler gets a
 * DEL (core/stops.h) -- also while the query drains here, the DEL having missed
 * it; an unknown one, from a neighbour running it, makes the node ask for the
 * parts it lacks (core/sharing.h).
 */
static void heard_unknown_result(mote_state *st, uint8_t qid, uint16_t from)
{
    uint8_t slot = qtable_find(&st->queries, qid);
    if (stops_has(st, qid) || (st->id == MOTE_ROOT_ID && slot == QUERY_SLOTS))
        stops_on_straggler(st, qid);
    else
        share_on_result(st, qid, from);
}

static int16_t forward_key(const mote_state *st, const qr_view *v, const uint8_t *qr)
{
    uint8_t slot = qtable_find(&st->queries, v->qid);
    if (v->type == QR_AGG_RECORD)
        return (int16_t)((uint16_t)v->state[0] | (uint16_t)v->state[1] << 8);
    return slot < QUERY_SLOTS && v->type == QR_TUPLE ? qr_tuple_key(qr, &st->queries.slot[slot])
                                                     : 0;
}

/*
 * A child's record joins the state of the epoch it was sampled in, and only
 * while ours for that epoch has not gone out (core/schedule.h): one that comes
 * later, or for another epoch, would count the child in the wrong epoch.
 * Unslotted (runs.c) that is the design: whatever comes joins our next record.
 */
static uint8_t record_is_late(const mote_state *st, uint8_t slot, const qr_view *v)
{
    return !(st->flags & MOTE_F_UNSLOTTED) &&
           (st->run[slot].emitted || v->epoch != st->run[slot].epoch);
}

/*
 * A late record of an aggregate that can spill (core/processing.h) is not lost
 * either: it goes on as it is, and whoever still has its epoch open merges it --
 * at the latest the gateway, which holds an epoch's row until the next epoch's
 * results come. One from further back would find that row closed. Passing it on
 * cannot count it twice: a resend of a record we took is a duplicate however many
 * packets came between (net/routing.h).
 */
static uint8_t late_record_passes(const mote_state *st, uint8_t slot, const qr_view *v)
{
    uint16_t behind = (uint16_t)(st->run[slot].epoch - v->epoch);
    return proc_record_spills(st, slot, v) && behind <= 1u;
}

/* A record that is not merged here but forwarded: late, or without a group slot. */
static uint8_t record_goes_on(mote_state *st, uint8_t slot, const qr_view *v)
{
    return record_is_late(st, slot, v) ? late_record_passes(st, slot, v)
                                       : proc_record_passes_on(st, slot, v);
}

/* A record of an aggregate query this node runs: one it may merge into its own. */
static uint8_t record_of_ours(const mote_state *st, uint8_t slot, const qr_view *v)
{
    return slot < QUERY_SLOTS && st->queries.slot[slot].has_agg && v->type == QR_AGG_RECORD;
}

/* Whether the node has room to take a result it would forward. A record merges into
 * our own and needs none -- unless it goes on (record_goes_on) --, nor does a stopped
 * query's, which is taken and dropped: refused, its straggler would only hear of the
 * stop once our queue drained. */
static uint8_t merges_here(mote_state *st, uint8_t slot, const qr_view *v)
{
    return record_of_ours(st, slot, v) && !record_goes_on(st, slot, v);
}

static uint8_t room_for(mote_state *st, uint8_t slot, const qr_view *v)
{
    return merges_here(st, slot, v) || stops_has(st, v->qid) || st->id == MOTE_ROOT_ID || !HAL_SELECTIVE_ACKS(st->hal) || tx_takes_forwards(st);
}

/* Our beacon, now: the gate opens for two packet times, while the child listens for our
 * ack and on, or after its own beacon (the straggler's DEL goes so too, core/stops.c). */
static void answer_stale_child(mote_state *st)
{
    st->beacon_due = BEACON_NOW;
    st->ctl_until = sched_later(st->ctl_until, mote_now(st) + 2u * SCHED_TX_GUARD_MS);
}

/*
 * The depth a child's record is checked against for a cycle: ours -- unless our depth
 * grew since this epoch's slot was fixed (the parent moved deeper, and we follow at
 * once) and the record comes from one level below that slot, where our schedule
 * listens for it. Such a child merely has not heard of the move yet. Refused as a
 * cycle, its subtree's count was lost for the epoch; in the next, the child sends
 * after our record went. 1,000-node grid on `sinr`, median of the seeds' median
 * COUNT, seeds 1-30: 878 -> 900.2.
 */
static uint8_t scheduled_depth(const mote_state *st, const mhop_header *mh, uint8_t slot)
{
    uint8_t depth = routing_depth(&st->rt);
    /* (Unrouted, the node refuses before the depth matters: routing_should_forward.) */
    if (slot < QUERY_SLOTS && st->run[slot].slot_depth < depth &&
        mh->hopcount == st->run[slot].slot_depth + 1u)
        return st->run[slot].slot_depth;
    return depth;
}

/*
 * Whether a child's frame, with room already found for it, is taken: 1 to take it,
 * 0 to refuse it unacknowledged, and *ack set to what the sender is told. A
 * duplicate is acknowledged and not taken again. A child still routing through us,
 * awake right after its send, gets our beacon, which tells it to look elsewhere --
 * depth 0xFF before a stale depth of its subtree lures us in; our depth when it is
 * no deeper than we are, which it missed as we moved (or a loop closed through it).
 * What it sent is refused, not taken and lost: it keeps it for its next parent.
 * A child whose `record` comes from a depth more than one below ours missed our move
 * closer to the root, and its records come an interval or more before we listen (runs.c,
 * children_slot): it is taken, and gets our beacon, which it hears awake after its send.
 * Tuples carry their epoch and may come at any time: answering each of a stale relay's
 * cost SELECT 100 @8 s on `sinr` .945 -> .921 in beacons.
 */
static uint8_t admit_from_child(mote_state *st, const mhop_header *mh, uint8_t *ack,
                                uint8_t slot, uint8_t record)
{
    routing_verdict verdict = routing_should_forward(
        &st->rt, mh, record ? scheduled_depth(st, mh, slot) : routing_depth(&st->rt));
    *ack = verdict == ROUTING_DROP_DUP;
    if (verdict == ROUTING_DROP_NO_ROUTE || verdict == ROUTING_DROP_CYCLE) {
        if (verdict == ROUTING_DROP_CYCLE || routing_searching(&st->rt))
            answer_stale_child(st);
        return 0;
    }
    if (verdict == ROUTING_DROP_DUP)
        return 0;
    if (record && st->id != MOTE_ROOT_ID && mh->hopcount != MHOP_HOPCOUNT_INVALID &&
        mh->hopcount > routing_depth(&st->rt) + 1u)
        answer_stale_child(st);
    *ack = 1;
    return 1;
}

static void take_result(mote_state *st, const mhop_header *mh, const qr_view *v,
                        const uint8_t *qr, uint8_t slot);

static uint8_t on_result_for_me(mote_state *st, const mhop_header *mh, const qr_view *v,
                                const uint8_t *qr)
{
    uint8_t slot = run_slot_of(st, v->qid), ack;
    st->child_epochs = CHILD_MEMORY_EPOCHS;
    /* No room to pass it on: refused unacknowledged, the sender keeps it and sends it
     * again when it hears us make room; taking it now would also mark that resend a
     * duplicate. */
    if (!room_for(st, slot, v))
        return 0;
    if (admit_from_child(st, mh, &ack, slot, v->type == QR_AGG_RECORD))
        take_result(st, mh, v, qr, slot);
    return ack;
}

static void take_tuple(mote_state *st, const mhop_header *mh, const uint8_t *qr)
{
    qr_view v;
    qr_decode(&v, qr, QR_LEN);
    take_result(st, mh, &v, qr, run_slot_of(st, v.qid));
}

/* The queue place a bundle's item needs here: none for a stopped query's or a record
 * that merges into ours (room_for), else one. */
static uint8_t item_place(mote_state *st, const uint8_t *qr)
{
    qr_view v;
    if (stops_has(st, qr[QR_OFF_QID]))
        return 0;
    if (qr[QR_OFF_TYPE] != QR_AGG_RECORD || !qr_decode(&v, qr, QR_LEN))
        return 1;
    return !merges_here(st, run_slot_of(st, v.qid), &v);
}

/*
 * Queue places a (checked) bundle's results need here (item_place); for tuples, one
 * where they pack (core/txpath.h) and every later item is short -- those the newest
 * entry does not take start one new entry, and all fit in it, as they did in the
 * frame --; else one each.
 */
static uint8_t bundle_places(mote_state *st, const uint8_t *body, uint8_t len)
{
    uint8_t first[QR_LEN], qr[QR_LEN], used, places, whole = 0;
    uint16_t origin;
    used = bundle_get(body, len, first, &origin, 0);
    places = item_place(st, first);
    for (body += used, len = (uint8_t)(len - used); len; body += used, len = (uint8_t)(len - used)) {
        whole |= !(body[BUNDLE_ITEM_HEADER - 1u] & BUNDLE_SHORT);
        used = bundle_get(body, len, qr, &origin, first);
        places = (uint8_t)(places + item_place(st, qr));
    }
    return places && !whole && tx_packs(st) ? 1u : places;
}

/* A bundle of tuples or records (result/bundle.h): room for all, or none is taken. */
static uint8_t on_bundle_for_me(mote_state *st, const mhop_header *mh, const uint8_t *body,
                                uint8_t len)
{
    uint8_t count = bundle_count(body, len), used, ack, first[QR_LEN], qr[QR_LEN];
    mhop_header item = *mh;
    st->child_epochs = CHILD_MEMORY_EPOCHS;
    if (count == 0)
        return 1; /* malformed: nothing to resend */
    if (st->id != MOTE_ROOT_ID && HAL_SELECTIVE_ACKS(st->hal) &&
        !tx_room_for(st, bundle_places(st, body, len)))
        return 0;
    if (!admit_from_child(st, mh, &ack, run_slot_of(st, body[BUNDLE_ITEM_HEADER + QR_OFF_QID]),
                          body[BUNDLE_ITEM_HEADER + QR_OFF_TYPE] == QR_AGG_RECORD))
        return ack;
    /* Checked whole by bundle_count: every item reads. Short items take what they
     * leave out from the first (result/bundle.h). */
    used = bundle_get(body, len, first, &item.originaddr, 0);
    take_tuple(st, &item, first);
    for (body += used, len = (uint8_t)(len - used); len; body += used, len = (uint8_t)(len - used)) {
        used = bundle_get(body, len, qr, &item.originaddr, first);
        take_tuple(st, &item, qr);
    }
    return 1;
}

/* A result admitted from a child: merged into our own, forwarded, or dropped. */

static void take_result(mote_state *st, const mhop_header *mh, const qr_view *v,
                        const uint8_t *qr, uint8_t slot)
{
    if (v->type == QR_TUPLE) /* more may follow: the activity tail */
        st->hold_until = mote_now(st) + ACTIVITY_HOLD_MS;
    if (slot < QUERY_SLOTS)
        st->answered |= (uint8_t)(1u << slot);
    if (slot == QUERY_SLOTS) {
        heard_unknown_result(st, v->qid, mh->sourceaddr);
        /* A stopped query's: nobody assembles it any more, and the airtime up to the
         * root is what the queries that run need. Taken (acked): the sender is told
         * to stop, not to resend. */
        if (stops_has(st, v->qid))
            return;
    }
    /* Draining here after a DEL (records of the last epochs still merge): a child's
     * tuple says it still samples, having missed the DEL; it is told at once. Relays
     * forwarded such tuples for as long as their queues drained, while the child ran
     * on (lossy 25-node grid at 1 s, seed 2: two nodes five epochs past the stop). */
    else if (v->type == QR_TUPLE && stops_has(st, v->qid))
        stops_on_straggler(st, v->qid);
    else if (v->type == QR_TUPLE && mh->originaddr == mh->sourceaddr &&
             st->queries.slot[slot].status == QUERY_RUNNING &&
             (int16_t)(v->epoch - st->run[slot].epoch) > 2)
        qmsg_tell_rate(st, slot);
    if (record_of_ours(st, slot, v)) {
        if (!record_is_late(st, slot, v) || run_begin_early(st, slot, v->epoch)) {
            /* TAG: folded into our own record, not forwarded -- unless its group has
             * no slot here, when it goes on as it is (core/processing.h) */
            if (proc_merge(st, slot, v))
                return;
        } else if (!late_record_passes(st, slot, v)) {
            st->stats.records_late++;
            return;
        }
    }
    if (tx_result(st, qr, mh->originaddr, forward_key(st, v, qr)))
        st->stats.results_forwarded++;
}

/* A result for another node: its time keeps our clock if it is our parent's own (or
 * the root's) and `stamped` on the air, and a sibling's MIN/MAX record is snooped. */
static void on_result_overheard(mote_state *st, const tos_header *tos, const mhop_header *mh,
                                const qr_view *v, uint8_t stamped)
{
    uint16_t parent = routing_parent(&st->rt);
    uint8_t slot = run_slot_of(st, v->qid);
    uint8_t from_parent = mh->sourceaddr == parent && mh->originaddr == mh->sourceaddr;
    if (stamped && (from_parent || mh->sourceaddr == MOTE_ROOT_ID)) {
        timesync_adopt(st, v->time_ms);
        slot = run_slot_of(st, v->qid);
    }
    if (slot == QUERY_SLOTS)
        heard_unknown_result(st, v->qid, mh->sourceaddr);
    if (slot < QUERY_SLOTS && parent != ROUTING_PARENT_NONE && tos->addr == parent &&
        mh->sourceaddr != st->id)
        proc_snoop(st, slot, v);
}

/* A bundle for another node. Of tuples, only the query matters (one this node may
 * lack). Records are overheard as in AM 240 frames, each snooped; the first item's
 * time alone is stamped on the air (result/bundle.h). */
static void bundle_overheard(mote_state *st, const tos_header *tos, const mhop_header *mh,
                             const uint8_t *body, uint8_t len)
{
    uint8_t qr[QR_LEN], used, stamped = 1;
    mhop_header item = *mh;
    qr_view v;
    used = bundle_get(body, len, qr, &item.originaddr, 0);
    if (used && qr[QR_OFF_TYPE] != QR_AGG_RECORD) {
        if (run_slot_of(st, qr[QR_OFF_QID]) == QUERY_SLOTS)
            heard_unknown_result(st, qr[QR_OFF_QID], mh->sourceaddr);
        return;
    }
    while (used && qr_decode(&v, qr, QR_LEN)) {
        on_result_overheard(st, tos, &item, &v, stamped);
        stamped = 0;
        body += used;
        len = (uint8_t)(len - used);
        used = len ? bundle_get(body, len, qr, &item.originaddr, 0) : 0;
    }
}

/*
 * A new depth is news for the neighbours (a node just routed gives its own
 * neighbours a route): beacon soon rather than at the end of the period, so a
 * tree of depth d forms in d short delays, not d beacon periods. With queries
 * running the beacon rides on the next transmit interval as usual.
 */
static void route_changed(mote_state *st)
{
    uint32_t soon = mote_now(st) + mote_random_below(st, BEACON_TRIGGER_SPREAD_MS);
    if (run_any(st)) {
        st->beacon_due = BEACON_NOW;
    } else if (st->beacon_due != BEACON_NOW) {
        /* Its own timer: the periodic one also ticks the routing table, and ticking at
         * every announcement would age a parent out while it is heard as often as ever.
         * A fast boot beacon due later is brought forward. */
        if (st->beacon_due != BEACON_SOON || !sched_due(st->beacon_soon_at, soon))
            st->beacon_soon_at = soon;
        st->beacon_due = BEACON_SOON;
    }
}

uint8_t results_receive(mote_state *st, const tos_header *tos, const uint8_t *data)
{
    mhop_header mh;
    qr_view v;
    const uint8_t *body = data + MHOP_HEADER_LEN;
    uint8_t body_len, depth, deepest, for_me;
    if (tos->length < MHOP_HEADER_LEN)
        return 1;
    body_len = (uint8_t)(tos->length - MHOP_HEADER_LEN);
    mhop_header_unpack(&mh, data);
    depth = routing_depth(&st->rt);
    deepest = routing_deepest(&st->rt);
    /* A child far behind on route generations: it stays awake a moment after its beacon
     * (core/txpath.c, tx_done) to hear ours. */
    if (routing_on_packet_snr(&st->rt, tos, &mh, body, body_len, HAL_RX_SNR(st->hal)))
        answer_stale_child(st);
    /* A beacon naming us as parent: a child, even one our full neighbour table forgot. */
    if (tos->type == AM_ROUTE_BEACON && body_len >= 2 && le16_get(body) == st->id)
        st->child_epochs = CHILD_MEMORY_EPOCHS;
    if (routing_depth(&st->rt) != depth || routing_deepest(&st->rt) > deepest)
        route_changed(st);
    if (mh.sourceaddr == routing_parent(&st->rt) && st->id != MOTE_ROOT_ID) {
        tx_parent_heard(st);
        run_parent_heard(st, tos->type == AM_ROUTE_BEACON);
    }
    if (!am_is_result(tos->type))
        return 1;
    for_me = tos->addr == st->id || (st->id == MOTE_ROOT_ID && tos->addr == TOS_BCAST_ADDR &&
                                     mh.hopcount == MHOP_HOPCOUNT_INVALID);
    if (tos->type == AM_BUNDLE) {
        if (for_me)
            return on_bundle_for_me(st, &mh, body, body_len);
        bundle_overheard(st, tos, &mh, body, body_len);
        return 1;
    }
    if (!qr_decode(&v, body, body_len))
        return 1;
    if (for_me)
        return on_result_for_me(st, &mh, &v, body);
    on_result_overheard(st, tos, &mh, &v, 1);
    return 1;
}
