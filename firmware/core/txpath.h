/*
 * txpath.h - everything a node sends, and when.
 *
 * Two sources share the one-packet-at-a-time radio: a small FIFO of control
 * packets (query and command forwards, status replies, route beacons), served
 * first, and the result queue (net/radioq.h, with its naive/winavg/delta
 * policy), which holds own and forwarded AM 240 results. Control packets go
 * during the node's own interval (its children are awake, waiting to hear
 * it) and, after a query part, while the children that heard it still
 * listen (the control tail, core/schedule.h); results go while the parent is
 * known to listen: from the node's transmit time through the parent's
 * interval, extended by every ack from and every packet overheard from the
 * parent, and always when the parent is the root -- but never ahead of a
 * waiting control packet. With no query running, nobody sleeps and everything goes at once
 * (core/schedule.h).
 *
 * A result leaves the queue into `held` and stays there until the parent
 * acknowledges it, or it is given up: an unacknowledged tuple
 * is resent as soon as the parent is overheard, in the next transmit slot, or
 * after a timer (one to two ACTIVITY_HOLD_MS, later about an interval; a tuple
 * the parent refused for lack of room, a pause that doubles while it stays busy),
 * up to TUPLE_MAX_TRIES sends (records: txpath.c, record_may_retry).
 *
 * Results leave the root on the UART instead (TOS addr 0x007E, protocol-66
 * frame) as soon as they are produced: the serial line is always listening.
 * The multihop header and the time stamp are written at transmission.
 */
#ifndef MOTE_CORE_TXPATH_H
#define MOTE_CORE_TXPATH_H

#include <stdint.h>

#include "../net/mhop.h"
#include "../net/radioq.h"
#include "../result/bundle.h"
#include "../result/result.h"
#include "mote_type.h"

/* A control packet waiting for the radio (the node's ctlq, CTLQ_LEN of them). */
typedef struct ctl_packet {
    uint8_t len;
    uint8_t bytes[TOS_MSG_MAX];
} ctl_packet;

/* Room for the tuples bundled after the first: the frame's payload less the smallest first item. */
#define BUNDLE_MORE_MAX (MHOP_PAYLOAD_MAX - BUNDLE_ITEM_MIN)

/*
 * The result being sent, or waiting to be resent until the parent
 * acknowledges it. The QueryResult bytes carry qid and epoch; the multihop
 * seqno of the first send is reused so the parent can drop a duplicate.
 */

typedef struct held_result {
    uint16_t origin;
    uint16_t seqno;
    uint8_t valid;
    uint8_t tries;        /* sends so far */
    uint8_t waits;        /* unacknowledged: resend when the parent is heard or next epoch */
    uint8_t prompted;     /* this send followed the parent's own: it is alive, only busy */
    uint8_t busy;         /* refusals in a row: each doubles the pause (txpath.c) */
    uint16_t to;          /* the parent it was last sent to */
    uint8_t payload[QR_LEN];
    /* Tuples bundled with it (result/bundle.h), as items: they share its sends. */
    uint8_t more_count;
    uint8_t more_len;
    uint8_t more[BUNDLE_MORE_MAX];
} held_result;

/* Queue a control packet (AM `am`, `len` data bytes) for the radio; counted if dropped. */
void tx_control(mote_state *st, uint16_t addr, uint8_t am, const uint8_t *data, uint8_t len);

/* 1 if the periodic beacon's time has come: then routing's period ticks, the beacon is
 * due (mote.c sends it) and the next one is a period away. */
uint8_t tx_beacon_period(mote_state *st, uint32_t now);

/*
 * Query requests (AM 104, core/sharing.c) are paced here, where they go on the air: no
 * request leaves before tx_request_after, and the answer to the last one is awaited
 * until then -- QREQ_GAP_MS from when it went on the air, not from when it was queued
 * (it may wait for a down slot). Sharing sets the pace for what it knows (a part just
 * came, every query complete); the air time is known only here.
 */
