/*
 * assembly.h - building queries from AM 101 parts (wire-format §5, §6.4).
 *
 * A query arrives as one 40-byte QueryMessage per field, per expression and
 * per optional buffer / event / numEpochs part, in any order, possibly
 * repeated. Each part is validated completely before it touches a slot, then
 * parsed into the compact form of query.h; two 16-bit masks track which
 * fields and expressions are still missing. Unlike TinyDB 1.x, any number of
 * queries (up to QUERY_SLOTS) may be assembled at the same time.
 *
 * A query is complete when no field or expression is missing, a buffer part
 * arrived unless the output is the radio, an event part arrived if one is
 * announced, and numEpochs arrived if a FOR clause is announced.
 *
 * Control messages act on known queries: DEL_MSG stops a query (an unfinished
 * one is discarded, a running one is marked draining), RATE_MSG sets a new
 * epochDuration. DROP_TABLE needs EEPROM tables (Matchbox), which motes here
 * do not have, so it is ignored like in the default TinyDBApp build.
 */
#ifndef MOTE_QUERY_ASSEMBLY_H
#define MOTE_QUERY_ASSEMBLY_H

#include <stdint.h>

#include "query.h"

#define QMSG_LEN 40u /* sizeof(QueryMessage); radio copies are padded to 49 */

/* QueryMessage offsets (§5.1). */
#define QMSG_QID 0u
#define QMSG_FWD_NODE 1u
#define QMSG_MSG_TYPE 3u
#define QMSG_NUM_FIELDS 4u
#define QMSG_NUM_EXPRS 5u
#define QMSG_FROM_BUFFER 6u
#define QMSG_FLAGS 7u
#define QMSG_EPOCH 8u
#define QMSG_PART 10u
#define QMSG_IDX 11u
#define QMSG_TIME 12u
#define QMSG_CLOCK 17u
#define QMSG_U 19u

enum qmsg_type {
    QMSG_ADD = 0,
    QMSG_DEL = 1,
    QMSG_MODIFY = 2,
    QMSG_RATE = 3,
    QMSG_DROP_TABLE = 5
};

enum qmsg_part {
    QPART_FIELD = 0,
    QPART_EXPR = 1,
    QPART_BUFFER = 2,
    QPART_EVENT = 3,
    QPART_NEPOCHS = 4
};

typedef enum qasm_outcome {
    QASM_REJECTED = 0,  /* truncated or malformed: nothing changed */
    QASM_NO_SLOT,       /* new query but every slot busy: dropped */
    QASM_DUPLICATE,     /* part already held, or query already running: nothing changed */
    QASM_STORED,        /* new part stored, query still incomplete */
    QASM_COMPLETED,     /* new part completed the query: slot is QUERY_RUNNING */
    QASM_DELETED,       /* DEL_MSG stopped a known query (freed or draining) */
    QASM_RATE_CHANGED,  /* RATE_MSG changed the epoch of a known query */
    QASM_UNKNOWN_QID,   /* DEL / RATE for a query this node does not hold */
    QASM_IGNORED        /* DROP_TABLE: not supported without EEPROM tables */
} qasm_outcome;

typedef struct query_table {
    query slot[QUERY_SLOTS];
} query_table;

void qtable_init(query_table *t);

/* Slot index holding `qid` (any status but FREE), or QUERY_SLOTS. */
uint8_t qtable_find(const query_table *t, uint8_t qid);

/*
 * Apply one QueryMessage of `len` bytes (>= QMSG_LEN). *slot receives the
 * index of the affected slot when there is one (QUERY_SLOTS otherwise).
 */
qasm_outcome qtable_receive(query_table *t, const uint8_t *msg, uint8_t len, uint8_t *slot);

/* 1 if an ADD/MODIFY message of `len` bytes is well formed (what qtable_receive checks first). */
uint8_t qtable_add_is_valid(const uint8_t *msg, uint8_t len);

/* Release a slot (query finished, or its runtime could not be set up). */
void qtable_free(query_table *t, uint8_t slot);

#endif /* MOTE_QUERY_ASSEMBLY_H */
