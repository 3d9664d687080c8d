#include "txpath.h"

#include <string.h>

#include "../net/le16.h"
#include "../net/serial.h"
#include "../query/assembly.h"
#include "../result/bundle.h"
#include "../result/result.h"
#include "clock.h"
#include "compiler.h"
#include "mote_state.h"
#include "running.h"
#include "schedule.h"

/* ctl_packet.len: the frame's length, and whether it was handed back once already
 * (requeue_abandoned). */
#define CTL_LEN_MASK 0x7Fu
#define CTL_RETRIED 0x80u

static void pack_tos(const mote_state *st, uint8_t *out, uint16_t addr, uint8_t am, uint8_t len)
{
    tos_header h;
    h.addr = addr;
    h.type = am;
    h.group = st->am_group;
    h.length = len;
    tos_header_pack(&h, out);
}

void tx_control(mote_state *st, uint16_t addr, uint8_t am, const uint8_t *data, uint8_t len)
{
    ctl_packet *p;
    uint8_t i;
    if (st->ctl_count == CTLQ_LEN || len > TOS_DATA_LENGTH) {
        st->stats.ctl_dropped++;
        return;
    }
    p = &st->ctlq[(st->ctl_head + st->ctl_count) % CTLQ_LEN];
    pack_tos(st, p->bytes, addr, am, len);
    for (i = 0; i < len; i++)
        p->bytes[TOS_HEADER_LEN + i] = data[i];
    p->len = (uint8_t)(TOS_HEADER_LEN + len);
    st->ctl_count++;
    tx_pump(st);
}

uint32_t tx_request_after(const mote_state *st) { return st->request_after; }

void tx_pace_requests(mote_state *st, uint32_t until) { st->request_after = until; }

static void uart_send_packet(mote_state *st, const uint8_t *pkt, uint8_t len)
{
    uint8_t frame[SERIAL_TX_MAX];
    uint16_t n = serial_frame_packet(pkt, len, frame, sizeof frame);
    if (n)
        st->hal->uart_send(st->hal->ctx, frame, n);
}

void tx_uart(mote_state *st, uint8_t am, const uint8_t *data, uint8_t len)
{
    uint8_t pkt[TOS_MSG_MAX];
    uint8_t i;
    if (len > TOS_DATA_LENGTH)
        return;
    pack_tos(st, pkt, TOS_UART_ADDR, am, len);
    for (i = 0; i < len; i++)
        pkt[TOS_HEADER_LEN + i] = data[i];
    uart_send_packet(st, pkt, (uint8_t)(TOS_HEADER_LEN + len));
}

/*
 * Stamp the sender's logical time into a 5-byte timeSyncData field (§5.1, §7.1):
 * low byte of time.high32 (always 0 for a 32-bit clock), then time.low32. Done
 * when the packet goes on the air, not when it is queued, as TinyDB does at the
 * start symbol: receivers adopt it verbatim.
 */
static void stamp_time(const mote_state *st, uint8_t *field)
{
    uint32_t now = mote_now(st);
    field[0] = 0;
    le16_put(field + 1, (uint16_t)(now & 0xFFFFu));
    le16_put(field + 3, (uint16_t)(now >> 16));
}

/* Where a frame carries a timeSyncData field, NULL if it has none: query parts and
 * results do (§5.1, §7.1). */
static uint8_t *time_field(uint8_t *pkt, uint8_t len)
{
    tos_header h;
    uint8_t at;
    if (len < TOS_HEADER_LEN)
        return 0;
    tos_header_unpack(&h, pkt);
    if (h.type == AM_QUERY)
        at = TOS_HEADER_LEN + QMSG_TIME;
    else if (h.type == AM_DATA)
        at = TOS_HEADER_LEN + MHOP_HEADER_LEN + QR_OFF_TIME;
    else if (h.type == AM_BUNDLE && len > TOS_HEADER_LEN + MHOP_HEADER_LEN + BUNDLE_ITEM_HEADER +
                                               QR_OFF_TYPE &&
             pkt[TOS_HEADER_LEN + MHOP_HEADER_LEN + BUNDLE_ITEM_HEADER + QR_OFF_TYPE] ==
                 QR_AGG_RECORD)
        at = TOS_HEADER_LEN + MHOP_HEADER_LEN + BUNDLE_ITEM_HEADER + QR_OFF_TIME; /* bundle.h */
    else
        return 0;
    return (uint32_t)at + 5u <= len ? pkt + at : 0;
}

void tx_frame_start(mote_state *st, uint8_t *pkt, uint8_t len)
{
    uint8_t *field = time_field(pkt, len);
    if (field)
        stamp_time(st, field);
}

/*
 * The TOS and multihop headers before `body_len` bytes of a result frame from `origin`
 * (AM_DATA or AM_BUNDLE): to the parent, or from the root to the UART. Returns the
 * frame's length.
 */
static uint8_t pack_result_headers(mote_state *st, uint8_t *pkt, uint8_t am, uint8_t body_len,
                                   uint16_t origin)
{
    mhop_header mh;
    uint16_t dest = routing_fill_header(&st->rt, &mh, origin);
    if (st->id == MOTE_ROOT_ID)
        dest = TOS_UART_ADDR;
    pack_tos(st, pkt, dest, am, (uint8_t)(MHOP_HEADER_LEN + body_len));
    mhop_header_pack(&mh, pkt + TOS_HEADER_LEN);
    return (uint8_t)(TOS_HEADER_LEN + MHOP_HEADER_LEN + body_len);
}

