#include "sharing.h"

#include "../net/le16.h"
#include "../query/rebuild.h"
#include "../query/trailer.h"
#include "clock.h"
#include "mote_state.h"
#include "running.h"
#include "schedule.h"
#include "stops.h"
#include "txpath.h"

#define QREQ_QID 0u
#define QREQ_MASK 1u
#define QREQ_REQ_NODE 5u
#define QREQ_FROM_NODE 7u
#define CTLQ_KEEP_FREE 1u /* room left for forwards and beacons while answering */

void share_init(mote_state *st)
{
    st->share.qid = QUERY_NO_QID;
    tx_pace_requests(st, mote_now(st));
}

/* Bit `b` of a 32-bit qmsgMask; parts past bit 31 are never marked held. */
static uint8_t mask_bit(uint32_t mask, uint8_t b) { return b < 32u && ((mask >> b) & 1u); }

static uint32_t held_mask(const query *q)
{
    uint32_t mask = 0;
    uint8_t i, b;
    for (i = 0; i < q->num_fields; i++)
        if (!(q->fields_missing & (1u << i)))
            mask |= 1ul << i;
    for (i = 0; i < q->num_exprs; i++) {
        b = (uint8_t)(q->num_fields + i);
        if (b < 32u && !(q->exprs_missing & (1u << i)))
            mask |= 1ul << b;
    }
    b = (uint8_t)(q->num_fields + q->num_exprs);
    if (b < 32u && (q->parts & QPART_GOT_BUFFER))
        mask |= 1ul << b;
    return mask;
}

/* `listens`: the parent likely listens now -- a result of the query was heard, or it
 * is our transmit time; after a lost request such a chance is taken at once (tx_done). */
static void send_request(mote_state *st, uint8_t qid, uint16_t to, uint8_t listens)
{
    uint8_t msg[QREQ_LEN];
    uint8_t slot = qtable_find(&st->queries, qid);
    uint32_t now = mote_now(st);
    uint32_t mask = slot < QUERY_SLOTS ? held_mask(&st->queries.slot[slot]) : 0u;
    if ((!sched_due(tx_request_after(st), now) && !(listens && (st->flags & MOTE_F_REQUEST_LOST))) ||
        to == TOS_UART_ADDR)
        return;
    if (to == ROUTING_PARENT_NONE) { /* nobody to ask yet: again once a route may exist */
        tx_pace_requests(st, now + QREQ_GAP_MS);
        return;
    }
    msg[QREQ_QID] = qid;
    le16_put(msg + QREQ_MASK, (uint16_t)(mask & 0xFFFFu));
    le16_put(msg + QREQ_MASK + 2, (uint16_t)(mask >> 16));
    le16_put(msg + QREQ_REQ_NODE, st->id);
    le16_put(msg + QREQ_FROM_NODE, to);
    tx_control(st, to, AM_QUERY_REQUEST, msg, QREQ_LEN);
    tx_pace_requests(st, now + QREQ_GAP_MS);
    st->flags &= (uint8_t)~MOTE_F_REQUEST_LOST;
}

uint8_t share_awaiting(const mote_state *st)
{
    uint8_t i;
    if (run_assembling(st) < QUERY_SLOTS)
        return 1;
    for (i = 0; i < st->ctl_count; i++)
        if (st->ctlq[(st->ctl_head + i) % CTLQ_LEN].bytes[2] == AM_QUERY_REQUEST)
            return 1;
    return !sched_due(tx_request_after(st), mote_now(st));
}

void share_on_result(mote_state *st, uint8_t qid, uint16_t from)
{
    uint8_t slot = qtable_find(&st->queries, qid);
    if (qid == QUERY_NO_QID || (slot < QUERY_SLOTS && st->queries.slot[slot].status != QUERY_ASSEMBLING))
        return;
    if (stops_has(st, qid) && from != routing_parent(&st->rt))
        return;
    send_request(st, qid, routing_parent(&st->rt), 1);
}

void share_on_part(mote_state *st)
{
    tx_pace_requests(st, sched_later(tx_request_after(st), mote_now(st) + QREQ_GAP_MS));
}

void share_on_request_overheard(mote_state *st, const uint8_t *data, uint8_t len)
{
    uint8_t slot;
    if (len < QREQ_LEN)
        return;
    slot = qtable_find(&st->queries, data[QREQ_QID]);
    if (slot < QUERY_SLOTS && st->queries.slot[slot].status == QUERY_ASSEMBLING)
        share_on_part(st);
}

void share_on_complete(mote_state *st)
{
    if (run_assembling(st) == QUERY_SLOTS) /* else another one still waits for its parts */
        tx_pace_requests(st, mote_now(st));
}

uint32_t share_next_request(const mote_state *st) { return tx_request_after(st); }

/* Ask for the first unfinished query's parts, if there is one. */
static void ask_for_assembling(mote_state *st, uint8_t listens)
{
    uint8_t slot = run_assembling(st);
    if (slot < QUERY_SLOTS)
        send_request(st, st->queries.slot[slot].qid, routing_parent(&st->rt), listens);
}

/* An unfinished query nobody's result reminds us of: ask when the parts stopped coming. */
static void ask_for_stalled(mote_state *st)
{
    if (sched_due(tx_request_after(st), mote_now(st)))
        ask_for_assembling(st, 0);
}

void share_on_transmit(mote_state *st) { ask_for_assembling(st, 1); }

