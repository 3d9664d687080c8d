/*
 * mote.c - the node: entry points, dispatch by AM type, the alarm multiplexer
 *          and power reporting.
 *
 * Everything a stimulus changes is followed by the same three steps: let the
 * transmit path send what it may (tx_pump), report the power state, re-arm the
 * single HAL alarm at the earliest pending deadline (query phases, beacon,
 * send retry).
 */
#include "mote.h"

#include <string.h>

#include "../net/le16.h"
#include "../result/result.h"
#include "commands.h"
#include "processing.h"
#include "mote_state.h"
#include "runs.h"
#include "schedule.h"
#include "sharing.h"
#include "txpath.h"

/* The whole node must fit next to a stack in the ATmega128's 4 KB (C99 static assert). */
typedef char mote_state_fits_in_budget[(sizeof(struct mote_state) <= MOTE_STATE_MAX) ? 1 : -1];

#define TIME_SYNC_MIN_MS 32 /* differences below this are radio latency (TinyDB checkTime) */

size_t mote_state_size(void) { return sizeof(mote_state); }

uint32_t mote_now(const mote_state *st)
{
    return st->hal->now_ms(st->hal->ctx) + (uint32_t)st->clock_offset;
}

/* ---- power, alarm ---------------------------------------------------------- */

static uint8_t any_query_running(const mote_state *st)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING)
            return 1;
    return 0;
}

/*
 * A node without a route has nothing to deliver and must hear a neighbour that
 * offers one, whenever it speaks: a route lost (routing_searching), or none yet --
 * a node that got the query before the tree formed would otherwise sleep by the
 * slot of SCHED_MAX_DEPTH and never hear the root's beacons, sent in interval 0.
 */
static uint8_t seeking_route(const mote_state *st)
{
    return st->id != MOTE_ROOT_ID &&
           (routing_searching(&st->rt) || routing_parent(&st->rt) == ROUTING_PARENT_NONE);
}

/*
 * Awake: CPU on. The radio listens too unless the result queue is full -- then
 * children's sends go unacknowledged and they keep their results (backpressure,
 * core/schedule.h). The root never sleeps.
 */
static uint8_t node_awake(const mote_state *st, uint32_t now)
{
    if (st->id == MOTE_ROOT_ID || !any_query_running(st) || st->radio_busy || st->listening ||
        st->waiting || !sched_due(st->hold_until, now))
        return 1;
    if (seeking_route(st))
        return 1;
    return (st->ctl_count && tx_gate(st)) || tx_results_may_go(st, now);
}

/*
 * Room for children's results: the queue keeps its last place for the node's
 * own next reading, so a relay's backlog never crowds out its own tuple.
 */
static uint8_t queue_takes_forwards(const mote_state *st)
{
    uint8_t len = radioq_len(&st->rq);
    return radioq_count(&st->rq) + (len > 1u ? 1u : 0u) < len;
}

static void report_power(mote_state *st)
{
    uint8_t cpu = node_awake(st, mote_now(st));
    uint8_t radio = cpu && (st->id == MOTE_ROOT_ID || queue_takes_forwards(st) ||
                            seeking_route(st));
    uint8_t bits;
    /* A congested relay must still hear the query parts it lacks (core/sharing.h). */
    if (cpu && share_awaiting(st))
        radio = 1;
    bits = (uint8_t)(cpu << MOTE_PWR_CPU | radio << MOTE_PWR_RADIO);
    if (bits == st->power)
        return;
    if ((bits ^ st->power) & (1u << MOTE_PWR_CPU))
        st->hal->power(st->hal->ctx, MOTE_PWR_CPU, cpu);
    if ((bits ^ st->power) & (1u << MOTE_PWR_RADIO))
        st->hal->power(st->hal->ctx, MOTE_PWR_RADIO, radio);
    st->power = bits;
}

static void earliest(uint32_t *next, uint32_t t)
{
    if ((int32_t)(t - *next) < 0)
        *next = t;
}

/*
 * The single HAL alarm: the next query phase, and while awake the moments that
 * may let the node sleep (end of the activity tail, of the parent's listening,
 * of the own interval). Beacons need an alarm only when no query wakes the node.
 */
