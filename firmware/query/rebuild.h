/*
 * rebuild.h - a held query back into AM 101 parts (query sharing, §6.5).
 *
 * A node never stores the messages a query came in (query.h), so when a
 * neighbour asks for missing parts they are encoded again from the parsed
 * form. qpart_rebuild(...) followed by qtable_receive(...) on another node
 * yields the same parsed query; what the parsed form does not keep goes out
 * as zeros, which no mote here reads: a field's nested-query op, a field the
 * catalog does not know (its name: an empty name is unknown everywhere), the
 * buffer part's contents and the event name.
 */
#ifndef MOTE_QUERY_REBUILD_H
#define MOTE_QUERY_REBUILD_H

#include <stdint.h>

#include "query.h"

/*
 * Write the ADD message for part `part` (enum qmsg_part), index `idx`, of `q`
 * into msg[0 .. QMSG_LEN), with fwdNode `fwd`. Returns 0 (msg untouched) if
 * the query has no such part or has not received it yet.
 */
uint8_t qpart_rebuild(const query *q, uint8_t part, uint8_t idx, uint16_t fwd, uint8_t *msg);

#endif /* MOTE_QUERY_REBUILD_H */
