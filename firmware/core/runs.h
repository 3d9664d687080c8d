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

#include "mote_type.h"
#include "running.h" /* what runs.c keeps, as the modules below it read it */

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
 * A child's record for the epoch the node planned next arrived before the node
 * began that epoch: it did not know it had children (a leaf wakes only at its
 * transmit time), or the child's parent is the root, which always listens, and
 * it passed on a record as soon as it had it (core/processing.h: groups
 * without a slot). The node begins the epoch now -- samples, and takes its
 * children's records from here on -- and transmits at the time it planned
 * (its own interval's). 1 if it did.
 */
uint8_t run_begin_early(mote_state *st, uint8_t slot, uint16_t epoch);

/* A result or (`beacon`) a beacon from the parent was heard: queries waiting for it
 * move on -- at long epochs, for its beacon only (runs.c). */
void run_parent_heard(mote_state *st, uint8_t beacon);

#endif /* MOTE_CORE_RUNS_H */
