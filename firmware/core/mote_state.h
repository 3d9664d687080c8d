/*
 * mote_state.h - everything one node owns, in one block (core-internal).
 *
 * Platforms see `mote_state` as opaque (mote.h); the core's modules' headers declare
 * their functions on it through mote_type.h, and each module that keeps state of its own
 * declares that slice in its header: running.h the per-query schedule (query_run),
 * txpath.h the control queue's packets and the held result, sharing.h the parts a
 * neighbour asked for, stops.h the stopped queries. This header only puts the slices
 * together, and only the modules' .c files and the C unit tests include it. The size is
 * checked at compile time against MOTE_STATE_MAX (mote.c), so adding a table here is a
 * memory decision.
 *
 * Memory map (sizes on the host; the AVR build is smaller, no padding):
 *   queries      parsed plans of QUERY_SLOTS queries        (query/query.h)
 *   runs         per-query epoch/slot schedule              (core/running.h)
 *   arena        each query's group table and aggregate partial states,
 *                packed, compacted when a query ends (core/processing.h)
 *   radioq       result queue with prioritisation           (net/radioq.h)
 *   ctlq         small FIFO of control packets (query/command forwards,
 *                status replies, beacons)                   (core/txpath.h)
 *   held         the result on the air or awaiting the parent's ack (core/txpath.h)
 *   share        query parts a neighbour asked for          (core/sharing.h)
 *   stops        stopped queries remembered                 (core/stops.h)
 *   routing      collection tree                            (net/routing.h)
 *   serial       UART receiver                              (net/serial.h)
 */
#ifndef MOTE_CORE_MOTE_STATE_H
#define MOTE_CORE_MOTE_STATE_H

#include <stdint.h>

#include "../net/radioq.h"
#include "../net/routing.h"
#include "../net/serial.h"
#include "../ops/groups.h"
#include "../query/assembly.h"
#include "../result/bundle.h"
#include "../result/result.h"
#include "mote.h"
#include "mote_stats.h"
#include "running.h"
#include "schedule.h"
#include "sharing.h"
#include "stops.h"
#include "txpath.h"

/* Group tables and aggregate states of every running query. The AVR profile halves it
 * with the query slots: 336 B still hold a 2-aggregate GROUP BY of ~20 groups. */
#ifndef AGG_ARENA_BYTES
#ifdef MOTE_PROFILE_AVR
#define AGG_ARENA_BYTES 336u
#else
#define AGG_ARENA_BYTES 672u
#endif
#endif
/* Control packets waiting for the radio (55 B each). Query forwards come one part per
 * packet and sharing keeps one entry free (core/sharing.c): 3 is the least that still
 * lets a node forward while it answers a request. */
#ifndef CTLQ_LEN
#ifdef MOTE_PROFILE_AVR
#define CTLQ_LEN 3u
#else
#define CTLQ_LEN 4u
#endif
#endif
#define DRAIN_EPOCHS 2u          /* epochs a stopped query keeps merging children */
#define TIME_SYNC_TOLERANCE_MS 16u /* smaller differences are radio latency, not skew */
#define BEACON_PERIOD_MS 4096u
#define BEACON_TRIGGER_SPREAD_MS 128u /* a route change is announced within this */
/* A node's first beacons after boot, 0.5-1 interval apart (core/mote.c, send_beacon):
 * enough for a link to be judged (ROUTING_NB_SEEN_MATURE) on its averaged first packets
 * (ROUTING_AVERAGE_FIRST). */
#define BEACON_FAST_COUNT 7u
#define BEACON_FAST_MS 1024u
/* mote_state.flags */
#define MOTE_F_REQUEST_LOST 0x01u /* the last query request went unacknowledged (core/sharing.c) */
#define MOTE_F_NO_SNOOP 0x02u     /* the `snoop enabled=0` command: no MIN/MAX suppression */
#define MOTE_F_GATHERED 0x04u     /* the queued tuples waited once to fill a bundle (txpath.c) */
#define MOTE_F_CONTENDED 0x08u    /* the last result sent went unacknowledged (txpath.c) */
#define MOTE_F_UNSLOTTED 0x10u    /* the `slots enabled=0` command: no slot schedule (runs.c) */
#define MOTE_F_RECORD_LOST 0x20u  /* a record went unacknowledged through all its sends this
                                     epoch (txpath.c): the next silent parent interval counts
                                     for more (runs.c, RECORD_LOST_MISSES) */