/* A QueryResult from `origin` as an AM 240 frame, stamped with our time. */
static uint8_t build_result_packet(mote_state *st, uint8_t *pkt, const uint8_t *payload,
                                   uint8_t len, uint16_t origin)
{
    uint8_t i;
    for (i = 0; i < len; i++)
        pkt[TOS_HEADER_LEN + MHOP_HEADER_LEN + i] = payload[i];
    stamp_time(st, pkt + TOS_HEADER_LEN + MHOP_HEADER_LEN + QR_OFF_TIME);
    return pack_result_headers(st, pkt, AM_DATA, len, origin);
}

/* The held tuple and those bundled with it, as one AM_BUNDLE frame (result/bundle.h). */
static uint8_t build_bundle_packet(mote_state *st, uint8_t *pkt)
{
    uint8_t *body = pkt + TOS_HEADER_LEN + MHOP_HEADER_LEN;
    uint8_t n = bundle_put(body, MHOP_PAYLOAD_MAX, st->held.payload, st->held.origin, 0), i;
    for (i = 0; i < st->held.more_len; i++)
        body[n + i] = st->held.more[i];
    return pack_result_headers(st, pkt, AM_BUNDLE, (uint8_t)(n + st->held.more_len),
                               st->held.origin);
}

static void make_entry(radioq_entry *e, const uint8_t *qr, uint16_t origin, int16_t value)
{
    uint8_t i;
    e->origin = origin;
    e->epoch = le16_get(qr + QR_OFF_EPOCH);
    e->value = value;
    e->score = 0;
    e->qid = qr[QR_OFF_QID];
    e->count = 1;
    e->len = QR_LEN;
    e->urgent = qr[QR_OFF_TYPE] == QR_AGG_RECORD;
    e->packed = 0;
    for (i = 0; i < QR_LEN; i++)
        e->payload[i] = qr[i];
}

uint8_t tx_packs(const mote_state *st)
{
    return radioq_policy_of(&st->rq) == RADIOQ_NAIVE && routing_parent_bundles(&st->rt);
}

/*
 * A tuple joins the newest queued entry as one more item of a bundle body
 * (result/bundle.h) if it fits: an entry then holds four tuples of `nodeid, light`,
 * not one. Queue places, one per tuple, were what the relays of big grids ran out
 * of: they refused their children's bundles, which waited and collided again. Only
 * under NAIVE -- WINAVG and DELTA merge, score and evict one result at a time -- and
 * for a parent that takes bundles, as the entry leaves as one.
 */
static uint8_t pack_tuple(mote_state *st, const uint8_t *qr, uint16_t origin)
{
    radioq_entry *last = radioq_newest(&st->rq);
    uint8_t first[QR_LEN], put;
    uint16_t from;
    if (!last || last->urgent || qr[QR_OFF_TYPE] != QR_TUPLE || !tx_packs(st))
        return 0;
    if (last->packed) {
        bundle_get(last->payload, last->len, first, &from, 0);
    } else { /* a bundle body of one item first */
        memcpy(first, last->payload, QR_LEN);
        put = bundle_put(last->payload, RADIOQ_PAYLOAD_MAX, first, last->origin, 0);
        if (put == 0)
            return 0;
        last->len = put;
        last->packed = 1;
    }
    put = bundle_put(last->payload + last->len, (uint8_t)(RADIOQ_PAYLOAD_MAX - last->len), qr,
                     origin, first);
    last->len = (uint8_t)(last->len + put);
    last->packed = (uint8_t)(last->packed + (put != 0));
    return put != 0;
}

/* A result into the queue: packed with the newest entry's if it can be, else its own. */
static uint8_t queue_result(mote_state *st, const uint8_t *qr, uint16_t origin, int16_t value)
{
    radioq_entry e;
    if (pack_tuple(st, qr, origin))
        return 1;
    make_entry(&e, qr, origin, value);
    return radioq_push(&st->rq, &e);
}

/* A tuple back into the result queue, as tx_result queued it. */
static uint8_t requeue(mote_state *st, const uint8_t *qr, uint16_t origin)
{
    uint8_t slot = qtable_find(&st->queries, qr[QR_OFF_QID]);
    return queue_result(st, qr, origin,
                        slot < QUERY_SLOTS ? qr_tuple_key(qr, &st->queries.slot[slot]) : 0);
}

/* The tuples bundled with the held one go back to the queue (the policy decides what
 * a full one keeps): the held tuple is to go alone, or back too. */
static void unbundle(mote_state *st)
{
    uint8_t qr[QR_LEN], at = 0, used;
    uint16_t origin;
    while (at < st->held.more_len) {
        used = bundle_get(st->held.more + at, (uint8_t)(st->held.more_len - at), qr, &origin,
                          st->held.payload);
        if (used == 0)
            break;
        requeue(st, qr, origin);
        at = (uint8_t)(at + used);
    }
    st->held.more_len = 0;
    st->held.more_count = 0;
}

/*
 * A record must reach the parent within the parent's interval; a tuple can wait.
 * A tuple held for a parent that has not taken it yet (busy, without room) goes
 * back to the queue so the record goes first. It keeps no seqno there: if the
 * parent did take an earlier send, the resend is a duplicate the gateway drops.
 */