static void rearm(mote_state *st)
{
    uint32_t now = mote_now(st), next = now + 0x7FFFFFFFu;
    uint8_t i, running = 0;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING) {
            running = 1;
            earliest(&next, st->run[i].next_at);
        }
    if (!running)
        earliest(&next, st->next_beacon_at);
    if (st->retry_pending)
        earliest(&next, st->retry_at);
    if (running && st->power && st->id != MOTE_ROOT_ID) {
        if (!sched_due(st->hold_until, now))
            earliest(&next, st->hold_until);
        if (tx_results_pending(st) && !sched_due(st->send_until, now))
            earliest(&next, st->send_until);
        if (st->ctl_count && !sched_due(st->ctl_until, now))
            earliest(&next, st->ctl_until);
        for (i = 0; i < QUERY_SLOTS; i++)
            if (st->ctl_count && (st->gate_open & (1u << i)) && !sched_due(st->run[i].tx_until, now))
                earliest(&next, st->run[i].tx_until);
    }
    if ((int32_t)(next - now) < 0)
        next = now;
    next -= (uint32_t)st->clock_offset;
    /* Most packets change no deadline: spare the platform a timer update. */
    if (st->alarm_armed && st->alarm_at == next)
        return;
    st->alarm_armed = 1;
    st->alarm_at = next;
    st->hal->set_alarm(st->hal->ctx, next);
}

static void send_beacon(mote_state *st)
{
    uint8_t buf[TOS_DATA_LENGTH];
    uint8_t n = routing_build_beacon(&st->rt, buf, sizeof buf);
    if (n)
        tx_control(st, TOS_BCAST_ADDR, AM_ROUTE_BEACON, buf, n);
    st->beacon_due = 0;
}

static void settle(mote_state *st)
{
    routing_set_duty_cycled(&st->rt, st->id != MOTE_ROOT_ID && any_query_running(st));
    /* Records first: the parent merges what reaches it before its own transmit time. */
    if (st->beacon_due && tx_gate(st) && !tx_results_pending(st) && !st->radio_busy)
        send_beacon(st);
    share_pump(st);
    tx_pump(st);
    report_power(st);
    rearm(st);
}

/* ---- time and epoch synchronisation (§12.2, §12.3) ------------------------- */

static void sync_time(mote_state *st, uint32_t remote_ms)
{
    int32_t diff = (int32_t)(remote_ms - mote_now(st));
    uint8_t i;
    if (st->id == MOTE_ROOT_ID || (diff > -TIME_SYNC_MIN_MS && diff < TIME_SYNC_MIN_MS))
        return;
    st->clock_offset += diff;
    /* A jump of a quarter epoch or more would tear the slot schedule: restart it. */
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING &&
            (uint32_t)(diff < 0 ? -diff : diff) >= st->run[i].epoch_ms / 4u)
            run_retime(st, i);
}

static uint8_t running_slot(const mote_state *st, uint8_t qid)
{
    uint8_t slot = qtable_find(&st->queries, qid);
    return slot < QUERY_SLOTS && st->queries.slot[slot].status >= QUERY_RUNNING ? slot
                                                                                  : QUERY_SLOTS;
}

/* ---- AM 101 ---------------------------------------------------------------- */

static void forward_query(mote_state *st, const uint8_t *msg)
{
    uint8_t buf[TOS_DATA_LENGTH];
    uint8_t i;
    for (i = 0; i < TOS_DATA_LENGTH; i++)
        buf[i] = i < QMSG_LEN ? msg[i] : 0;
    le16_put(buf + QMSG_FWD_NODE, st->id); /* the time stamp is written on the air */
    if (st->ctl_count == CTLQ_LEN && msg[QMSG_MSG_TYPE] == QMSG_ADD)
        share_later(st, msg);
    else
        tx_control(st, TOS_BCAST_ADDR, AM_QUERY, buf, TOS_DATA_LENGTH);
}

/*
 * Whether the sender of a query part is upstream: the PC (fwdNode 0x007E at
 * the root), the routing parent, or anyone while the node has no route. An
 * upstream node forwards a part only after taking it as new itself, so its
 * parts may start a new query under the id of a stopped one (the PC reuses
 * ids); other neighbours may still be relaying the stopped query, and its
 * late parts must not revive it (TinyDB's mStoppedQid guard).
 */
static uint8_t from_upstream(const mote_state *st, uint16_t fwd)
{
    uint16_t parent = routing_parent(&st->rt);
    return fwd == parent || parent == ROUTING_PARENT_NONE;
}

/*
 * A new query may need the slot of a stopped one: a part reusing the id of a
 * draining query replaces it, and with every slot taken a draining query ends
 * early. Either way only the last records of a stopped query are lost.
 */
