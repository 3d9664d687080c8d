/*
 * mote_state.h - everything one node owns, in one block (core-internal).
 *
 * Platforms see `mote_state` as opaque (mote.h); the core's modules and the C
 * unit tests include this header. The size is checked at compile time against
 * MOTE_STATE_MAX (mote.c), so adding a table here is a memory decision.
 *
 * Memory map (sizes on the host; the AVR build is smaller, no padding):
 *   queries      parsed plans of QUERY_SLOTS queries        (query/query.h)
 *   runs         per-query epoch/slot schedule and groups
 *   arena        aggregate partial states of all queries, packed, compacted
 *                when a query ends
 *   radioq       result queue with prioritisation           (net/radioq.h)
 *   ctlq         small FIFO of control packets (query/command forwards,
 *                status replies, beacons)
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
#include "mote.h"
#include "mote_stats.h"

#define AGG_ARENA_BYTES 560u
#define CTLQ_LEN 4u
#define DRAIN_EPOCHS 2u          /* epochs a stopped query keeps merging children */
#define TIME_SYNC_TOLERANCE_MS 16u /* smaller differences are radio latency, not skew */
#define BEACON_PERIOD_MS 4096u
#define SEND_RETRY_MS 8u

/*
 * Where a query is within its epoch: the next thing to happen. Three alarms
 * per epoch: the node wakes once (children's interval), samples right away,
 * transmits in its own interval and sleeps after its parent's.
 */
enum run_phase {
    PH_WAKE = 0,     /* children's interval: new epoch, sample, radio on */
    PH_TRANSMIT = 1, /* own interval (+ jitter): emit records, open the send gate */
    PH_SLEEP = 2     /* after the parent's interval: gate closed, radio off */
};

typedef struct query_run {
    uint32_t epoch_start; /* logical ms */
    uint32_t epoch_ms;
    uint32_t next_at;     /* logical ms of `phase` */
    uint32_t tx_until;    /* end of the node's own interval: the send gate closes */
    uint16_t epoch;       /* current epoch number, 1-based once started */
    uint16_t arena_off;   /* this query's states in the arena */
    uint16_t arena_len;
    uint8_t phase;        /* enum run_phase */
    uint8_t slot_depth;   /* depth used for this epoch's slots */
    uint8_t drain_left;   /* epochs left while QUERY_DRAINING */
    uint8_t emitted;      /* records of the current epoch already sent */
    group_table groups;
} query_run;

typedef struct ctl_packet {
    uint8_t len;
    uint8_t bytes[TOS_MSG_MAX];
} ctl_packet;

struct mote_state {
    const mote_hal *hal;
    uint16_t id;
    int32_t clock_offset;     /* logical time = hal now + offset */

    query_table queries;
    query_run run[QUERY_SLOTS];
    uint16_t arena_used;
    uint8_t arena[AGG_ARENA_BYTES];

    radioq rq;
    ctl_packet ctlq[CTLQ_LEN];
    uint8_t ctl_head, ctl_count;
    uint8_t radio_busy;       /* a radio_send is in flight */
    uint8_t gate_open;        /* queries past their transmit start this epoch (bit per slot) */
    uint8_t listening;        /* queries in an awake interval (bit per slot) */
    uint8_t power_on;         /* last state reported through hal.power */
    uint8_t beacon_due;
    uint8_t no_interleave;
    uint8_t cmd_seen;
    uint8_t cmd_last_seq;     /* low byte of the last command seqNo */
    uint8_t stopped_qid;      /* last query stopped: its late parts must not revive it */
    uint32_t next_beacon_at;
    uint32_t retry_at;
    uint8_t retry_pending;
    uint8_t alarm_armed;      /* the platform holds an alarm at alarm_at (hal time) */
    uint32_t alarm_at;

    routing rt;
    serial_rx srx;
    mote_stats stats;
};

/* Logical now. */
uint32_t mote_now(const mote_state *st);

#endif /* MOTE_CORE_MOTE_STATE_H */