static void record_first(mote_state *st)
{
    if (!st->held.valid || st->radio_busy || st->held.payload[QR_OFF_TYPE] != QR_TUPLE ||
        radioq_count(&st->rq) + st->held.more_count >= radioq_len(&st->rq))
        return;
    unbundle(st);
    if (!requeue(st, st->held.payload, st->held.origin))
        return;
    st->held.valid = 0;
    st->held.waits = 0;
    st->retry_pending = 0;
}

static uint8_t record_queued(const mote_state *st)
{
    const radioq_entry *next = radioq_peek(&st->rq);
    return next && next->urgent;
}

uint8_t tx_queue_result(mote_state *st, const uint8_t *qr, uint16_t origin, int16_t value)
{
    if (st->id == MOTE_ROOT_ID) {
        uint8_t pkt[TOS_MSG_MAX];
        uint8_t n = build_result_packet(st, pkt, qr, QR_LEN, origin);
        uart_send_packet(st, pkt, n);
        return 1;
    }
    if (!queue_result(st, qr, origin, value))
        return 0;
    if (qr[QR_OFF_TYPE] == QR_AGG_RECORD)
        record_first(st);
    return 1;
}

uint8_t tx_result(mote_state *st, const uint8_t *qr, uint16_t origin, int16_t value)
{
    if (!tx_queue_result(st, qr, origin, value))
        return 0;
    tx_pump(st);
    return 1;
}

/* Out of line: inlined in its two callers it took 32 B more flash. */
MOTE_NOINLINE uint8_t tx_beacon_period(mote_state *st, uint32_t now)
{
    if (!sched_due(st->next_beacon_at, now))
        return 0;
    routing_tick(&st->rt);
    st->beacon_due = BEACON_NOW;
    st->next_beacon_at = now + BEACON_PERIOD_MS;
    return 1;
}

uint8_t tx_gate(const mote_state *st)
{
    uint8_t i;
    uint32_t now;
    /* A node looking for a route is awake anyway; its poison beacon must reach the
     * children that still send to it (mote.c), whenever they do. One missing a query's
     * parts beside a tuple query asks a parent that listens all along (running.h). */
    if (!run_any(st) || routing_searching(&st->rt) || run_asks_at_once(st))
        return 1;
    now = mote_now(st);
    /* The children that heard our last query part are still listening. */
    if ((int32_t)(st->ctl_until - now) > 0)
        return 1;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING && (st->gate_open & (1u << i)) &&
            (int32_t)(run_tx_until(&st->run[i]) - now) > 0)
            return 1;
    return 0;
}

static uint8_t is_downward(const ctl_packet *p)
{
    return p->bytes[2] == AM_QUERY || p->bytes[2] == AM_COMMAND;
}

static MOTE_NOINLINE uint8_t is_del(const ctl_packet *p)
{
    return p->bytes[2] == AM_QUERY && p->bytes[TOS_HEADER_LEN + QMSG_MSG_TYPE] == QMSG_DEL;
}

uint8_t tx_down_waiting(const mote_state *st)
{
    return st->ctl_count && is_downward(&st->ctlq[st->ctl_head]);
}

uint8_t tx_down_gate(const mote_state *st, uint8_t is_del)
{
    uint8_t depth = routing_depth(&st->rt);
    uint32_t now;
    /* In a long wave (core/schedule.h) a DEL goes at once too: the relays below listen
     * all along and pass it on the same way, and the sleeping children hear its echoes
     * in the wave (core/stops.c). Held for the slot, a relay that heard it late -- its
     * parent's slot lost in the crowd of a whole level, a neighbour's copy after its own
     * slot -- left its subtree running half an epoch more (sinr 100-node grid at 8 s). */
    if ((!run_any(st) && !is_del) || (is_del && run_send_wave(st)) ||
        depth == ROUTING_DEPTH_NONE)
        return 1; /* nobody sleeps / nobody below follows our slots */
    now = mote_now(st);
    if ((int32_t)(st->ctl_until - now) > 0)
        return 1;
    return tx_in_down_slot(st, now);
}

MOTE_NOINLINE uint8_t tx_in_down_slot(const mote_state *st, uint32_t now)
{
    uint8_t depth = routing_depth(&st->rt);
    return depth != ROUTING_DEPTH_NONE &&
           run_wave_since(st, now, depth) < SCHED_CTL_SLOT_MS;
}

uint8_t tx_results_gate(const mote_state *st, uint32_t now)
{
    /* Without a parent a result would go out as a broadcast nobody forwards (TinyDB's
     * way): it waits for the next parent instead, as long as the queue holds. */
    if (st->id != MOTE_ROOT_ID && routing_parent(&st->rt) == ROUTING_PARENT_NONE)
        return 0;
    /* Nobody keeps a schedule / the root always listens / relays of tuples do. */
    if (!run_any(st) || routing_parent(&st->rt) == MOTE_ROOT_ID || run_tuples_running(st))
        return 1;
    /* Set at the transmit time, extended by every sign of the parent being awake --
     * which may carry a backlog across an epoch boundary. */
    return (int32_t)(st->send_until - now) > 0;
}

uint8_t tx_results_pending(const mote_state *st)
{
    return (st->held.valid && !st->held.waits) || radioq_count(&st->rq) != 0;
}

/*
 * Whether the next result is a tuple while an aggregate's children send us their
 * records (its children's interval). Such a tuple waits: sent then, it and the
 * tuples it draws from other relays drown the records that have only that interval,
 * where the tuple has the epoch. 25-node grid, a 4 s COUNT beside a 4 s SELECT, seeds
 * 1-10 on sinr: COUNT exact in .635 -> .910 of the epochs, the SELECT's yield 1.000 ->
 * .999.
 */
