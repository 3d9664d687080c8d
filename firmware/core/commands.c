#include "commands.h"

#include "../net/le16.h"
#include "clock.h"
#include "mote_state.h"
#include "querymsg.h"
#include "runs.h"
#include "schedule.h"
#include "stops.h"
#include "txpath.h"

#define CMD_ALL_NODES 0xFFFFu
#define CMD_SEQ_WINDOW 8u

static uint8_t seq_is_new(mote_state *st, uint8_t seq)
{
    uint8_t diff = seq > st->cmd_last_seq ? (uint8_t)(seq - st->cmd_last_seq)
                                          : (uint8_t)(st->cmd_last_seq - seq);
    if (st->cmd_seen && seq <= st->cmd_last_seq && diff <= CMD_SEQ_WINDOW)
        return 0;
    st->cmd_seen = 1;
    st->cmd_last_seq = seq;
    return 1;
}

static uint8_t name_is(const uint8_t *name, const char *want)
{
    uint8_t i;
    for (i = 0; want[i]; i++)
        if (name[i] != (uint8_t)want[i])
            return 0;
    return name[i] == 0;
}

/*
 * `setrate` changes what RATE changes, the same way: epochs must stay numbered
 * alike on every node, so the root rebases and sends RATE down the wave
 * (core/querymsg.h); the other nodes only check the command and wait for that.
 */
static uint8_t set_rate(mote_state *st, uint8_t qid, int16_t units)
{
    uint8_t slot = qtable_find(&st->queries, qid);
    if (slot == QUERY_SLOTS || units <= 0 || st->queries.slot[slot].status != QUERY_RUNNING)
        return 0;
    return st->id == MOTE_ROOT_ID ? qmsg_set_rate(st, qid, units) : 1u;
}

static void reset_node(mote_state *st)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++) {
        if (st->queries.slot[i].status >= QUERY_RUNNING)
            run_stop(st, i);
        else
            qtable_free(&st->queries, i);
    }
    radioq_init(&st->rq, tx_winavg_merge, st);
    st->no_interleave = 0;
    st->flags &= (uint8_t)~(MOTE_F_NO_SNOOP | MOTE_F_UNSLOTTED);
}

/* Parameters start at p, `left` bytes. Returns 1 if the command was understood. */
static uint8_t execute(mote_state *st, const uint8_t *name, const uint8_t *p, uint8_t left)
{
    if (name_is(name, "reset")) {
        reset_node(st);
        return 1;
    }
    if (name_is(name, "qlen"))
        return left >= 1 && radioq_set_len(&st->rq, p[0]);
    if (name_is(name, "nointerleave")) {
        if (left < 1 || p[0] > 1)
            return 0;
        st->no_interleave = p[0];
        return 1;
    }
    if (name_is(name, "snoop")) {
        if (left < 1 || p[0] > 1)
            return 0;
        st->flags = (uint8_t)(p[0] ? st->flags & ~MOTE_F_NO_SNOOP : st->flags | MOTE_F_NO_SNOOP);
        return 1;
    }
    if (name_is(name, "slots")) {
        if (left < 1 || p[0] > 1)
            return 0;
        st->flags = (uint8_t)(p[0] ? st->flags & ~MOTE_F_UNSLOTTED : st->flags | MOTE_F_UNSLOTTED);
        return 1;
    }
    if (name_is(name, "setrate")) {
        uint16_t u;
        if (left < 3)
            return 0;
        u = le16_get(p + 1);
        return u < 0x8000u && set_rate(st, p[0], (int16_t)u);
    }
    if (name_is(name, "qpolicy")) {
        /* the string must be terminated inside the message */
        uint8_t i;
        for (i = 0; i < left && p[i]; i++)
            ;
        if (i == left)
            return 0;
        if (name_is(p, "naive"))
            return radioq_set_policy(&st->rq, RADIOQ_NAIVE);
        if (name_is(p, "winavg"))
            return radioq_set_policy(&st->rq, RADIOQ_WINAVG);
        if (name_is(p, "delta"))
            return radioq_set_policy(&st->rq, RADIOQ_DELTA);
        return 0;
    }
    return 0;
}

void cmd_receive(mote_state *st, const uint8_t *data, uint8_t len)
{
    uint16_t target;
    uint8_t name_end;
    if (len < CMD_HEADER_LEN + 1u)
        return;
    for (name_end = CMD_HEADER_LEN; name_end < len && data[name_end]; name_end++)
        ;
    if (name_end == len) {
        st->stats.commands_unknown++; /* name not terminated: malformed */
        return;
    }
    if (!seq_is_new(st, data[2]))
        return;
    /* A command travels the down wave (core/schedule.h): more may follow. */
    st->ctl_hold_until = sched_later(st->ctl_hold_until, mote_now(st) + CTL_AWAKE_MS);
    tx_control(st, TOS_BCAST_ADDR, AM_COMMAND, data, len);
    target = le16_get(data);
    if (target != CMD_ALL_NODES && target != st->id)
        return;
    if (execute(st, data + CMD_HEADER_LEN, data + name_end + 1, (uint8_t)(len - name_end - 1)))
        st->stats.commands_executed++;
    else
        st->stats.commands_unknown++;
}

/* The motebase extension after the StatusMessage (commands.h): who we are, and
 * the ids that are not running but whose results may still be about. */
static void status_extension(const mote_state *st, uint8_t *ext)
{
    ext[0] = 'm';
    ext[1] = 'b';
    ext[2] = STATUS_EXT_VERSION;
    ext[3] = STATUS_CAP_WIDE_STATES | STATUS_CAP_EPOCH_BASE;
    /* Every stopped or draining query is in the stop memory (core/stops.h). */
    ext[4] = stops_list(st, ext + 5, STATUS_MAX_BUSY);
}

void status_receive(mote_state *st, const uint8_t *data, uint8_t len, uint8_t from_uart)
{
    uint8_t reply[TOS_DATA_LENGTH];
    uint8_t i, n = 0;
    if (len < 1 || data[0] == 0)
        return;
    for (i = 0; i < TOS_DATA_LENGTH; i++)
        reply[i] = 0;
    for (i = 0; i < QUERY_SLOTS && n < STATUS_MAX_QUERIES; i++)
        if (st->queries.slot[i].status == QUERY_RUNNING)
            reply[2 + n++] = st->queries.slot[i].qid;
    reply[1] = n;
    status_extension(st, reply + STATUS_LEN);
    /* TinyDB sends every TinyDB message with the full 49-byte payload. */
    if (from_uart || st->id == MOTE_ROOT_ID)
        tx_uart(st, AM_STATUS, reply, TOS_DATA_LENGTH);
    else
        tx_control(st, TOS_BCAST_ADDR, AM_STATUS, reply, TOS_DATA_LENGTH);
}