#define QREQ_GAP_MS 1024u
uint32_t tx_request_after(const mote_state *st);
void tx_pace_requests(mote_state *st, uint32_t until);

/* Send a packet (AM `am`) to the UART right away, framed. */
void tx_uart(mote_state *st, uint8_t am, const uint8_t *data, uint8_t len);

/*
 * A QueryResult (42 bytes) produced by `origin` with its multihop `hopcount`
 * unknown yet: to the UART at the root, into the result queue elsewhere.
 * `value` is what the DELTA policy scores. Returns 1 if accepted.
 */
uint8_t tx_result(mote_state *st, const uint8_t *qr, uint16_t origin, int16_t value);
/* The same without starting the radio: the caller queues more, then calls tx_pump. */
uint8_t tx_queue_result(mote_state *st, const uint8_t *qr, uint16_t origin, int16_t value);

/* Whether queued tuples are packed several to an entry (txpath.c, pack_tuple): under
 * NAIVE, for a parent that takes bundles. */
uint8_t tx_packs(const mote_state *st);

/* What the radio carries (mote_state.in_flight). */
enum tx_in_flight {
    TX_NOTHING = 0,
    TX_RESULT_UNICAST = 1,
    TX_RESULT_BCAST = 2,
    TX_DOWNWARD = 3, /* query part or command: the children listening hold on after it */
    TX_OTHER_CONTROL = 4,
    TX_QUERY_REQUEST = 5 /* an AM 104 to the parent: unacknowledged, it may be asked again */
};

/* Start the next transmission if the radio is free and something may go. */
void tx_pump(mote_state *st);

/* The radio finished the packet in flight: `outcome` is a HAL_SEND_* (hal.h). */
void tx_done(mote_state *st, uint8_t outcome);

/* The start symbol of the frame in flight is on the air: stamp its time sync field
 * again, so a receiver sees the time the frame began, not when it was handed over. */
void tx_frame_start(mote_state *st, uint8_t *pkt, uint8_t len);

/* 1 if control packets may go (inside some query's own interval, none running, or
 * while the node searches for a route and is awake anyway). */
uint8_t tx_gate(const mote_state *st);

/*
 * Downward control -- query parts (AM 101) and commands (AM 103) -- travels in
 * the down wave (core/schedule.h): it may go in the node's own down slot, in
 * the tail of a burst it started there (the children it woke still listen),
 * or at once when nobody sleeps. A DEL keeps to the slot even on a node that
 * runs nothing: it is for children that still run the query, and they sleep
 * but in that slot (core/stops.h).
 */
uint8_t tx_down_gate(const mote_state *st, uint8_t is_del);
/* Whether `now` is in the node's own slot of its down wave (core/schedule.h). */
uint8_t tx_in_down_slot(const mote_state *st, uint32_t now);

/* 1 if the control packet next in line is downward control. */
uint8_t tx_down_waiting(const mote_state *st);

/* 1 if results may go at `now` (the parent listens), 0 if they wait. */
uint8_t tx_results_gate(const mote_state *st, uint32_t now);

/* 1 if a result is held or queued. */
uint8_t tx_results_pending(const mote_state *st);

/* 1 if a pending result may go at `now`: the parent listens and no control packet waits. */
uint8_t tx_results_may_go(const mote_state *st, uint32_t now);

/*
 * Room for children's results: the queue keeps a place for each of the node's
 * own next readings (one per tuple query), so a relay's backlog never crowds
 * out its own tuples. A node without room withholds acks (backpressure,
 * core/schedule.h).
 */
uint8_t tx_takes_forwards(const mote_state *st);
/* The same for `results` children's results at once (a bundle, result/bundle.h). */
uint8_t tx_room_for(const mote_state *st, uint8_t results);

/* The parent was heard: it listens for a while; a held result is resent at once. */
void tx_parent_heard(mote_state *st);

/* WINAVG merge callback for the result queue (tuples of the same query only). */
uint8_t tx_winavg_merge(void *ctx, radioq_entry *dst, const radioq_entry *src);

#endif /* MOTE_CORE_TXPATH_H */