static uint8_t tuple_would_drown_records(const mote_state *st)
{
    return (st->listening & run_kind_slots(st, 1)) &&
           (st->held.valid ? st->held.payload[QR_OFF_TYPE] == QR_TUPLE : !record_queued(st));
}

uint8_t tx_results_may_go(const mote_state *st, uint32_t now)
{
    /* Results wait behind control packets that go in the node's interval: a child
     * stops listening for its parent on the parent's first result, so a result first
     * would leave the children asleep when the packet follows (core/schedule.h).
     * Downward control has its own slot and holds nothing up. */
    return tx_results_pending(st) && (!st->ctl_count || tx_down_waiting(st)) &&
           tx_results_gate(st, now) && !tuple_would_drown_records(st);
}

uint8_t tx_takes_forwards(const mote_state *st)
{
    return tx_room_for(st, 1);
}

uint8_t tx_room_for(const mote_state *st, uint8_t results)
{
    uint8_t len = radioq_len(&st->rq), keep = 0, i;
    if (results == 0)
        return 1;
    /* A place for each query's own result of the next epoch, tuple or record (at least
     * one). A query still being assembled may be one: its places are made while it is,
     * before it starts. */
    for (i = 0; i < QUERY_SLOTS; i++) {
        const query *q = &st->queries.slot[i];
        if (q->status == QUERY_ASSEMBLING || q->status == QUERY_RUNNING)
            keep++;
    }
    if (keep == 0)
        keep = 1;
    if (keep >= len)
        keep = (uint8_t)(len - 1u);
    return radioq_count(&st->rq) + keep + results <= len;
}

void tx_parent_heard(mote_state *st)
{
    uint32_t now = mote_now(st);
    st->send_until = sched_later(st->send_until, now + PARENT_AWAKE_MS);
    if (!st->held.waits || st->radio_busy)
        return;
    /* It listens now: resend soon -- after a random pause, since every sibling that
     * waits for the same parent heard it too, and the parent may have room for one. */
    st->held.waits = 0;
    st->held.prompted = 1;
    st->retry_pending = 1;
    st->retry_at = now + mote_random_below(st, SCHED_TX_GUARD_MS);
}

static uint8_t radio_send(mote_state *st, const uint8_t *pkt, uint8_t len)
{
    if (!st->hal->radio_send(st->hal->ctx, pkt, len)) {
        st->retry_pending = 1;
        st->retry_at = mote_now(st) + SEND_RETRY_MS;
        return 0;
    }
    st->radio_busy = 1;
    return 1;
}

/* Whether queued entry `e` may join the held result's bundle: a tuple with a tuple;
 * with a record, a record of its query and epoch, which meets the same interval. */
static uint8_t joins_held(const mote_state *st, const radioq_entry *e)
{
    const uint8_t *held = st->held.payload;
    if (e->packed || e->urgent != (held[QR_OFF_TYPE] == QR_AGG_RECORD))
        return 0;
    return !e->urgent || (e->payload[QR_OFF_QID] == held[QR_OFF_QID] &&
                          le16_get(e->payload + QR_OFF_EPOCH) == le16_get(held + QR_OFF_EPOCH));
}

/*
 * Bundle the queued results that fit with the held one (result/bundle.h): one
 * frame, one backoff, one ack for them all. Records go first, urgent, and only
 * with records of their epoch: a tuple behind one waits anyway.
 */
static void gather(mote_state *st)
{
    const radioq_entry *next;
    radioq_entry e;
    uint8_t first = bundle_item_size(st->held.payload, 0), put;
    if (first == 0 || st->id == MOTE_ROOT_ID || !routing_parent_bundles(&st->rt))
        return;
    while ((next = radioq_peek(&st->rq)) != 0 && joins_held(st, next)) {
        uint8_t size = bundle_item_size(next->payload, st->held.payload);
        if (size == 0 || (unsigned)first + st->held.more_len + size > MHOP_PAYLOAD_MAX ||
            (unsigned)st->held.more_len + size > BUNDLE_MORE_MAX)
            return;
        radioq_pop(&st->rq, &e);
        put = bundle_put(st->held.more + st->held.more_len, size, e.payload, e.origin,
                         st->held.payload);
        st->held.more_len = (uint8_t)(st->held.more_len + put);
        st->held.more_count++;
    }
}

/* Move the next queued result into `held`; a packed entry's first item becomes the
 * held result, the others its bundle. */
static uint8_t take_next(mote_state *st)
{
    radioq_entry e;
    uint8_t used;
    if (!radioq_pop(&st->rq, &e))
        return 0;
    /* Entries are whole QueryResults (make_entry) or bundle bodies (pack_tuple). */
    if (e.packed) {
        used = bundle_get(e.payload, e.len, st->held.payload, &st->held.origin, 0);
    } else {
        memcpy(st->held.payload, e.payload, QR_LEN);
        st->held.origin = e.origin;
        used = QR_LEN;
    }
    st->held.tries = 0;
    st->held.waits = 0;
    st->held.prompted = 0;
    st->held.busy = 0;
    st->held.valid = 1;
    st->held.more_len = (uint8_t)(e.len - used);
    st->held.more_count = (uint8_t)(e.packed ? e.packed - 1u : 0u);
    memcpy(st->held.more, e.payload + used, st->held.more_len);
    gather(st);
    return 1;
}