static void make_room(mote_state *st, uint8_t qid)
{
    uint8_t i = qtable_find(&st->queries, qid);
    if (i < QUERY_SLOTS) {
        if (st->queries.slot[i].status == QUERY_DRAINING)
            run_stop(st, i);
        return;
    }
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status == QUERY_FREE)
            return;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status == QUERY_DRAINING) {
            run_stop(st, i);
            return;
        }
}

static void on_query_msg(mote_state *st, const uint8_t *msg, uint8_t len)
{
    uint8_t slot, qid, type, is_add, upstream;
    uint16_t fwd;
    qasm_outcome out;
    if (len < QMSG_LEN) {
        st->stats.parts_rejected++;
        return;
    }
    qid = msg[QMSG_QID];
    type = msg[QMSG_MSG_TYPE];
    is_add = type == QMSG_ADD || type == QMSG_MODIFY;
    fwd = le16_get(msg + QMSG_FWD_NODE);
    upstream = from_upstream(st, fwd);
    /* The root runs what the PC sends and stops what it stops: a late DEL relayed
     * back by a neighbour must not end a query that reused the id. */
    if (st->id == MOTE_ROOT_ID && !upstream)
        return;
    if (qid == st->stopped_qid && type != QMSG_DEL) {
        if (!upstream)
            return;
        if (is_add) { /* a new query under the old id */
            st->stopped_qid = QUERY_NO_QID;
            st->reused_qid = qid;
        }
    }
    /* DELs of the old query may still be relayed around: only upstream stops the new one. */
    if (qid == st->reused_qid && type == QMSG_DEL) {
        if (!upstream)
            return;
        st->reused_qid = QUERY_NO_QID;
    }
    /* More parts may follow: keep listening (the control tail, core/schedule.h). */
    if (fwd != TOS_UART_ADDR)
        st->hold_until = sched_later(st->hold_until, mote_now(st) + ACTIVITY_HOLD_MS);
    if (is_add && (upstream || qid != st->stopped_qid) && qtable_add_is_valid(msg, len))
        make_room(st, qid);
    out = qtable_receive(&st->queries, msg, len, &slot);
    if (out == QASM_REJECTED) {
        st->stats.parts_rejected++;
        return;
    }
    if ((out == QASM_STORED || out == QASM_COMPLETED) && fwd != TOS_UART_ADDR && upstream)
        sync_time(st, (uint32_t)le16_get(msg + QMSG_TIME + 1) |
                          (uint32_t)le16_get(msg + QMSG_TIME + 3) << 16);
    switch (out) {
    case QASM_NO_SLOT:
        st->stats.parts_no_slot++;
        return;
    case QASM_COMPLETED:
        (void)run_start(st, slot);
        break;
    case QASM_DELETED:
        st->stopped_qid = qid;
        if (slot < QUERY_SLOTS && st->queries.slot[slot].status == QUERY_DRAINING)
            run_drain(st, slot);
        break;
    case QASM_RATE_CHANGED:
        if (st->queries.slot[slot].status >= QUERY_RUNNING)
            run_retime(st, slot);
        break;
    case QASM_DUPLICATE:
        if (fwd != TOS_UART_ADDR)
            return;
        break; /* the root relays the PC's retransmissions */
    case QASM_STORED:
        break;
    default:
        return;
    }
    forward_query(st, msg);
}

/* ---- AM 240 ---------------------------------------------------------------- */

static int16_t forward_key(const mote_state *st, const qr_view *v, const uint8_t *qr)
{
    uint8_t slot = qtable_find(&st->queries, v->qid);
    if (v->type == QR_AGG_RECORD)
        return (int16_t)((uint16_t)v->state[0] | (uint16_t)v->state[1] << 8);
    return slot < QUERY_SLOTS && v->type == QR_TUPLE ? qr_tuple_key(qr, &st->queries.slot[slot])
                                                     : 0;
}

/*
 * A child's record that arrives after ours went out would be merged into our next
 * epoch -- where the child is counted again with its on-time record. Dropped,
 * unless the sender is routed deeper than SCHED_MAX_DEPTH: it shares our slot
 * (core/schedule.h), its records are always late, and they are merged an epoch
 * late as in TinyDB 1.x (it sends nothing else that epoch to double-count).
 */
