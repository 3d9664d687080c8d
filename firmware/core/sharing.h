/*
 * sharing.h - query sharing (wire format §6.5): how a node that missed query
 * parts gets them from a neighbour.
 *
 * Query parts are flooded once per node, as broadcasts nobody acknowledges,
 * to neighbours that sleep most of the epoch once queries run; any of them
 * can miss a part. A node therefore asks for what it lacks with a
 * QueryRequestMessage (AM 104: qid | qmsgMask u32 | reqNode | fromNode), in
 * two situations:
 *   - it hears a result (AM 240) of a query it does not run, from a child, a
 *     sibling or its parent (TinyDB's trigger). The id of the last stopped
 *     query counts only from the parent: it may be a new query reusing the
 *     id, and only upstream parts pass the stopped-id guard (mote.c);
 *   - at its transmit time it still holds an unfinished query.
 *   - it holds an unfinished query and no part of it came for QREQ_GAP_MS: a
 *     part every neighbour missed (a collision right next to the root, where
 *     the flood starts) leaves nobody running the query, so no result would
 *     ever trigger the request.
 * Unlike TinyDB, which asked the result's sender, the request always goes to
 * the parent, in the node's own transmit time: the parent listens then, and
 * its answer comes in its own interval, when the node waits for it. A parent
 * that lacks the query itself passes the request on to its own parent; the
 * root has every query.
 * One request per QREQ_GAP_MS at most -- unless the parent did not acknowledge
 * it: then the next trigger asks again. A node whose only query is unfinished
 * has no transmit time, and its requests, sent whenever it heard a result,
 * mostly found the parent asleep or deaf behind a full queue; waiting a whole
 * gap after each lost one left 3 of 24 nodes of the lossy 5x5 grid (seed 1)
 * without the query for good. The mask says which parts the
 * requester holds (bit i < numFields: field i; bit numFields + j: expression
 * j; bit numFields + numExprs: the buffer part; bits past 31 cannot be set,
 * so those parts are always sent).
 *
 * A node running the query answers by re-encoding the parts the mask lacks
 * (query/rebuild.h) and broadcasting them as ordinary forwards, a few at a
 * time as the control queue has room; unlike TinyDB 1.x (A9) it also resends
 * the event and numEpochs parts, without which the query cannot complete.
 * One query is answered at a time; a request for another one meanwhile is
 * dropped (its requester asks again).
 */
#ifndef MOTE_CORE_SHARING_H
#define MOTE_CORE_SHARING_H

#include <stdint.h>

#include "mote_type.h"

/*
 * Query sharing (wire format §6.5): parts of a running query that a neighbour
 * asked for with a QueryRequestMessage and that are not on the air yet; they
 * are rebuilt from the parsed query one at a time as the control queue has room.
 */
typedef struct query_share {
    uint8_t qid;              /* QUERY_NO_QID: nothing to send */
    uint8_t others;           /* QSHARE_* parts still to send */
    uint16_t fields;          /* bit i: field part i still to send */
    uint16_t exprs;           /* bit j: expression part j still to send */
} query_share;

#define QSHARE_BUFFER 0x01u
#define QSHARE_EVENT 0x02u
#define QSHARE_NEPOCHS 0x04u

#define QREQ_LEN 9u

void share_init(mote_state *st);

/* A result of query `qid` was heard from neighbour `from`. */
void share_on_result(mote_state *st, uint8_t qid, uint16_t from);

/* The node's transmit time: ask the parent for the parts an unfinished query lacks. */
void share_on_transmit(mote_state *st);

/* A part of an unfinished query was stored: wait for the others before asking. */
void share_on_part(mote_state *st);

/* A query completed: no answer is awaited for it any more. */
void share_on_complete(mote_state *st);

/* When an unfinished query should next be asked for (only meaningful while
 * share_awaiting); the node's alarm covers it. */
uint32_t share_next_request(const mote_state *st);

/* 1 while a query is unfinished or an answer to our last request may still come:
 * keep listening to the parent, even with a full result queue. */
uint8_t share_awaiting(const mote_state *st);

/* Send every part of the running query in `slot` again, as to a neighbour that asked for
 * them all (the root's echo of a query nobody answers, core/runs.c). */
void share_query(mote_state *st, uint8_t slot);

/* A QueryRequestMessage (AM 104) addressed to this node. */
void share_on_request(mote_state *st, const uint8_t *data, uint8_t len);

/* One addressed to a neighbour: for a query we lack parts of too, its answer is a
 * broadcast we may hear, so our own request waits (share_on_part). */
void share_on_request_overheard(mote_state *st, const uint8_t *data, uint8_t len);

/*
 * The forward of ADD message `msg` found the control queue full: send the part
 * later, rebuilt, like an answer (the root must not lose the PC's parts, which
 * nobody else holds yet).
 */
void share_later(mote_state *st, const uint8_t *msg);

/* Queue the next requested parts while the control queue has room. */
void share_pump(mote_state *st);

#endif /* MOTE_CORE_SHARING_H */