/*
 * A record sent to a parent the node has since left, without an ack: the ack may
 * be what was lost, and the old parent may have merged it. Sent to the new parent
 * too, it would count twice (a COUNT above the node count), so it is given up --
 * soundness before yield. A tuple goes on: the gateway drops a duplicate tuple.
 */
static uint8_t record_sent_elsewhere(const mote_state *st)
{
    return st->held.tries > 0 && st->held.payload[QR_OFF_TYPE] == QR_AGG_RECORD &&
           st->held.to != routing_parent(&st->rt);
}

/* Send `held`; a resend keeps the first send's seqno so a lost ack cannot duplicate it. */
static void send_held(mote_state *st)
{
    uint8_t pkt[TOS_MSG_MAX];
    uint8_t n;
    mhop_header mh;
    if (record_sent_elsewhere(st)) {
        st->held.valid = 0;
        st->stats.results_unacked++;
        if (!take_next(st))
            return;
    }
    /* A new parent that does not take bundles gets the tuples one by one. */
    if (st->held.more_count && !routing_parent_bundles(&st->rt))
        unbundle(st);
    n = st->held.more_count ? build_bundle_packet(st, pkt)
                            : build_result_packet(st, pkt, st->held.payload, QR_LEN, st->held.origin);
    mhop_header_unpack(&mh, pkt + TOS_HEADER_LEN);
    /* Tries count sends to the current parent: one the node just chose has refused
     * nothing yet (the last parent may have been busy, or gone). */
    if (st->held.tries > 1 && st->held.to != routing_parent(&st->rt))
        st->held.tries = 1;
    if (st->held.tries == 0) {
        st->held.seqno = (uint16_t)mh.seqno;
    } else {
        mh.seqno = (int16_t)st->held.seqno;
        mhop_header_pack(&mh, pkt + TOS_HEADER_LEN);
    }
    if (!radio_send(st, pkt, n))
        return;
    st->held.to = routing_parent(&st->rt);
    st->held.tries++;
    st->in_flight = mh.hopcount == MHOP_HOPCOUNT_INVALID ? TX_RESULT_BCAST
                                                                  : TX_RESULT_UNICAST;
}

/*
 * Whether a relay of tuples should hold its queue a moment for more to come, so that
 * they leave as one bundle (result/bundle.h). Only while its sends meet contention
 * (MOTE_F_CONTENDED): where every send is taken at once, as on a lossless channel at
 * its capacity, waiting only delays -- a 1,024-node lossless grid at 32 s lost 3 % of
 * its tuples to it. With fewer than BUNDLE_GATHER_COUNT queued, it waits once (on the
 * retry timer), then sends what it has: BUNDLE_GATHER_MS, or half an interval where
 * that is shorter -- the wait also paces the relay, and at
 * 200-ms epochs a 250-ms one held a chain's relays below the rate their subtrees
 * produce. Every frame a relay saves is one less to collide with a hidden sibling's:
 * on the lossy grids most sends failed by collision, not by loss (100 nodes at 8 s,
 * seed 1: 3,827 collided, 4,858 taken), and a relay sent as soon as it held a tuple,
 * mostly one at a time. Seeds 1-5, gathering always: SELECT 25 @2 s .795 -> .885,
 * 49 @4 s .740 -> .822, 100 @8 s .627 -> .746 (only under contention: docs/radio.md).
 * 150 ms gathered less, 500 ms no more; sending as soon as the count is reached, not
 * pacing, lost .02-.04 (seeds 1-10). Leaves, with nobody's tuples to wait for, do not.
 */
static uint8_t wait_to_bundle(mote_state *st)
{
    const radioq_entry *next = radioq_peek(&st->rq);
    uint32_t wait;
    uint8_t slot;
    if (st->flags & MOTE_F_GATHERED) {
        st->flags &= (uint8_t)~MOTE_F_GATHERED;
        return 0;
    }
    if (!next || next->urgent || st->id == MOTE_ROOT_ID || !st->child_epochs ||
        !(st->flags & MOTE_F_CONTENDED) ||
        radioq_count(&st->rq) >= BUNDLE_GATHER_COUNT || !routing_parent_bundles(&st->rt) ||
        !run_tuples_running(st))
        return 0;
    slot = qtable_find(&st->queries, next->qid);
    wait = slot < QUERY_SLOTS ? sched_interval_ms(st->run[slot].epoch_ms) / 2u : 0u;
    if (wait > BUNDLE_GATHER_MS)
        wait = BUNDLE_GATHER_MS;
    st->flags |= MOTE_F_GATHERED;
    st->retry_pending = 1;
    st->retry_at = mote_now(st) + wait;
    return 1;
}

/*
 * A downward packet waiting for its slot of a down wave once an epoch (core/schedule.h)
 * held up the beacons and query requests queued behind it for up to an epoch: the first
 * of those goes ahead of it (the downward packets keep their order).
 */
static uint8_t promote_other(mote_state *st)
{
    uint8_t k, at, prev;
    ctl_packet moved;
    if (!run_send_wave(st))
        return 0;
    for (k = 1; k < st->ctl_count; k++) {
        at = (uint8_t)((st->ctl_head + k) % CTLQ_LEN);
        if (is_downward(&st->ctlq[at]))
            continue;
        moved = st->ctlq[at];
        for (; k > 0; k--) { /* shift the downward packets before it back by one */
            prev = (uint8_t)((st->ctl_head + k - 1u) % CTLQ_LEN);
            st->ctlq[(st->ctl_head + k) % CTLQ_LEN] = st->ctlq[prev];
        }
        st->ctlq[st->ctl_head] = moved;
        return 1;
    }
    return 0;
}

