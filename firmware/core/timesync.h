/*
 * timesync.h - the node's logical clock follows its upstream (§12.2).
 *
 * Logical time is the HAL's clock plus an offset. A node adopts the time its
 * parent (or the root) stamps into query parts and results -- differences
 * below TIME_SYNC_MIN_MS are radio latency, not skew -- so every node cuts
 * epochs at the same instants (core/schedule.h). Both ends take the time at
 * the frame's start symbol where the platform reports it (hal.h): a stamp
 * taken when the frame is handed to the radio ages by the backoff and the
 * airtime, 20-40 ms, and only the stamps that aged past the threshold are
 * adopted, so each hop's clock fell ~35 ms behind its parent's, a depth-4
 * node's by ~100 ms, most of a 125 ms interval at 1 s epochs (then 8 a second). A jump of a quarter epoch or
 * more would tear a query's slot schedule: it is planned afresh.
 */
#ifndef MOTE_CORE_TIMESYNC_H
#define MOTE_CORE_TIMESYNC_H

#include <stdint.h>

#include "mote_type.h"

#define TIME_SYNC_MIN_MS 32 /* TinyDB's checkTime threshold */

/* Adopt `remote_ms`, the logical time an upstream neighbour stamped (not at the root). */
void timesync_adopt(mote_state *st, uint32_t remote_ms);

#endif /* MOTE_CORE_TIMESYNC_H */