static uint8_t record_is_late(const mote_state *st, uint8_t slot, const mhop_header *mh)
{
    return st->run[slot].emitted &&
           (mh->hopcount <= SCHED_MAX_DEPTH || mh->hopcount == MHOP_HOPCOUNT_INVALID);
}

static void on_result_for_me(mote_state *st, const mhop_header *mh, const qr_view *v,
                             const uint8_t *qr)
{
    routing_verdict verdict = routing_should_forward(&st->rt, mh);
    uint8_t slot;
    if (verdict == ROUTING_DROP_DUP || verdict == ROUTING_DROP_CYCLE)
        return;
    /* A child still routes through us, awake right after its send: our beacon (depth
     * 0xFF) tells it to look elsewhere, before a stale depth of its subtree lures us in. */
    if (verdict == ROUTING_DROP_NO_ROUTE && routing_searching(&st->rt))
        st->beacon_due = 1;
    st->child_epochs = CHILD_MEMORY_EPOCHS;
    if (v->type == QR_TUPLE) /* more may follow: the activity tail */
        st->hold_until = mote_now(st) + ACTIVITY_HOLD_MS;
    slot = running_slot(st, v->qid);
    if (slot == QUERY_SLOTS)
        share_on_result(st, v->qid, mh->sourceaddr);
    if (slot < QUERY_SLOTS && st->queries.slot[slot].has_agg && v->type == QR_AGG_RECORD) {
        if (record_is_late(st, slot, mh))
            st->stats.records_late++;
        else
            proc_merge(st, slot, v); /* TAG: folded into our own record, not forwarded */
        return;
    }
    if (verdict == ROUTING_ACCEPT && tx_result(st, qr, mh->originaddr, forward_key(st, v, qr)))
        st->stats.results_forwarded++;
}

static void on_result_overheard(mote_state *st, const tos_header *tos, const mhop_header *mh,
                                const qr_view *v)
{
    uint16_t parent = routing_parent(&st->rt);
    uint8_t slot = running_slot(st, v->qid);
    uint8_t from_parent = mh->sourceaddr == parent && mh->originaddr == mh->sourceaddr;
    if (from_parent || mh->sourceaddr == MOTE_ROOT_ID) {
        sync_time(st, v->time_ms);
        slot = running_slot(st, v->qid);
        if (slot < QUERY_SLOTS)
            run_adopt_epoch(st, slot, v->epoch);
    }
    if (slot == QUERY_SLOTS)
        share_on_result(st, v->qid, mh->sourceaddr);
    if (slot < QUERY_SLOTS && parent != ROUTING_PARENT_NONE && tos->addr == parent &&
        mh->sourceaddr != st->id)
        proc_snoop(st, slot, v);
}

static void on_multihop(mote_state *st, const tos_header *tos, const uint8_t *data)
{
    mhop_header mh;
    qr_view v;
    const uint8_t *body = data + MHOP_HEADER_LEN;
    uint8_t body_len;
    if (tos->length < MHOP_HEADER_LEN)
        return;
    body_len = (uint8_t)(tos->length - MHOP_HEADER_LEN);
    mhop_header_unpack(&mh, data);
    routing_on_packet(&st->rt, tos, &mh, body, body_len);
    if (mh.sourceaddr == routing_parent(&st->rt) && st->id != MOTE_ROOT_ID) {
        tx_parent_heard(st);
        run_parent_heard(st);
    }
    if (tos->type != AM_DATA || !qr_decode(&v, body, body_len))
        return;
    if (tos->addr == st->id ||
        (st->id == MOTE_ROOT_ID && tos->addr == TOS_BCAST_ADDR &&
         mh.hopcount == MHOP_HOPCOUNT_INVALID))
        on_result_for_me(st, &mh, &v, body);
    else
        on_result_overheard(st, tos, &mh, &v);
}

/* ---- entry points ---------------------------------------------------------- */

void mote_init(mote_state *st, uint16_t id, const mote_hal *hal)
{
    memset(st, 0, sizeof *st);
    st->hal = hal;
    st->id = id;
    st->stopped_qid = QUERY_NO_QID;
    st->reused_qid = QUERY_NO_QID;
    qtable_init(&st->queries);
    share_init(st);
    radioq_init(&st->rq, tx_winavg_merge, st);
    routing_init(&st->rt, id);
    serial_rx_init(&st->srx);
    st->power = 0;
    /* Spread the first beacons so neighbours booted together do not collide. */
    st->next_beacon_at = mote_now(st) + hal->rand16(hal->ctx) % BEACON_PERIOD_MS;
    report_power(st);
    rearm(st);
}

