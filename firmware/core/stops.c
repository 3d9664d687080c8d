#include "stops.h"

#include "../query/assembly.h"
#include "clock.h"
#include "mote_state.h"
#include "running.h"
#include "schedule.h"
#include "txpath.h"

#define DEL_TTL 3u /* u.ttl of a DEL, as the Java tool sends it */
#define ECHO_MASK(i) (3u << (2u * (i)))

void stops_init(mote_state *st)
{
    uint8_t i;
    for (i = 0; i < STOPS_REMEMBERED; i++)
        st->stops.qid[i] = QUERY_NO_QID;
    st->stops.head = 0;
    st->stops.due = 0;
    st->stops.echoes = 0;
    st->stops.del_after = mote_now(st);
    st->stops.reply_after = st->stops.del_after;
}

/* Whether the node keeps the long epochs' down wave (core/schedule.h): its children that
 * sleep hear it only in its slot of that wave, or just after they send. */
static uint8_t long_wave(const mote_state *st)
{
    return run_send_wave(st) != 0u;
}

static uint8_t index_of(const mote_state *st, uint8_t qid)
{
    uint8_t i;
    for (i = 0; i < STOPS_REMEMBERED; i++)
        if (st->stops.qid[i] == qid)
            return i;
    return STOPS_REMEMBERED;
}

uint8_t stops_has(const mote_state *st, uint8_t qid)
{
    return qid != QUERY_NO_QID && index_of(st, qid) < STOPS_REMEMBERED;
}

void stops_remember(mote_state *st, uint8_t qid)
{
    uint8_t i;
    if (qid == QUERY_NO_QID || stops_has(st, qid))
        return;
    i = st->stops.head;
    st->stops.qid[i] = qid;
    st->stops.due &= (uint8_t)~(1u << i);
    st->stops.echoes &= (uint8_t)~ECHO_MASK(i);
    st->stops.head = (uint8_t)((i + 1u) % STOPS_REMEMBERED);
}

void stops_forget(mote_state *st, uint8_t qid)
{
    uint8_t i = index_of(st, qid);
    if (i < STOPS_REMEMBERED) {
        st->stops.qid[i] = QUERY_NO_QID;
        st->stops.due &= (uint8_t)~(1u << i);
        st->stops.echoes &= (uint8_t)~ECHO_MASK(i);
    }
}

static void send_del(mote_state *st, uint8_t qid)
{
    uint8_t msg[TOS_DATA_LENGTH];
    uint8_t i;
    for (i = 0; i < TOS_DATA_LENGTH; i++)
        msg[i] = 0;
    msg[QMSG_QID] = qid;
    msg[QMSG_FWD_NODE] = (uint8_t)(st->id & 0xFFu);
    msg[QMSG_FWD_NODE + 1u] = (uint8_t)(st->id >> 8);
    msg[QMSG_MSG_TYPE] = QMSG_DEL;
    msg[QMSG_U] = DEL_TTL;
    tx_control(st, TOS_BCAST_ADDR, AM_QUERY, msg, TOS_DATA_LENGTH);
}

