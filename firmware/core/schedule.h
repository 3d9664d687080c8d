/*
 * schedule.h - epoch boundaries and the slotted communication schedule
 *              (TODS 2005 §6.1.1, design.md §2).
 *
 * Epochs of a query are aligned on multiples of the epoch length in the
 * node's logical time (synchronised from the parent, §12.2), so every node of
 * the tree starts epoch k at the same instant without exchanging start times.
 * The epoch is cut into SCHED_INTERVALS equal intervals, numbered back from
 * its end. A node at depth d
 *     listens      in interval d+1 (its children transmit),
 *     transmits    in interval d   (records go to the parent, which listens),
 *     overhears    in interval d-1 (its parent transmits: time/epoch sync,
 *                                   route liveness, snooping a sibling's parent),
 * and sleeps otherwise, so a partial aggregate climbs one level per interval
 * and reaches the root (depth 0, last interval) within the epoch it was
 * sampled in. Interval length = epoch / SCHED_INTERVALS (at least 1 ms);
 * nodes deeper than SCHED_MAX_DEPTH, or without a route, use the slot of
 * SCHED_MAX_DEPTH. A node samples when it wakes for its children's interval:
 * one wake-up per epoch instead of two (the paper samples at the epoch start;
 * the reading still belongs to the same epoch).
 *
 * All times are logical milliseconds modulo 2^32; compare with sched_due().
 */
#ifndef MOTE_CORE_SCHEDULE_H
#define MOTE_CORE_SCHEDULE_H

#include <stdint.h>

#define SCHED_MAX_DEPTH 14u
#define SCHED_INTERVALS (SCHED_MAX_DEPTH + 2u)
#define SCHED_EPOCH_UNIT_MS 10u
#define SCHED_ONCE_MS 1024u /* length of the single epoch of an ONCE query */

/* Epoch length in ms for an epochDuration in 10-ms units (0x7FFF = ONCE). */
uint32_t sched_epoch_ms(int16_t units);

uint32_t sched_interval_ms(uint32_t epoch_ms);

/* First epoch start at or after `now`. */
uint32_t sched_next_boundary(uint32_t now, uint32_t epoch_ms);

/* Slot depth used for a routing depth (clamped; unrouted -> SCHED_MAX_DEPTH). */
uint8_t sched_slot_depth(uint8_t depth);

/*
 * Start of interval `k` counted back from the end of the epoch that starts at
 * `epoch_start`: interval k spans [end - (k+1)*I, end - k*I).
 */
uint32_t sched_interval_start(uint32_t epoch_start, uint32_t epoch_ms, uint8_t k);

/* 1 if logical time `t` has been reached at `now` (wrap-safe). */
static inline uint8_t sched_due(uint32_t t, uint32_t now) { return (int32_t)(now - t) >= 0; }

#endif /* MOTE_CORE_SCHEDULE_H */
