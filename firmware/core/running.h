/*
 * running.h - what the running queries mean for the rest of the node, read only.
 *
 * The epoch driver (core/runs.c) changes a query's schedule and calls down into the
 * transmit path, stops, sharing and processing. Those need to know whether a query runs,
 * which down wave the node keeps and when its own interval ends -- they read it here,
 * below all of them, and never call the driver back.
 */
#ifndef MOTE_CORE_RUNNING_H
#define MOTE_CORE_RUNNING_H

#include <stdint.h>

#include "../ops/groups.h"
#include "mote_type.h"

/*
 * Where a query is within its epoch: the next thing to happen. A node with
 * children wakes for their interval (PH_WAKE) and transmits later in the same
 * wake-up (PH_TRANSMIT); a leaf and the root wake once (PH_WAKE_TRANSMIT).
 * After transmitting, a non-root node waits for its parent (PH_PARENT) --
 * until it hears it, or the parent's interval ends.
 */
enum run_phase {
    PH_WAKE = 0,          /* children's interval: new epoch, sample, listen */
    PH_TRANSMIT = 1,      /* own interval (+ jitter): emit records */
    PH_WAKE_TRANSMIT = 2, /* both at the transmit time (no children to hear) */
    PH_PARENT = 3         /* end of the parent's interval: stop waiting to hear it;
                             at the root: the epoch's end, emit its records */
};

typedef struct query_run {
    uint32_t epoch_start; /* logical ms: start of the epoch being worked on */
    uint32_t epoch_ms;
    uint32_t next_at;     /* logical ms of `phase` */
    uint32_t label;       /* number of the epoch planned next or being worked on (schedule.h) */
    uint16_t epoch;       /* the last epoch begun, as the wire's 16 bits; 0 before the first */
    uint16_t arena_off;   /* this query's states in the arena */
    uint16_t arena_len;
    uint8_t phase;        /* enum run_phase */
    uint8_t slot_depth;   /* depth used for this epoch's slots */
    uint8_t drain_left;   /* epochs left while QUERY_DRAINING */
    uint8_t emitted;      /* records of the current epoch: 0 not yet, then under way/done
                             (core/processing.c) -- a child's record is late from then on */
    group_table groups;   /* its slots are in the arena (core/processing.h) */
} query_run;

/* 1 if any query runs (or drains): the node keeps its slots. */
uint8_t run_any(const mote_state *st);

/* The slot of query qid if it runs or drains here, else QUERY_SLOTS. */
uint8_t run_slot_of(const mote_state *st, uint8_t qid);

/*
 * Tuples (queries without aggregates) do not fit the slots: a relay carries its
 * whole subtree's, and a level that may forward only in its own interval moves a
 * backlog up one level per epoch. So while a tuple query runs, a node that has
 * (or may get) children stays awake and forwards at radio speed, as TinyDB 1.x
 * stayed awake for short epochs; leaves keep sleeping between their slots.
 * run_tuples_running: a tuple query runs (then every parent listens).
 * run_relays_tuples: this node is such a relay.
 */
uint8_t run_tuples_running(const mote_state *st);
uint8_t run_relays_tuples(const mote_state *st);

/* The first slot of a query still missing parts (core/sharing.h), else QUERY_SLOTS. */
uint8_t run_assembling(const mote_state *st);

/*
 * A query still misses parts while a tuple query runs: the parent relays our tuples,
 * so it listens all along. The node asks for the parts at once and stays awake for
 * them, where it would ask at its transmit time and sleep till then -- beside a tuple
 * query that took one hop an epoch of that query (the parts' flood is lossy).
 */
uint8_t run_asks_at_once(const mote_state *st);

/* An aggregate query runs: records go by the slot schedule, timed by depth. */
uint8_t run_aggregates_running(const mote_state *st);
/* The running query slots with (has_agg 1) or without aggregates, a bit per slot. */
uint8_t run_kind_slots(const mote_state *st, uint8_t has_agg);

/* Whether a neighbour routes through the node, or may: it then listens in its
 * children's interval (running.c). */
uint8_t run_may_have_children(const mote_state *st);

/* The node's down wave (core/schedule.h), which it listens and sends downward control
 * in: the period of a long epoch's waves (epoch / SCHED_LONG_WAVES) in ms, or 0 for every
 * control period's (core/runs.c, take_wave). */
uint32_t run_send_wave(const mote_state *st);
/* sched_wave_since in the node's down wave. Kept out of line (core/compiler.h): link-time
 * optimisation copied it, a 32-bit multiply and modulo, into each of its five callers,
 * 190 B of the mica2 image's flash (tests/avr, FLASH_LIMIT). */
uint32_t run_wave_since(const mote_state *st, uint32_t now, uint8_t depth);

/* End of the epoch being worked on. */
static inline uint32_t run_epoch_end(const query_run *run)
{
    return run->epoch_start + run->epoch_ms;
}

/* End of the node's own interval in the epoch being worked on: its control stops. */
uint32_t run_tx_until(const query_run *run);

#endif /* MOTE_CORE_RUNNING_H */