void mote_on_alarm(mote_state *st)
{
    uint32_t now = mote_now(st);
    uint8_t i;
    st->alarm_armed = 0; /* consumed */
    for (i = 0; i < QUERY_SLOTS; i++)
        run_advance(st, i, now);
    /* With a query running, beacons ride on the transmit phase (runs.c). */
    if (!any_query_running(st) && sched_due(st->next_beacon_at, now)) {
        routing_tick(&st->rt);
        st->beacon_due = 1;
        st->next_beacon_at = now + BEACON_PERIOD_MS;
    }
    if (st->retry_pending && sched_due(st->retry_at, now)) {
        st->retry_pending = 0;
        st->held.waits = 0;
    }
    settle(st);
}

static void dispatch(mote_state *st, const uint8_t *pkt, uint16_t len, uint8_t from_uart)
{
    tos_header tos;
    const uint8_t *data = pkt + TOS_HEADER_LEN;
    if (!tos_msg_parse(&tos, pkt, len))
        return;
    /* The UART hop's group byte is irrelevant: TinyDB overwrites it (§1). */
    if (!from_uart && tos.group != TOS_DEFAULT_GROUP)
        return;
    switch (tos.type) {
    case AM_QUERY:
        on_query_msg(st, data, tos.length);
        break;
    case AM_COMMAND:
        cmd_receive(st, data, tos.length);
        break;
    case AM_STATUS:
        status_receive(st, data, tos.length, from_uart);
        break;
    case AM_QUERY_REQUEST:
        if (!from_uart && tos.addr == st->id)
            share_on_request(st, data, tos.length);
        break;
    case AM_DATA:
    case AM_DUMMY_RESULT:
    case AM_ROUTE_BEACON:
        if (!from_uart)
            on_multihop(st, &tos, data);
        break;
    default:
        break;
    }
}

void mote_on_radio_rx(mote_state *st, const uint8_t *tos_msg, uint8_t len)
{
    dispatch(st, tos_msg, len, 0);
    settle(st);
}

void mote_on_send_done(mote_state *st, uint8_t acked)
{
    tx_done(st, acked);
    settle(st);
}

void mote_on_uart_rx(mote_state *st, const uint8_t *bytes, uint16_t len)
{
    uint16_t i;
    for (i = 0; i < len; i++) {
        serial_rx_event ev = serial_rx_byte(&st->srx, bytes[i]);
        const uint8_t *pkt;
        uint8_t n;
        if (ev == SERIAL_RX_NONE)
            continue;
        if (ev == SERIAL_RX_PACKET_ACK) {
            uint8_t ack[SERIAL_ACK_MAX];
            uint16_t k = serial_frame_ack(serial_rx_token(&st->srx), ack, sizeof ack);
            if (k)
                st->hal->uart_send(st->hal->ctx, ack, k);
        }
        pkt = serial_rx_packet(&st->srx, &n);
        dispatch(st, pkt, n, 1);
    }
    settle(st);
}

/* ---- observers ------------------------------------------------------------- */

uint16_t mote_id(const mote_state *st) { return st->id; }
uint16_t mote_parent(const mote_state *st) { return routing_parent(&st->rt); }
uint8_t mote_depth(const mote_state *st) { return routing_depth(&st->rt); }
uint32_t mote_logical_time(const mote_state *st) { return mote_now(st); }
uint8_t mote_power_state(const mote_state *st)
{
    return st->power == (1u << MOTE_PWR_CPU | 1u << MOTE_PWR_RADIO);
}

void mote_get_stats(const mote_state *st, mote_stats *out)
{
    const radioq_stats *q = radioq_get_stats(&st->rq);
    *out = st->stats;
    out->queue_dropped = q->dropped;
    out->queue_merged = q->merged;
    out->queue_evicted = q->evicted;
}

uint8_t mote_query_status(const mote_state *st, uint8_t qid)
{
    uint8_t slot = qtable_find(&st->queries, qid);
    return slot < QUERY_SLOTS ? st->queries.slot[slot].status : QUERY_FREE;
}

uint16_t mote_query_epoch(const mote_state *st, uint8_t qid)
{
    uint8_t slot = running_slot(st, qid);
    return slot < QUERY_SLOTS ? st->run[slot].epoch : 0;
}