void tx_pump(mote_state *st)
{
    /* A relay gathering a bundle stops waiting once its queue cannot take the next
     * child's tuple: waiting longer only refuses children. */
    if (st->retry_pending && (st->flags & MOTE_F_GATHERED) && !st->held.valid &&
        !tx_takes_forwards(st))
        st->retry_pending = 0;
    /* A result waiting for a parent the node has left goes to the new one at once. */
    if (st->held.valid && st->held.waits && st->held.to != routing_parent(&st->rt)) {
        st->held.waits = 0;
        st->retry_pending = 0;
    }
    /* A result waiting on the retry timer holds up no control packet: a DEL, a beacon
     * or a query part kept back for a whole pause (an interval, for a tuple past its
     * blind tries) left children running a stopped query -- a 1 s SELECT stopped on a
     * lossy 25-node grid reached every node within five epochs on 2 of seeds 1-12 --
     * and records without the beacons that route them. */
    if (st->radio_busy || (st->retry_pending && !st->ctl_count))
        return;
    if (st->ctl_count) {
        ctl_packet *p = &st->ctlq[st->ctl_head];
        uint8_t p_am, down = is_downward(p);
        uint8_t open = down ? tx_down_gate(st, is_del(p)) : tx_gate(st);
        /* Held for its slot while other control may go: the first beacon or request
         * queued behind it goes ahead (promote_other), through the gate just opened. */
        if (down && !open && tx_gate(st) && promote_other(st)) {
            down = 0;
            open = 1;
        }
        p_am = p->bytes[2];
        if (!open) {
            /* A downward packet waiting for its slot holds no result up. */
            if (down && !st->retry_pending && !st->held.waits &&
                tx_results_may_go(st, mote_now(st)) &&
                (st->held.valid || take_next(st)))
                send_held(st);
            return;
        }
        if (p_am == AM_QUERY)
            stamp_time(st, p->bytes + TOS_HEADER_LEN + QMSG_TIME);
        else if (p_am == AM_QUERY_REQUEST) /* the answer is awaited from now on */
            tx_pace_requests(st, mote_now(st) + QREQ_GAP_MS);
        if (radio_send(st, p->bytes, (uint8_t)(p->len & CTL_LEN_MASK))) {
            st->ctl_head = (uint8_t)((st->ctl_head + 1u) % CTLQ_LEN);
            st->ctl_count--;
            /* Only downward control sent on the schedule opens the tail: without one,
             * the receivers are awake anyway and relay at once. */
            if (down && (run_any(st) || is_del(p)))
                st->in_flight = TX_DOWNWARD;
            else
                st->in_flight = p_am == AM_QUERY_REQUEST ? TX_QUERY_REQUEST : TX_OTHER_CONTROL;
        }
        return;
    }
    if (st->retry_pending || st->held.waits || !tx_results_may_go(st, mote_now(st)))
        return;
    if (!st->held.valid && wait_to_bundle(st))
        return;
    if (st->held.valid || take_next(st))
        send_held(st);
}

/* Not listening for lack of room: only where the radio cannot withhold acks (mote.c). */
static uint8_t deaf(const mote_state *st)
{
    return !HAL_SELECTIVE_ACKS(st->hal) && st->id != MOTE_ROOT_ID && !tx_takes_forwards(st);
}

static uint8_t tuple_max_tries(const mote_state *st)
{
    return radioq_count(&st->rq) * 2u < radioq_len(&st->rq) ? TUPLE_MAX_TRIES_IDLE : TUPLE_MAX_TRIES;
}

/*
 * Whether a record not yet taken may go again: RESULT_MAX_TRIES sends always, and up
 * to RECORD_MAX_TRIES while a resend still reaches the parent before its own record
 * goes. The parent sends at a random time of its interval, which follows ours
 * (core/runs.c, jitter; the root at the end of the epoch): a quarter of an interval
 * into it is the bound. A record given up near the root loses its subtree's count;
 * one that comes after the parent's went is late there (counted, passed on at most),
 * so tries past that only load the channel -- ten regardless of time made 18 times as
 * many records late on a 1,000-node grid, and COUNT fell from ~360 to ~130 of 1,000.
 * Except near the root: a relay within RECORD_LATE_DEPTH hops holds its subtree's
 * count, the most a lost record can lose, and its late record is merged a level up or
 * by the gateway, which keeps an epoch's row open until the next epoch's results come.
 * It goes on trying through the interval after the deadline. Those are few nodes
 * (about 16 on a grid, at any size). Seeds 1-20, paired: COUNT 100 @4 s 92.5 -> 95.4,
 * MAX 25 @2 s exact .927 -> .948, COUNT 25 24.6 -> 24.8, 1,000 nodes 303 -> 302 (+-11).
 * Every relay trying longer gave 99.4 and .950 on 10 seeds but 1,000 nodes 213: the
 * late records of 37 levels collide.
 */
