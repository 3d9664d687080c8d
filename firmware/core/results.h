/*
 * results.h - multihop packets (AM 240 results, AM 107, AM 250 beacons) on a node.
 *
 * Every one of them feeds routing (net/routing.h: link estimates, depths, the
 * parent's liveness). A result addressed to the node is a child's: a record
 * of an aggregate query joins the state of the epoch it was sampled in (TAG,
 * core/processing.h) if ours for that epoch has not gone out; a tuple is
 * queued to go on toward the root (core/txpath.h). A result overheard is a
 * neighbour's: the parent's set the clock (core/timesync.h), a sibling's
 * MIN/MAX may make ours redundant (ops/snoop.h). A result of a query the node
 * does not run stops a straggler (core/stops.h) or asks for the query
 * (core/sharing.h).
 */
#ifndef MOTE_CORE_RESULTS_H
#define MOTE_CORE_RESULTS_H

#include <stdint.h>

#include "../net/mhop.h"
#include "mote_type.h"

/* A multihop packet (`data` after the TOS header). Returns 0 if it is refused: a
 * tuple for the parent with no room to queue it (hal.h, selective acks). */
uint8_t results_receive(mote_state *st, const tos_header *tos, const uint8_t *data);

#endif /* MOTE_CORE_RESULTS_H */