#define BEACON_NOW 1u
#define BEACON_SOON 2u
#define SEND_RETRY_MS 8u
/* The activity tail (core/schedule.h): a parent listens this long after a tuple
 * for it; > SCHED_TX_GUARD_MS, so a child's next send, started at once, lands. */
#define ACTIVITY_HOLD_MS (SCHED_TX_GUARD_MS + RADIO_FRAME_MS) /* 86 ms */
/* How long an acknowledgement or an overheard packet vouches for the parent
 * listening: a send started within it ends inside the parent's hold. */
#define PARENT_AWAKE_MS (ACTIVITY_HOLD_MS - SCHED_TX_GUARD_MS)
/* A node that hears downward control from upstream stays awake this long after each
 * packet (core/schedule.h, the down wave): the next packet of the burst follows within it. */
#define CTL_AWAKE_MS (2u * SCHED_CTL_SLOT_MS) /* 128 ms */
#define CTL_TAIL_MS (CTL_AWAKE_MS - SCHED_TX_GUARD_MS)
/* Sends of one result before it is given up. Few: on a lossy, contended channel most
 * unacknowledged sends met a deaf (full) or sleeping parent or a collision, and every
 * blind resend takes airtime from the level that is already losing packets. Not 3: a
 * relay deaf behind a full queue (backpressure) then made lossless grids lose tuples. */
#define RESULT_MAX_TRIES 4u
/* More sends of a record while its own interval lasts (txpath.c, record_may_retry). */
#define RECORD_MAX_TRIES 10u
/* Relays this close to the root keep resending a record an interval longer (txpath.c). */
#define RECORD_LATE_DEPTH 4u
/* A tuple waits for its parent rather than retrying blind (txpath.c), so its sends
 * mostly meet a parent that is active: it gets more of them before it is given up --
 * twice as many while the queue behind it is less than half full. Where the queue
 * fills, the channel is past its capacity and the queue policy should choose what is
 * lost; where it does not, a tuple given up is lost to a link that acks one send in
 * three or four (Intel lab at 31 s: a fifth of the root's children's tuples with 6).
 * 8 and 16, not 6 and 12: SELECT yield on seeds 1-30, bench/issue10.py's networks,
 * `sinr` / `logistic`: Intel lab at 31 s .998/.971 -> .999/.984, at 4 s on `sinr`
 * .987 -> .993, 49 nodes at 4 s .945/.986 -> .947/.997, 100 at 8 s .947/.981 ->
 * .943/.989. 10 and 20 lost more than they saved where queues fill (100 at 8 s on
 * `sinr` .935, 25 at 2 s on `logistic` .974). */
#define TUPLE_MAX_TRIES 8u
#define TUPLE_MAX_TRIES_IDLE 16u
#define TUPLE_BLIND_TRIES 2u /* resends on a short timer; later ones wait for the parent */
#define TUPLE_LATE_RETRY_MS SCHED_INTERVAL_TARGET_MS /* ...or 1-2 intervals, if not heard */
#define TUPLE_BUSY_DOUBLINGS 3u /* a refused tuple's pause grows to 8 holds (txpath.c) */
/* A relay with fewer tuples queued than a bundle holds waits this long, once, for more
 * (txpath.c, wait_to_bundle). */
#define BUNDLE_GATHER_MS 250u
#define BUNDLE_GATHER_COUNT 3u
/* Random part of an aggregate record's resend pause. A record that failed once failed
 * again about half the time with 32 ms: its sibling or hidden neighbour resent into the
 * same few packet times (1,000-node grid on `sinr`, seed 1: first tries acked 78 %,
 * later ones 43-52 %). 128 ms, seeds 1-6: its COUNT 489 -> 540; MAX 25 and COUNT 100
 * unchanged on `logistic`, SELECTs untouched (records only). */
