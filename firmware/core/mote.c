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

#include <stddef.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "mote_state.h"
#include "processing.h"
#include "querymsg.h"
#include "results.h"
#include "runs.h"
#include "schedule.h"
#include "sharing.h"
#include "stops.h"
#include "txpath.h"

/* The whole node must fit next to a stack in the ATmega128's 4 KB (C99 static assert). */
typedef char mote_state_fits_in_budget[(sizeof(struct mote_state) <= MOTE_STATE_MAX) ? 1 : -1];
/* mote_get_stats copies the counters as the first fields of mote_stats. */
typedef char mote_counters_lead_mote_stats[
    (offsetof(mote_stats, queue_dropped) >= sizeof(mote_counters)) ? 1 : -1];

size_t mote_state_size(void) { return sizeof(mote_state); }

/* ---- power, alarm ---------------------------------------------------------- */

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
 * The parent's down slot (core/schedule.h), plus the time a packet started at its end
 * needs: a node that would sleep listens then for downward control, in the node's down
 * wave (run_send_wave: every control period's, or once an epoch).
 */
#define PARENT_SLOT_LISTEN_MS (SCHED_CTL_SLOT_MS + SCHED_TX_GUARD_MS)

static uint8_t in_parent_down_slot(const mote_state *st, uint32_t now)
{
    uint8_t depth = routing_depth(&st->rt);
    return depth != 0 && depth != ROUTING_DEPTH_NONE &&
           run_wave_since(st, now, (uint8_t)(depth - 1u)) < PARENT_SLOT_LISTEN_MS;
}

/*
 * Awake: CPU on. The radio listens too unless the result queue is full -- then
 * children's sends go unacknowledged and they keep their results (backpressure,
 * core/schedule.h). The root never sleeps, nor does a node without the slot schedule:
 * its children may send at any time (runs.c, unslotted).
 */
static uint8_t node_awake(const mote_state *st, uint32_t now)
{
    if (st->id == MOTE_ROOT_ID || !run_any(st) || (st->flags & MOTE_F_UNSLOTTED) ||
        st->radio_busy || st->listening || st->waiting || !sched_due(st->hold_until, now) ||
        !sched_due(st->ctl_hold_until, now))
        return 1;
    if (seeking_route(st) || in_parent_down_slot(st, now) || run_relays_tuples(st) ||
        run_asks_at_once(st))
        return 1;
    return (st->ctl_count && tx_gate(st)) || tx_results_may_go(st, now);
}

static void report_power(mote_state *st)
{
    uint8_t cpu = node_awake(st, mote_now(st));
    uint8_t room = st->id == MOTE_ROOT_ID || tx_takes_forwards(st);
    uint8_t radio = cpu, bits;
    /* A radio that acks whatever it hears: a node without room stops listening instead
     * (children keep their results), unless it must hear query parts it lacks
     * (core/sharing.h) or a route. */
    if (!HAL_SELECTIVE_ACKS(st->hal))
        radio = cpu && (room || seeking_route(st) || share_awaiting(st));
    bits = (uint8_t)(cpu << MOTE_PWR_CPU | radio << MOTE_PWR_RADIO);
    if (bits == st->power)
        return;
    if ((bits ^ st->power) & (1u << MOTE_PWR_CPU))
        st->hal->power(st->hal->ctx, MOTE_PWR_CPU, cpu);
    if ((bits ^ st->power) & (1u << MOTE_PWR_RADIO))
        st->hal->power(st->hal->ctx, MOTE_PWR_RADIO, radio);
    st->power = bits;
}

/*
 * Deadlines compare as distances from now, one already past as now itself. Compared
 * with each other instead, a deadline a few ms past came out later than the "nothing
 * due" sentinel, now + 0x7FFFFFFF: the difference wraps. A frame handled just after a
 * query phase fell due re-armed the alarm to the sentinel; the root, with no other
 * deadline, never woke again (seen on the AVR image, which reaches its alarms late
 * while it handles a frame).
 */
static void earliest(uint32_t now, uint32_t *next, uint32_t t)
{
    if ((int32_t)(t - now) < 0)
        t = now;
    if (t - now < *next - now)
        *next = t;
}

/* The next start or end of `depth`'s slot of the wave of `wave_ms` (open for `len`). */
static void wave_event(const mote_state *st, uint32_t now, uint32_t *next, uint32_t wave_ms,
                       uint8_t depth, uint32_t len)
{
    uint32_t since = run_wave_since(st, now, depth);
    earliest(now, next,
             now + (since < len ? len : wave_ms ? wave_ms : SCHED_CTL_PERIOD_MS) - since);
}

/* A downward packet, or a DEL of the long wave's echoes, waits for the node's own slot. */
static uint8_t down_packet_waiting(const mote_state *st)
{
    return tx_down_waiting(st) || stops_wave_waiting(st);
}

static uint8_t depth_notice_due(const mote_state *st);

/*
 * While queries run: the next moment the down-slot listening of a routed node
 * begins or ends, and the start of its own down slot when a downward packet
 * waits for it.
 */
static uint32_t down_slot_event(const mote_state *st, uint32_t now)
{
    uint32_t next = now + 0x7FFFFFFFu; /* nothing due (rearm, earliest) */
    uint32_t wave = run_send_wave(st);
    uint8_t depth = routing_depth(&st->rt), own;
    if (depth == ROUTING_DEPTH_NONE)
        return now + SCHED_CTL_PERIOD_MS;
    if (depth != 0)
        wave_event(st, now, &next, wave, (uint8_t)(depth - 1u), PARENT_SLOT_LISTEN_MS);
    /* A depth notice goes first, in the slot of the depth told (tell_depth). */
    own = depth_notice_due(st) ? st->told_depth : depth;
    if (own != depth || down_packet_waiting(st))
        wave_event(st, now, &next, wave, own, SCHED_CTL_SLOT_MS);
    return next;
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
            earliest(now, &next, st->run[i].next_at);
        }
    if (!running || seeking_route(st))
        earliest(now, &next, st->next_beacon_at);
    if (st->beacon_due == BEACON_SOON)
        earliest(now, &next, st->beacon_soon_at);
    if (st->retry_pending)
        earliest(now, &next, st->retry_at);
    if (share_awaiting(st) && !sched_due(share_next_request(st), now))
        earliest(now, &next, share_next_request(st));
    if (running && st->power && st->id != MOTE_ROOT_ID) {
        if (!sched_due(st->hold_until, now))
            earliest(now, &next, st->hold_until);
        if (!sched_due(st->ctl_hold_until, now))
            earliest(now, &next, st->ctl_hold_until);
        if (tx_results_pending(st) && !sched_due(st->send_until, now))
            earliest(now, &next, st->send_until);
        if (st->ctl_count && !sched_due(st->ctl_until, now))
            earliest(now, &next, st->ctl_until);
        for (i = 0; i < QUERY_SLOTS; i++)
            if (st->ctl_count && (st->gate_open & (1u << i)) &&
                !sched_due(run_tx_until(&st->run[i]), now))
                earliest(now, &next, run_tx_until(&st->run[i]));
    }
    if ((running && st->id != MOTE_ROOT_ID) || down_packet_waiting(st))
        earliest(now, &next, down_slot_event(st, now));
    next -= st->clock_offset;
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
    /* A node's first beacons come fast: its neighbours judge its link by them seconds
     * after boot rather than five beacon periods later, while the tree still settles
     * (net/routing.h: judged links decide which way it leaves a lossy one). */
    if (!run_any(st) && routing_packets_sent(&st->rt) < BEACON_FAST_COUNT) {
        st->beacon_soon_at = mote_now(st) + BEACON_FAST_MS / 2u +
                             mote_random_below(st, BEACON_FAST_MS / 2u);
        st->beacon_due = BEACON_SOON;
    }
}