static uint8_t record_may_retry(const mote_state *st)
{
    uint8_t slot = qtable_find(&st->queries, st->held.payload[QR_OFF_QID]);
    const query_run *run;
    uint32_t interval, deadline;
    if (st->held.tries < RESULT_MAX_TRIES)
        return 1;
    if (st->held.tries >= RECORD_MAX_TRIES || slot == QUERY_SLOTS)
        return 0;
    run = &st->run[slot];
    interval = sched_interval_ms(run->epoch_ms);
    deadline = sched_label_start(st->queries.slot[slot].epoch_base, run->epoch_ms,
                                 le16_get(st->held.payload + QR_OFF_EPOCH)) +
               run->epoch_ms - (uint32_t)run->slot_depth * interval;
    deadline += routing_parent(&st->rt) == MOTE_ROOT_ID ? interval - SCHED_TX_GUARD_MS
                                                          : interval / 4u;
    if (st->child_epochs && routing_depth(&st->rt) <= RECORD_LATE_DEPTH)
        deadline += interval;
    return (int32_t)(deadline - mote_now(st)) > (int32_t)(2u * SCHED_TX_GUARD_MS);
}

/* Whether the held tuple's next transmit slot is far enough off to be worth a timer:
 * from SCHED_SHORT_EPOCH_MS on. In shorter epochs the slot comes about as soon as the
 * pause would end, and the pause's resends only load a channel already past its
 * capacity: a 1 s SELECT stopped on a lossy 25-node grid reached every node within
 * five epochs on 8 of seeds 1-12 with the pause at 1 s, on 9 without, as before it. */
static uint8_t slot_is_far(const mote_state *st)
{
    uint8_t slot = qtable_find(&st->queries, st->held.payload[QR_OFF_QID]);
    return slot < QUERY_SLOTS && st->run[slot].epoch_ms >= SCHED_SHORT_EPOCH_MS;
}

/*
 * How long a tuple the parent refused (alive, but without room) waits before it goes
 * again, if the parent is not heard making room first. Only waiting to hear it stalled
 * whole subtrees: a child that does not overhear its parent -- a lossy link, or a
 * parent that sends seldom -- kept a full queue for up to an epoch and dropped its own
 * tuples meanwhile (100-node lossy grid at 8 s: one relay idle for 7 s, tuples
 * delivered per epoch falling from 76 to 33 over 30 epochs). The pause doubles with
 * every refusal in a row, up to 2^TUPLE_BUSY_DOUBLINGS holds, so a congested parent
 * is asked less and less often.
 */
static uint32_t busy_pause(mote_state *st)
{
    uint8_t d = st->held.busy < TUPLE_BUSY_DOUBLINGS ? st->held.busy : TUPLE_BUSY_DOUBLINGS;
    if (st->held.busy < 0xFFu)
        st->held.busy++;
    return ACTIVITY_HOLD_MS + mote_random_below(st, (uint16_t)(ACTIVITY_HOLD_MS << d)); /* <= 688 */
}

/* The parent acknowledged `held`, or did not (asleep, deaf with a full queue, lost). */
static void result_done(mote_state *st, uint8_t kind, uint8_t acked)
{
    uint32_t now = mote_now(st);
    uint8_t tuple = st->held.payload[QR_OFF_TYPE] == QR_TUPLE;
    if (!acked)
        st->flags |= MOTE_F_CONTENDED;
    else if (st->held.tries == 1)
        st->flags &= (uint8_t)~MOTE_F_CONTENDED;
    /* The ack is the parent's sign of life while we sleep through its other packets. */
    if (acked) {
        routing_parent_acked(&st->rt);
        routing_parent_took(&st->rt, st->held.tries);
    }
    if (acked || kind == TX_RESULT_BCAST) {
        st->held.valid = 0;
        if (acked)
            st->send_until = sched_later(st->send_until, now + PARENT_AWAKE_MS);
        /* Our children may still have tuples; they overheard this one: stay a moment.
         * Also when we know of none: a node that just chose us as parent finds us
         * asleep, and this tail is where its prompted resend (tx_parent_heard) lands. */
        if (tuple)
            st->hold_until = now + ACTIVITY_HOLD_MS;
        return;
    }
    if (tuple && record_queued(st)) {
        record_first(st);
        if (!st->held.valid)
            return;
    }
    if (tuple && (deaf(st) || st->held.prompted)) {
        /* The parent is alive and only busy (no room, or just taken by a sibling's
         * resend): no try of this tuple's; the next sign of it brings a resend. A tuple
         * is given up only for a parent that stays silent; where queues overflow, the
         * queue policy chooses what is lost. A node deaf itself (a platform that cannot
         * withhold acks, mote.c) cannot hear the parent make room: it asks again about
         * a packet time later, as often as the parent can have made room. */
        st->held.tries--;
        st->held.prompted = 0;
        st->held.waits = 1;
        /* Without a timer, the next sign of the parent or the next slot brings it. */
        st->retry_pending = deaf(st) || slot_is_far(st);
        st->retry_at = now + (deaf(st) ? SCHED_TX_GUARD_MS / 2u +
                                             mote_random_below(st, SCHED_TX_GUARD_MS)
                                       : busy_pause(st));
        return;
    }
    if (tuple ? st->held.tries >= tuple_max_tries(st) : !record_may_retry(st)) {
        if (!tuple)
            st->flags |= MOTE_F_RECORD_LOST;
        st->held.valid = 0;
        st->stats.results_unacked += 1u + st->held.more_count;
        routing_parent_took(&st->rt, 0);
        return;
    }
    st->held.waits = 1;
    st->retry_pending = 1;
    if (!tuple) {
        /* A record most likely collided with a sibling's: the parent listens through the
         * whole interval, so resend after a random pause of one or two packet times. One
         * that comes after the parent's record went is dropped there (mote.c), but tells
         * a parent that did not know of this child to listen from the next epoch on. */
        st->retry_at = now + SCHED_TX_GUARD_MS + mote_random_below(st, RECORD_RETRY_SPREAD_MS);
        return;
    }
    /* Resending at once into a deaf or sleeping parent, or a busy level, only adds
     * collisions: wait for the next sign of the parent listening, at most a
     * randomised hold or two (the node may itself be too full to hear it). After
     * TUPLE_BLIND_TRIES the parent is taken to be deaf behind a full queue: hearing
     * it (it forwards as it makes room) brings a resend, or else about an interval
     * later -- not sooner: where siblings are many (the Intel lab layout has 16-31
     * root children), quicker resends are what the channel cannot carry. Waiting for
     * the next slot instead (an epoch) stalled relays whose parent they do not
     * overhear: the root, which sends no results by radio, and on a lossy grid any
     * parent across a diagonal link. */
    if (st->held.tries >= TUPLE_BLIND_TRIES) {
        st->retry_at = now + TUPLE_LATE_RETRY_MS + mote_random_below(st, TUPLE_LATE_RETRY_MS);
        return;
    }
    /* Two hidden siblings whose tuples collided both come back: drawn from one hold, the
     * two resends overlapped again about three times in four (a frame and its backoff
     * are half a hold); from two, about half as often. */
    st->retry_at = now + ACTIVITY_HOLD_MS + mote_random_below(st, 2u * ACTIVITY_HOLD_MS);
}

