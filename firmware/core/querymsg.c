#include "querymsg.h"

#include "../net/le16.h"
#include "../query/trailer.h"
#include "clock.h"
#include "mote_state.h"
#include "runs.h"
#include "schedule.h"
#include "sharing.h"
#include "stops.h"
#include "timesync.h"
#include "txpath.h"

static void forward_query(mote_state *st, const uint8_t *msg, uint8_t slot)
{
    uint8_t buf[TOS_DATA_LENGTH];
    uint8_t i;
    qtrailer t;
    for (i = 0; i < TOS_DATA_LENGTH; i++)
        buf[i] = i < QMSG_LEN ? msg[i] : 0;
    le16_put(buf + QMSG_FWD_NODE, st->id); /* the time stamp is written on the air */
    if (slot < QUERY_SLOTS) {
        trailer_of_query(&st->queries.slot[slot], &t);
        trailer_write(buf, &t);
    }
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

/*
 * The epoch base of a query part (core/schedule.h). The root sets it at the
 * first part from the PC, so every part it forwards carries it; another node
 * takes it from the trailer of a part (core/../query/trailer.h), and a running
 * query that had to guess one (no trailer so far) is rescheduled with it.
 */
static void take_epoch_base(mote_state *st, uint8_t slot, const uint8_t *msg, uint8_t len,
                            uint16_t fwd)
{
    query *q = &st->queries.slot[slot];
    qtrailer t;
    uint8_t has = trailer_read(msg, len, &t);
    if (has && q->status == QUERY_ASSEMBLING)
        trailer_apply_flags(q, &t);
    if (st->id == MOTE_ROOT_ID && fwd == TOS_UART_ADDR) {
        if (q->base_known != QUERY_BASE_SET) {
            q->epoch_base = sched_start_base(mote_now(st), sched_epoch_ms(q->epoch_units),
                                             routing_deepest(&st->rt));
            q->base_known = QUERY_BASE_SET;
        }
        return;
    }
    if (!has || !(t.flags & TRAILER_HAS_BASE) ||
        (q->base_known == QUERY_BASE_SET && q->epoch_base == t.base))
        return;
    if (q->base_known == QUERY_BASE_SET && !from_upstream(st, fwd))
        return;
    q->epoch_base = t.base;
    q->base_known = QUERY_BASE_SET;
    if (q->status >= QUERY_RUNNING)
        run_retime(st, slot);
}

/*
 * RATE: a new epoch length. The root starts it at the next boundary of the new
 * length, numbering on from the present epoch (sched_rebase); the others take
 * the new base from the trailer.
 */
static void take_new_rate(mote_state *st, uint8_t slot, const uint8_t *msg, uint8_t len,
                          uint16_t fwd)
{
    query *q = &st->queries.slot[slot];
    uint32_t epoch_ms = sched_epoch_ms(q->epoch_units), now = mote_now(st);
    qtrailer t;
    if (st->id == MOTE_ROOT_ID && fwd == TOS_UART_ADDR) {
        uint32_t start = now - now % epoch_ms + epoch_ms;
        uint32_t next = q->status >= QUERY_RUNNING ? st->run[slot].label + 1u : 1u;
        q->epoch_base = sched_rebase(start, epoch_ms, next);
        q->base_known = QUERY_BASE_SET;
    } else if (trailer_read(msg, len, &t) && (t.flags & TRAILER_HAS_BASE)) {
        q->epoch_base = t.base;
        q->base_known = QUERY_BASE_SET;
    }
    if (q->status >= QUERY_RUNNING)
        run_retime(st, slot);
}

void qmsg_receive(mote_state *st, const uint8_t *msg, uint8_t len)
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
    if (stops_has(st, qid) && type != QMSG_DEL) {
        if (!upstream)
            return;
        if (is_add) { /* a new query under the old id */
            stops_forget(st, qid);
            st->reused_qid = qid;
        }
    }
    /* DELs of the old query may still be relayed around: only upstream stops the new one. */
    if (qid == st->reused_qid && type == QMSG_DEL) {
        if (!upstream)
            return;
        st->reused_qid = QUERY_NO_QID;
    }
    /* More parts may follow: keep listening (the down wave, core/schedule.h). */
    if (fwd != TOS_UART_ADDR && upstream)
        st->ctl_hold_until = sched_later(st->ctl_hold_until, mote_now(st) + CTL_AWAKE_MS);
    if (is_add && (upstream || !stops_has(st, qid)) && qtable_add_is_valid(msg, len))
        make_room(st, qid);
    out = qtable_receive(&st->queries, msg, len, &slot);
    if (out == QASM_REJECTED) {
        st->stats.parts_rejected++;
        return;
    }
    if ((out == QASM_STORED || out == QASM_COMPLETED) && fwd != TOS_UART_ADDR && upstream)
        timesync_adopt(st, (uint32_t)le16_get(msg + QMSG_TIME + 1) |
                               (uint32_t)le16_get(msg + QMSG_TIME + 3) << 16);
    if (slot < QUERY_SLOTS && is_add)
        take_epoch_base(st, slot, msg, len, fwd);
    switch (out) {
    case QASM_NO_SLOT:
        st->stats.parts_no_slot++;
        return;
    case QASM_COMPLETED:
        share_on_complete(st);
        (void)run_start(st, slot);
        break;
    case QASM_DELETED:
        stops_remember(st, qid);
        if (slot < QUERY_SLOTS && st->queries.slot[slot].status == QUERY_DRAINING)
            run_drain(st, slot);
        break;
    case QASM_UNKNOWN_QID:
        /* A DEL for a query we do not hold still goes on, once, to stragglers below. */
        if (type != QMSG_DEL || !upstream || stops_has(st, qid))
            return;
        stops_remember(st, qid);
        break;
    case QASM_RATE_CHANGED:
        take_new_rate(st, slot, msg, len, fwd);
        break;
    case QASM_DUPLICATE:
        if (slot < QUERY_SLOTS && st->queries.slot[slot].status == QUERY_ASSEMBLING)
            share_on_part(st); /* the flood still passes: the missing parts may follow */
        if (fwd != TOS_UART_ADDR)
            return;
        break; /* the root relays the PC's retransmissions */
    case QASM_STORED:
        share_on_part(st);
        break;
    default:
        return;
    }
    forward_query(st, msg, slot);
    if (type == QMSG_DEL)
        stops_echo(st, qid);
}


