/*
 * querymsg.h - query messages (AM 101) on a node: parts of new queries, DEL,
 * RATE, and passing them on (wire format §6.4, design.md §2).
 *
 * A part is validated and stored by query/assembly.h; here the node decides
 * whom to believe and what to pass on:
 *   - upstream (the PC at the root, the parent, anyone while unrouted) may
 *     start a new query under a stopped id; others may not revive it
 *     (core/stops.h);
 *   - the epoch base (core/schedule.h) comes with the parts: the root sets it at
 *     the first part from the PC, the others take it from the trailer
 *     (query/trailer.h); RATE rebases at the root and travels the same way;
 *   - every new part, DEL and RATE is passed on once, down the wave
 *     (core/schedule.h), with the node's own trailer.
 */
#ifndef MOTE_CORE_QUERYMSG_H
#define MOTE_CORE_QUERYMSG_H

#include <stdint.h>

#include "mote_type.h"

/* An AM 101 payload of `len` bytes, from the radio or (at the root) the PC. */
void qmsg_receive(mote_state *st, const uint8_t *msg, uint8_t len);

/* At the root: a new epoch length for query qid, as if the PC had sent RATE
 * (the `setrate` command). 0 if qid does not run or units is not an epoch. */
uint8_t qmsg_set_rate(mote_state *st, uint8_t qid, int16_t units);

/* A child of ours sent a tuple of query `slot` for an epoch ahead of ours: it samples at
 * a rate it had before a RATE it missed. Tell it ours (querymsg.c). */
void qmsg_tell_rate(mote_state *st, uint8_t slot);

#endif /* MOTE_CORE_QUERYMSG_H */