/*
 * A depth notice. Records go by depth (core/schedule.h): a child sends in the interval
 * below its parent's and listens for downward control in the parent's down slot, both
 * as of the depth it last heard from the parent. Moved while aggregates run, a parent
 * listened elsewhere, and its children heard of it only from its packets, which -- the
 * parent's interval moved -- they slept through: their records missed it for epochs, and
 * the next level's missed them. Now a relay whose depth changes sends a beacon in the
 * down slot of the depth it told, where its children listen; each of them that moves
 * in turn tells its own children in its old slot, later in the same wave, so a subtree
 * hears of a move within one wave. A relay that loses its route tells nothing (its
 * children hear of that when they send) and, routed again, tells from its new slot.
 * 1,000-node grid on `sinr`, median of the seeds' median COUNT, seeds 1-30: 826 -> 858.5;
 * 928 with stop 36's other schedule repairs (docs/radio.md).
 */
static uint8_t depth_notice_due(const mote_state *st)
{
    uint8_t depth = routing_depth(&st->rt);
    /* (The root's depth never changes.) */
    return depth != st->told_depth && depth != ROUTING_DEPTH_NONE &&
           st->told_depth != ROUTING_DEPTH_NONE && run_aggregates_running(st) &&
           run_may_have_children(st);
}

/* 1 if the notice goes now: in the told slot, the radio free. */
static uint8_t tell_depth(mote_state *st)
{
    uint32_t now = mote_now(st);
    uint8_t due = depth_notice_due(st);
    if (due && (st->radio_busy || run_wave_since(st, now, st->told_depth) >= SCHED_CTL_SLOT_MS))
        return 0;
    if (due)
        st->ctl_until = sched_later(st->ctl_until, now + SCHED_CTL_SLOT_MS); /* tx_gate */
    st->told_depth = routing_depth(&st->rt);
    return due;
}

static void settle(mote_state *st)
{
    routing_set_duty_cycled(&st->rt, st->id != MOTE_ROOT_ID && run_any(st));
    /* Records first: the parent merges what reaches it before its own transmit time.
     * Only while aggregates run: past the channel's capacity a tuple relay's queue
     * never empties, and its beacons, the only news of its cost, stopped for the whole
     * query -- loops closed on the costs they left stale, and the beacon that answers
     * a child in a cycle (core/results.c) never went either (100-node grid, 1 s SELECT
     * on `sinr`, seed 4: a relay sent none from 77 s to past 98 s). Held back only
     * until a period had passed, they still left 2.8 times the node-seconds in loops. */
    if (tell_depth(st) || (st->beacon_due == BEACON_NOW && tx_gate(st) &&
                           !(tx_results_pending(st) && run_aggregates_running(st)) &&
                           !st->radio_busy))
        send_beacon(st);
    share_pump(st);
    stops_pump(st);
    proc_emit_more(st);
    tx_pump(st);
    report_power(st);
    rearm(st);
}