/* A RATE part: query qid's new epoch length, in 10-ms units. */
static void rate_message(uint8_t msg[QMSG_LEN], uint8_t qid, int16_t units)
{
    uint8_t i;
    for (i = 0; i < QMSG_LEN; i++)
        msg[i] = 0;
    msg[QMSG_QID] = qid;
    msg[QMSG_MSG_TYPE] = QMSG_RATE;
    le16_put(msg + QMSG_EPOCH, (uint16_t)units);
}

uint8_t qmsg_set_rate(mote_state *st, uint8_t qid, int16_t units)
{
    uint8_t msg[QMSG_LEN], slot = qtable_find(&st->queries, qid);
    if (st->id != MOTE_ROOT_ID || slot == QUERY_SLOTS || units <= 0 ||
        st->queries.slot[slot].status != QUERY_RUNNING)
        return 0;
    rate_message(msg, qid, units);
    le16_put(msg + QMSG_FWD_NODE, TOS_UART_ADDR);
    qmsg_receive(st, msg, QMSG_LEN);
    return 1;
}

/*
 * A RATE floods once, unacknowledged, down the wave; a mote that missed it samples on at
 * the old rate, numbering its epochs ever further ahead of the others' (Intel lab on
 * `sinr`, seed 5: two motes of 54, and the gateway judged the rest's epochs by theirs).
 * Its parent, hearing its tuples ahead of its own epoch, sends the query's rate and base
 * down again, as it forwards a RATE; motes that hold it already take it as a duplicate
 * and stop it there. One at a time: a control packet already queued goes first.
 */
void qmsg_tell_rate(mote_state *st, uint8_t slot)
{
    uint8_t msg[QMSG_LEN];
    if (st->ctl_count)
        return;
    rate_message(msg, st->queries.slot[slot].qid, st->queries.slot[slot].epoch_units);
    forward_query(st, msg, slot);
}