void stops_on_straggler(mote_state *st, uint8_t qid)
{
    uint8_t i;
    uint32_t now;
    if (qid == QUERY_NO_QID)
        return;
    if (st->id == MOTE_ROOT_ID)
        stops_remember(st, qid); /* the root runs what the gateway runs: nothing else */
    i = index_of(st, qid);
    if (i == STOPS_REMEMBERED)
        return;
    now = mote_now(st);
    st->stops.due |= (uint8_t)(1u << i);
    if (long_wave(st)) {
        /* The straggler listens for a moment after its send (ACTIVITY_HOLD_MS after the
         * ack): the reply goes now, ahead of the tuple this node forwards for it --
         * queued after that, it came too late (sinr 100-node grid at 8 s: a leaf sent
         * three epochs on, each reply starting as it fell asleep). And it is no echo:
         * the sleeping siblings hear those only in the wave (stops_pump).
         * A copy goes in our next wave as well, when the straggler listens for its
         * parent anyway: the reply alone must end inside ACTIVITY_HOLD_MS of the ack,
         * and a parent whose radio or channel was busy, or every neighbour replying at
         * once (`logistic`, no capture), missed it epoch after epoch once the echoes were
         * spent (`logistic` 100-node grid at 8 s, seed 8: a leaf's six results after the
         * stop drew 4-8 replies each, all collided or came as it slept; it sampled 8
         * epochs on). */
        if (sched_due(st->stops.reply_after, now) && st->ctl_count < CTLQ_LEN) {
            st->stops.reply_after = now + STOPS_REPLY_GAP_MS;
            send_del(st, qid); /* a DEL needs no slot there (core/txpath.c, tx_down_gate) */
        }
        return;
    }
    /* Not a control period after the last DEL: by then the straggler sleeps again.
     * Replies keep a gap of their own, so a burst of its results asks one. */
    if ((int32_t)(now - (st->stops.del_after - SCHED_CTL_PERIOD_MS)) >= (int32_t)STOPS_REPLY_GAP_MS)
        st->stops.del_after = now;
    /* The straggler is awake now -- it just sent, and listens for the ack and sends
     * on -- while in the down slot it may well be sending to its parent: the DEL
     * goes at once rather than wait for it (one per control period still). */
    st->ctl_until = sched_later(st->ctl_until, now + STOPS_REPLY_MS);
}

void stops_echo(mote_state *st, uint8_t qid)
{
    uint8_t i = index_of(st, qid);
    if (qid == QUERY_NO_QID || i == STOPS_REMEMBERED)
        return;
    st->stops.echoes = (uint8_t)((st->stops.echoes & ~ECHO_MASK(i)) | STOPS_ECHOES << (2u * i));
    st->stops.due |= (uint8_t)(1u << i);
    /* the first copy is on its way now: the echoes follow a period apart -- in a long
     * wave, a wave apart (stops_pump) */
    st->stops.del_after = mote_now(st) + (long_wave(st) ? SCHED_CTL_SLOT_MS : SCHED_CTL_PERIOD_MS);
}

uint8_t stops_wave_waiting(const mote_state *st)
{
    return st->stops.due && long_wave(st);
}

/*
 * In a long wave the echoes go only in the node's own slot, one a wave: queued at any
 * other time, an echo left in a straggler reply's window (stops_on_straggler), heard by
 * that straggler alone, and the wave its sleeping siblings listen in carried nothing
 * (sinr 100-node grid at 8 s: a leaf below such a relay sampled four epochs after the
 * stop). Sending the first echo right behind the first copy, in the same slot, stopped
 * no more nodes: the slot is crowded with the level's copies already.
 */
void stops_pump(mote_state *st)
{
    uint8_t i, wave = long_wave(st);
    uint32_t now = mote_now(st);
    if (!st->stops.due || st->ctl_count == CTLQ_LEN || !sched_due(st->stops.del_after, now) ||
        (wave && !tx_in_down_slot(st, now)))
        return;
    for (i = 0; i < STOPS_REMEMBERED; i++)
        if (st->stops.due & (1u << i)) {
            uint8_t left = (uint8_t)((st->stops.echoes >> (2u * i)) & 3u);
            st->stops.due &= (uint8_t)~(1u << i);
            if (left) { /* an echo: more may follow */
                st->stops.echoes = (uint8_t)(st->stops.echoes - (1u << (2u * i)));
                if (left > 1u)
                    st->stops.due |= (uint8_t)(1u << i);
            }
            send_del(st, st->stops.qid[i]);
            /* the next: a period later, or in the next wave */
            st->stops.del_after = now + (wave ? SCHED_CTL_SLOT_MS : SCHED_CTL_PERIOD_MS);
            return;
        }
}

uint8_t stops_list(const mote_state *st, uint8_t *out, uint8_t max)
{
    uint8_t n = 0, k;
    for (k = 1; k <= STOPS_REMEMBERED && n < max; k++) {
        uint8_t i = (uint8_t)((st->stops.head + STOPS_REMEMBERED - k) % STOPS_REMEMBERED);
        if (st->stops.qid[i] != QUERY_NO_QID)
            out[n++] = st->stops.qid[i];
    }
    return n;
}