#define RECORD_RETRY_SPREAD_MS 128u
#define CHILD_MEMORY_EPOCHS 8u   /* epochs a node counts as a parent after hearing a child */
/* Silent parent intervals in a row that lose the parent when, in each, a record of ours
 * went unacknowledged through all its sends too (routing_parent_missed; otherwise
 * ROUTING_PARENT_MAX_MISSES). A parent that sleeps through our sends and says nothing
 * where we listen has moved to another slot -- or is gone; congestion, which the larger
 * count waits out, still acks some sends or is heard. A relay kept such a parent eight
 * epochs, its subtree's count lost in each. 1,000-node grid on `sinr`, median of the
 * seeds' median COUNT, seeds 1-30 / 31-60: eight misses (before) 900.2 / 860.0; two
 * 897.2 / 913.5; one 842.2 / 895.5; three 891.2 / 904.8. */
#define RECORD_LOST_MISSES 2u

struct mote_state {
    /* Ordered by alignment: no padding between the small fields. */
    const mote_hal *hal;
    uint32_t clock_offset;    /* logical time = hal now + offset, mod 2^32 (a signed sum overflows) */
    uint16_t id;
    uint16_t arena_used;

    query_table queries;
    query_run run[QUERY_SLOTS];
    uint8_t arena[AGG_ARENA_BYTES];

    radioq rq;
    ctl_packet ctlq[CTLQ_LEN];

    uint32_t next_beacon_at;  /* the periodic beacon, and the routing tick with it */
    uint32_t beacon_soon_at;  /* a triggered beacon (beacon_due == BEACON_SOON) */
    uint32_t retry_at;
    uint32_t alarm_at;
    uint32_t hold_until;      /* activity tail: keep listening until then */
    uint32_t ctl_hold_until;  /* heard downward control: listen until then, full queue or not */
    uint32_t send_until;      /* the parent is known to listen until then */
    uint32_t ctl_until;       /* children heard a query part: they listen until then */
    uint32_t request_after;   /* no query request (AM 104) before then (txpath.h) */
    held_result held;
    query_share share;        /* query parts a neighbour asked for, still to send */
    stop_memory stops;        /* stopped queries, DELs for stragglers (core/stops.h) */

    uint8_t ctl_head, ctl_count;
    uint8_t radio_busy;       /* a radio_send is in flight */
    uint8_t gate_open;        /* queries past their transmit start this epoch (bit per slot) */
    uint8_t listening;        /* queries in their children's interval (bit per slot) */
    uint8_t waiting;          /* queries waiting to hear the parent (bit per slot) */
    uint8_t answered;         /* queries a child's result of came in since they started (bit
                                 per slot): at the root, the sign that a flood landed (runs.c) */
    uint8_t power;            /* last state reported through hal.power (bit per part), and: */
    uint8_t in_flight;        /* what the radio carries: enum tx_in_flight (txpath.h) */
    uint8_t child_epochs;     /* epochs left counting as a parent (results heard) */
    uint8_t beacon_due;       /* BEACON_NOW: at the next chance; BEACON_SOON: at beacon_soon_at */
    uint8_t told_depth;       /* the depth our children last heard of (mote.c, tell_depth);
                                 0 from boot: a node's first route comes before any query
                                 runs, or costs one needless beacon */
    uint8_t no_interleave;
    uint8_t cmd_seen;
    uint8_t cmd_last_seq;     /* low byte of the last command seqNo */
    uint8_t reused_qid;       /* new query under a stopped id: stale DELs must not stop it */
    uint8_t retry_pending;
    uint8_t flags;            /* MOTE_F_* */
    uint8_t alarm_armed;      /* the platform holds an alarm at alarm_at (hal time) */
    uint8_t am_group;         /* AM group of every radio packet sent and accepted */
    uint16_t wave_units;      /* the down wave kept (schedule.h): a long epoch in 10-ms units,
                                 0 for every period's; changed only as an epoch begins */

    routing rt;
    serial_rx srx;
    mote_counters stats;
};

#endif /* MOTE_CORE_MOTE_STATE_H */