/* ---- entry points ---------------------------------------------------------- */

void mote_init(mote_state *st, uint16_t id, const mote_hal *hal)
{
    memset(st, 0, sizeof *st);
    st->hal = hal;
    st->id = id;
    st->reused_qid = QUERY_NO_QID;
    st->am_group = TOS_DEFAULT_GROUP;
    qtable_init(&st->queries);
    share_init(st);
    stops_init(st);
    radioq_init(&st->rq, tx_winavg_merge, st);
    routing_init(&st->rt, id);
    serial_rx_init(&st->srx);
    st->power = 0;
    /* Spread the first beacons so neighbours booted together do not collide. */
    st->next_beacon_at = mote_now(st) + mote_random_below(st, BEACON_PERIOD_MS);
    st->beacon_soon_at = mote_now(st) + mote_random_below(st, BEACON_FAST_MS);
    st->beacon_due = BEACON_SOON;
    report_power(st);
    rearm(st);
}

void mote_set_am_group(mote_state *st, uint8_t group)
{
    st->am_group = group;
}

void mote_on_alarm(mote_state *st)
{
    uint32_t now = mote_now(st);
    uint8_t i;
    st->alarm_armed = 0; /* consumed */
    for (i = 0; i < QUERY_SLOTS; i++)
        run_advance(st, i, now);
    /* With a query running, beacons ride on the transmit phase (runs.c) -- but not for a
     * node seeking a route: its period's end is when it may take a neighbour as deep as
     * it was (net/routing.h), and its transmit phase, moved to the unrouted slot, came
     * two or three epochs later: relays of 1,000-node grids on `sinr` stayed unrouted for
     * 24 s at 8-s epochs, with up to 300 nodes behind them. */
    if (!run_any(st) || seeking_route(st))
        tx_beacon_period(st, now);
    if (st->beacon_due == BEACON_SOON && sched_due(st->beacon_soon_at, now))
        st->beacon_due = BEACON_NOW;
    if (st->retry_pending && sched_due(st->retry_at, now)) {
        st->retry_pending = 0;
        st->held.waits = 0;
    }
    settle(st);
}

/* Returns 0 if the packet is refused (results.h): it must not be acknowledged. */
static uint8_t dispatch(mote_state *st, const uint8_t *pkt, uint16_t len, uint8_t from_uart)
{
    tos_header tos;
    const uint8_t *data = pkt + TOS_HEADER_LEN;
    if (!tos_msg_parse(&tos, pkt, len))
        return 1;
    /* The UART hop's group byte is irrelevant: TinyDB overwrites it (§1). */
    if (!from_uart && tos.group != st->am_group)
        return 1;
    switch (tos.type) {
    case AM_QUERY:
        qmsg_receive(st, data, tos.length);
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
        else if (!from_uart)
            share_on_request_overheard(st, data, tos.length);
        break;
    case AM_DATA:
    case AM_BUNDLE:
    case AM_DUMMY_RESULT:
    case AM_ROUTE_BEACON:
        if (!from_uart)
            return results_receive(st, &tos, data);
        break;
    default:
        break;
    }
    return 1;
}

uint8_t mote_on_radio_rx(mote_state *st, const uint8_t *tos_msg, uint8_t len)
{
    uint8_t taken = dispatch(st, tos_msg, len, 0);
    settle(st);
    return taken;
}

void mote_on_send_done(mote_state *st, uint8_t outcome)
{
    tx_done(st, outcome);
    settle(st);
}

void mote_on_frame_start(mote_state *st, uint8_t *tos_msg, uint8_t len)
{
    tx_frame_start(st, tos_msg, len);
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
        (void)dispatch(st, pkt, n, 1);
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
    uint8_t on = (uint8_t)(1u << MOTE_PWR_CPU | 1u << MOTE_PWR_RADIO);
    return (st->power & on) == on;
}

void mote_get_stats(const mote_state *st, mote_stats *out)
{
    const radioq_stats *q = radioq_get_stats(&st->rq);
    memcpy(out, &st->stats, sizeof st->stats); /* the common first fields (mote_stats.h) */
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
    uint8_t slot = run_slot_of(st, qid);
    return slot < QUERY_SLOTS ? st->run[slot].epoch : 0;
}

uint32_t mote_query_start(const mote_state *st, uint8_t qid)
{
    uint8_t slot = qtable_find(&st->queries, qid);
    const query *q;
    if (slot == QUERY_SLOTS)
        return 0;
    q = &st->queries.slot[slot];
    return q->base_known == QUERY_BASE_NONE
               ? 0u
               : sched_label_start(q->epoch_base, sched_epoch_ms(q->epoch_units), 1u);
}
