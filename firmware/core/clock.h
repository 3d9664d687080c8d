/*
 * clock.h - the node's logical time, the bottom of the core.
 *
 * Logical time is the platform's clock (hal.now_ms) plus the offset time sync keeps
 * (core/timesync.c): every epoch, slot and timeout of the core is cut by it, so every
 * module reads it, and it reads nothing of theirs. The platform's random numbers come
 * through here too: one call instead of a dozen inline ones saves flash.
 */
#ifndef MOTE_CORE_CLOCK_H
#define MOTE_CORE_CLOCK_H

#include <stdint.h>

#include "mote_type.h"

/* Logical now, in ms (wraps after 49 days; compare with sched_due, schedule.h). */
uint32_t mote_now(const mote_state *st);
/* A draw in [0, span) from the platform's generator (hal.rand16), span > 0: the jitter of
 * the timers the core spreads (runs.c's transmit jitter, whose span may pass 16 bits,
 * draws inline). */
uint16_t mote_random_below(const mote_state *st, uint16_t span);

#endif /* MOTE_CORE_CLOCK_H */
