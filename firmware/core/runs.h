/*
 * runs.h - the life of a running query on a node: start, epochs, stop.
 *
 * Each running query walks through the phases of core/schedule.h once per
 * epoch (wake and sample if it has children, transmit, wait for the parent);
 * run_advance() executes every phase whose time has come and leaves the next
 * one in run.next_at, the node's single HAL alarm being set to the earliest of
 * them (mote.c). Hearing the parent ends the wait early (run_parent_heard).
 * Epochs are numbered by time from the query's epoch base (schedule.h): after
 * each epoch the next one is the first whose work has not begun, so a node
 * that fell behind (a longer route, a clock jump) skips epochs rather than
 * mislabel them, and never works on one epoch twice.
 * A stopped query (DEL, end of a FOR clause or ONCE) drains: it stops sampling
 * but keeps its slots for DRAIN_EPOCHS epochs so records still on their way up
 * are merged and sent, then its slot and state memory are released.
 */
#ifndef MOTE_CORE_RUNS_H
#define MOTE_CORE_RUNS_H

#include <stdint.h>

#include "mote_state.h"

/* 1 if any query runs (or drains): the node keeps its slots. */
uint8_t run_any(const mote_state *st);

/* The slot of query qid if it runs or drains here, else QUERY_SLOTS. */
uint8_t run_slot_of(const mote_state *st, uint8_t qid);

/*
 * A query just completed: reserve its state memory and schedule its first
 * epoch. Without an epoch base from the query's trailer the root chooses one
 * (schedule.h: epoch 1 after the start delay); another node starts counting at
 * its next epoch boundary, as TinyDB 1.x did. 0 if refused (memory).
 */
uint8_t run_start(mote_state *st, uint8_t slot);

/* Release the query in `slot` and its state memory. */
void run_stop(mote_state *st, uint8_t slot);

/* Begin draining (DEL received, FOR clause done). */
void run_drain(mote_state *st, uint8_t slot);

/* Reschedule from the query's epoch base and length (new rate, clock jump). */
void run_retime(mote_state *st, uint8_t slot);

/* Execute every phase of `slot` due at logical time `now`. */
void run_advance(mote_state *st, uint8_t slot, uint32_t now);

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
/* The node's down wave (core/schedule.h), which it listens and sends downward control
 * in: the period of a long epoch's waves (epoch / SCHED_LONG_WAVES) in ms, or 0 for every
 * control period's (core/runs.c, take_wave). */
uint32_t run_send_wave(const mote_state *st);
/* sched_wave_since in the node's down wave. Kept out of line (core/compiler.h): link-time
 * optimisation copied it, a 32-bit multiply and modulo, into each of its five callers,
 * 190 B of the mica2 image's flash (tests/avr, FLASH_LIMIT). */
uint32_t run_wave_since(const mote_state *st, uint32_t now, uint8_t depth);
uint8_t run_relays_tuples(const mote_state *st);

/* End of the node's own interval in the epoch being worked on: its control stops. */
uint32_t run_tx_until(const query_run *run);

/*
 * A child's record for the epoch the node planned next arrived before the node
 * began that epoch: it did not know it had children (a leaf wakes only at its
 * transmit time), or the child's parent is the root, which always listens, and
 * it passed on a record as soon as it had it (core/processing.h: groups
 * without a slot). The node begins the epoch now -- samples, and takes its
 * children's records from here on -- and transmits at the time it planned
 * (its own interval's). 1 if it did.
 */
uint8_t run_begin_early(mote_state *st, uint8_t slot, uint16_t epoch);

/* A result or beacon from the parent was heard: queries waiting for it move on. */
void run_parent_heard(mote_state *st);

#endif /* MOTE_CORE_RUNS_H */
