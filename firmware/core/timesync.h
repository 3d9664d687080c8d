/*
 * timesync.h - the node's logical clock follows its upstream (§12.2).
 *
 * Logical time is the HAL's clock plus an offset. A node adopts the time its
 * parent (or the root) stamps into query parts and results -- differences
 * below TIME_SYNC_MIN_MS are radio latency, not skew -- so every node cuts
 * epochs at the same instants (core/schedule.h). A jump of a quarter epoch or
 * more would tear a query's slot schedule: it is planned afresh.
 */
#ifndef MOTE_CORE_TIMESYNC_H
#define MOTE_CORE_TIMESYNC_H

#include <stdint.h>

#include "mote_state.h"

#define TIME_SYNC_MIN_MS 32 /* TinyDB's checkTime threshold */

/* Adopt `remote_ms`, the logical time an upstream neighbour stamped (not at the root). */
void timesync_adopt(mote_state *st, uint32_t remote_ms);

#endif /* MOTE_CORE_TIMESYNC_H */