/*
 * After a request the parent did not acknowledge. Asking again at once -- as soon as
 * the request timer allowed, which it then did at once -- let every node that held
 * an unfinished query ask in a loop: on the Intel lab layout 1,500 requests in 5 s,
 * in which no answer got through, and the query never left the root. The timer now
 * waits a short random pause, well inside QREQ_GAP_MS (a whole gap after each lost
 * request left nodes of a lossy grid without the query for good); a result heard
 * meanwhile still asks at once (core/sharing.c): that is when the parent listens.
 */
static uint32_t request_pause(const mote_state *st)
{
    return ACTIVITY_HOLD_MS + mote_random_below(st, QREQ_GAP_MS / 4u);
}

/*
 * A downward packet the MAC gave up on, the channel busy through all its backoffs, goes
 * back to the head of the control queue, once: nobody heard it. When a query starts,
 * every node forwards its parts at once; on a 1,000-node grid on `sinr` 3,006 of 5,626
 * part forwards were given up so, and the nodes that missed parts asked for them 8,800
 * times in the next 20 s. The packet's slot still holds it: only a push into a full
 * queue could have overwritten it, and the radio was busy, so nothing was taken.
 * A DEL goes back as often as it is given up on: nobody asks for a DEL. A relay near the
 * root of a 100-node grid at 8 s on `sinr` had every copy given up on for 9 s after
 * the stop, its leaves sampling on twice.
 */
static uint8_t requeue_abandoned(mote_state *st, uint8_t kind)
{
    uint8_t prev = (uint8_t)((st->ctl_head + CTLQ_LEN - 1u) % CTLQ_LEN);
    if ((kind != TX_DOWNWARD && kind != TX_OTHER_CONTROL) || st->ctl_count == CTLQ_LEN ||
        ((st->ctlq[prev].len & CTL_RETRIED) && !is_del(&st->ctlq[prev])) ||
        !is_downward(&st->ctlq[prev]))
        return 0;
    st->ctlq[prev].len |= CTL_RETRIED;
    st->ctl_head = prev;
    st->ctl_count++;
    return 1;
}

void tx_done(mote_state *st, uint8_t outcome)
{
    uint8_t kind = st->in_flight;
    uint8_t acked = outcome == HAL_SEND_ACKED;
    st->radio_busy = 0;
    st->in_flight = TX_NOTHING;
    if (outcome == HAL_SEND_ABANDONED && requeue_abandoned(st, kind))
        ; /* sent again as soon as the gate allows */
    else if (kind == TX_DOWNWARD) /* the children hold on: the next packet may follow */
        st->ctl_until = mote_now(st) + CTL_TAIL_MS;
    else if (kind == TX_QUERY_REQUEST && !acked) { /* the parent slept or was deaf: */
        st->request_after = mote_now(st) + request_pause(st); /* ask again soon */
        st->flags |= MOTE_F_REQUEST_LOST;
    } else if (kind == TX_RESULT_UNICAST || kind == TX_RESULT_BCAST)
        result_done(st, kind, acked);
    else if (kind == TX_OTHER_CONTROL) /* beacons mostly: the parent may answer one (results.c) */
        st->hold_until = mote_now(st) + ACTIVITY_HOLD_MS;
    tx_pump(st);
}

uint8_t tx_winavg_merge(void *ctx, radioq_entry *dst, const radioq_entry *src)
{
    mote_state *st = (mote_state *)ctx;
    uint8_t slot = qtable_find(&st->queries, dst->qid);
    const query *q;
    if (slot == QUERY_SLOTS || dst->packed || src->packed)
        return 0;
    q = &st->queries.slot[slot];
    if (!qr_tuple_average(dst->payload, dst->count, src->payload, src->count, q))
        return 0;
    dst->value = qr_tuple_key(dst->payload, q);
    return 1;
}
