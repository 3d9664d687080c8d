/*
 * runs.h - the life of a running query on a node: start, epochs, stop.
 *
 * Each running query walks through the phases of core/schedule.h once per
 * epoch (wake and sample if it has children, transmit, wait for the parent);
 * run_advance() executes every phase whose time has come and leaves the next
 * one in run.next_at, the node's single HAL alarm being set to the earliest of
 * them (mote.c). Hearing the parent ends the wait early (run_parent_heard).
 * A stopped query (DEL, end of a FOR clause or ONCE) drains: it stops sampling
 * but keeps its slots for DRAIN_EPOCHS epochs so records still on their way up
 * are merged and sent, then its slot and state memory are released.
 */
#ifndef MOTE_CORE_RUNS_H
#define MOTE_CORE_RUNS_H

#include <stdint.h>

#include "mote_state.h"

/* A query just completed: reserve its state memory and schedule epoch 1. 0 if refused. */
uint8_t run_start(mote_state *st, uint8_t slot);

/* Release the query in `slot` and its state memory. */
void run_stop(mote_state *st, uint8_t slot);

/* Begin draining (DEL received, FOR clause done). */
void run_drain(mote_state *st, uint8_t slot);

/* Restart the schedule at the next epoch boundary (new rate, clock jump). */
void run_retime(mote_state *st, uint8_t slot);

/* Execute every phase of `slot` due at logical time `now`. */
void run_advance(mote_state *st, uint8_t slot, uint32_t now);

/* A result or beacon from the parent was heard: queries waiting for it move on. */
void run_parent_heard(mote_state *st);

/* Epoch synchronisation (§12.3): adopt a parent's epoch number if it is ahead. */
void run_adopt_epoch(mote_state *st, uint8_t slot, uint16_t epoch);

#endif /* MOTE_CORE_RUNS_H */