/* Send the parts of q that `mask` (a QueryRequestMessage's: bit set, held) lacks. */
static void share_parts(mote_state *st, const query *q, uint32_t mask)
{
    uint8_t i;
    st->share.fields = 0;
    st->share.exprs = 0;
    for (i = 0; i < q->num_fields; i++)
        if (!mask_bit(mask, i))
            st->share.fields |= (uint16_t)(1u << i);
    for (i = 0; i < q->num_exprs; i++)
        if (!mask_bit(mask, (uint8_t)(q->num_fields + i)))
            st->share.exprs |= (uint16_t)(1u << i);
    /* The event and numEpochs parts have no mask bit: always resent. */
    st->share.others = (uint8_t)((mask_bit(mask, (uint8_t)(q->num_fields + q->num_exprs)) ? 0u
                                                                                      : QSHARE_BUFFER) |
                                 QSHARE_EVENT | QSHARE_NEPOCHS);
    st->share.qid = q->qid;
}

void share_on_request(mote_state *st, const uint8_t *data, uint8_t len)
{
    uint8_t slot;
    uint32_t mask;
    if (len < QREQ_LEN || st->share.qid != QUERY_NO_QID)
        return;
    slot = qtable_find(&st->queries, data[QREQ_QID]);
    if (slot == QUERY_SLOTS || st->queries.slot[slot].status == QUERY_ASSEMBLING) {
        /* A child needs what we lack too: ask upstream, then it can be served -- unless
         * the query was stopped (or, at the root, is not running): then stop the child. */
        if (stops_has(st, data[QREQ_QID]) || (st->id == MOTE_ROOT_ID && slot == QUERY_SLOTS))
            stops_on_straggler(st, data[QREQ_QID]);
        else
            send_request(st, data[QREQ_QID], routing_parent(&st->rt), 0);
        return;
    }
    if (st->queries.slot[slot].status != QUERY_RUNNING)
        return;
    mask = (uint32_t)le16_get(data + QREQ_MASK) | (uint32_t)le16_get(data + QREQ_MASK + 2) << 16;
    share_parts(st, &st->queries.slot[slot], mask);
}

void share_query(mote_state *st, uint8_t slot)
{
    if (st->share.qid == QUERY_NO_QID)
        share_parts(st, &st->queries.slot[slot], 0u);
}

void share_later(mote_state *st, const uint8_t *msg)
{
    uint8_t idx = msg[QMSG_IDX];
    if (st->share.qid != QUERY_NO_QID && st->share.qid != msg[QMSG_QID])
        return; /* lost: a request will bring it */
    if (st->share.qid == QUERY_NO_QID) {
        st->share.fields = st->share.exprs = 0;
        st->share.others = 0;
        st->share.qid = msg[QMSG_QID];
    }
    if (msg[QMSG_PART] == QPART_FIELD && idx < 16u)
        st->share.fields |= (uint16_t)(1u << idx);
    else if (msg[QMSG_PART] == QPART_EXPR && idx < 16u)
        st->share.exprs |= (uint16_t)(1u << idx);
    else if (msg[QMSG_PART] == QPART_BUFFER)
        st->share.others |= QSHARE_BUFFER;
    else if (msg[QMSG_PART] == QPART_EVENT)
        st->share.others |= QSHARE_EVENT;
    else if (msg[QMSG_PART] == QPART_NEPOCHS)
        st->share.others |= QSHARE_NEPOCHS;
}

/* The next part still to send as (part, idx); 0 when none is left. */
static uint8_t next_part(query_share *sh, uint8_t *part, uint8_t *idx)
{
    uint8_t i;
    for (i = 0; i < 16u; i++) {
        if (sh->fields & (1u << i)) {
            sh->fields &= (uint16_t)~(1u << i);
            *part = QPART_FIELD, *idx = i;
            return 1;
        }
        if (sh->exprs & (1u << i)) {
            sh->exprs &= (uint16_t)~(1u << i);
            *part = QPART_EXPR, *idx = i;
            return 1;
        }
    }
    *idx = 0;
    if (sh->others & QSHARE_BUFFER) {
        sh->others &= (uint8_t)~QSHARE_BUFFER;
        *part = QPART_BUFFER;
        return 1;
    }
    if (sh->others & QSHARE_EVENT) {
        sh->others &= (uint8_t)~QSHARE_EVENT;
        *part = QPART_EVENT;
        return 1;
    }
    if (sh->others & QSHARE_NEPOCHS) {
        sh->others &= (uint8_t)~QSHARE_NEPOCHS;
        *part = QPART_NEPOCHS;
        return 1;
    }
    return 0;
}

void share_pump(mote_state *st)
{
    uint8_t msg[TOS_DATA_LENGTH];
    uint8_t part, idx, i;
    qtrailer t;
    ask_for_stalled(st);
    while (st->share.qid != QUERY_NO_QID && st->ctl_count + CTLQ_KEEP_FREE < CTLQ_LEN) {
        uint8_t slot = qtable_find(&st->queries, st->share.qid);
        if (slot == QUERY_SLOTS || st->queries.slot[slot].status == QUERY_DRAINING ||
            !next_part(&st->share, &part, &idx)) {
            st->share.qid = QUERY_NO_QID; /* done, or the query ended meanwhile */
            return;
        }
        if (!qpart_rebuild(&st->queries.slot[slot], part, idx, st->id, msg))
            continue; /* the query has no such part */
        for (i = QMSG_LEN; i < TOS_DATA_LENGTH; i++)
            msg[i] = 0;
        trailer_of_query(&st->queries.slot[slot], &t);
        trailer_write(msg, &t);
        tx_control(st, TOS_BCAST_ADDR, AM_QUERY, msg, TOS_DATA_LENGTH);
    }
}
