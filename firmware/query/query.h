/*
 * query.h - a query as the mote keeps it: parsed, compact, bounded.
 *
 * An AM 101 part is 40 bytes; sixteen expressions of four queries kept raw
 * would take 2.5 KB. Assembly therefore parses every part on arrival into the
 * forms below (a field is one catalog id, an expression 14 bytes) and never
 * stores a message. Everything here is fixed-size: QUERY_SLOTS queries of at
 * most QUERY_MAX_FIELDS fields and QUERY_MAX_EXPRS expressions.
 */
#ifndef MOTE_QUERY_QUERY_H
#define MOTE_QUERY_QUERY_H

#include <stdint.h>

/* Queries held at once. The AVR profile (docs/architecture.md, "Memory profiles")
 * keeps two: each slot is 263 B of parsed plan plus its schedule, and the mica2 has 4 KB. */
#ifndef QUERY_SLOTS
#ifdef MOTE_PROFILE_AVR
#define QUERY_SLOTS 2u
#else
#define QUERY_SLOTS 4u
#endif
#endif
#define QUERY_MAX_FIELDS 16u
#define QUERY_MAX_EXPRS 16u
#define QUERY_NO_QID 0xFFu      /* kNO_QUERY: 0xFF is never a running query */
#define QUERY_EPOCH_ONCE 0x7FFF /* epochDuration of a one-shot query */
#define QUERY_NO_GROUP 0xFFu    /* qexpr.u.agg.group_field: no GROUP BY */
#define QUERY_STRING_LEN 8u

/* Expression kinds. Wire opType 0/1/2; string selections get their own kind. */
enum qexpr_kind {
    QEXPR_SEL = 0,
    QEXPR_AGG = 1,
    QEXPR_TEMPORAL_AGG = 2,
    QEXPR_STRING_SEL = 3
};

typedef struct qexpr {
    uint8_t kind;     /* enum qexpr_kind */
    uint8_t field;    /* index into the query's fields */
    uint8_t op;       /* enum sel_op for selections, aggregate id (agg.h) otherwise */
    uint8_t field_op; /* enum field_op applied to the field first */
    int16_t field_const;
    union {
        int16_t value;                    /* numeric selection constant */
        char str[QUERY_STRING_LEN];       /* string selection constant, NUL padded */
        struct {
            uint8_t group_field;          /* field index or QUERY_NO_GROUP */
            uint8_t group_op;             /* enum field_op for the group number */
            int16_t group_const;
            uint8_t arg0;                 /* window (WIN*) or new bits (EXPAVG) */
            uint8_t arg1;                 /* sliding distance (WIN*) */
            uint16_t state_off;           /* this expression's states in the agg arena */
        } agg;
    } u;
} qexpr;

/* Slot life cycle. */
enum query_status {
    QUERY_FREE = 0,
    QUERY_ASSEMBLING = 1, /* parts still missing */
    QUERY_RUNNING = 2,
    QUERY_DRAINING = 3    /* deleted or FOR clause done: no sampling, children still merged */
};

/* query.parts: non-field/expression parts seen. */
#define QPART_GOT_BUFFER 0x01u
#define QPART_GOT_EVENT 0x02u
#define QPART_GOT_NEPOCHS 0x04u

/* Wire flag byte (QueryMessage offset 7). */
#define QFLAG_FROM_CATALOG 0x01u
#define QFLAG_HAS_EVENT 0x02u
#define QFLAG_HAS_FOR 0x04u
#define QFLAG_BUFFER_SHIFT 3u
#define QBUFFER_RADIO 0u

typedef struct query {
    uint8_t qid;
    uint8_t status;          /* enum query_status */
    uint8_t num_fields;
    uint8_t num_exprs;
    uint16_t fields_missing; /* bit i: field part i not received yet */
    uint16_t exprs_missing;  /* bit i: expression part i not received yet */
    uint8_t flags;           /* wire flag byte */
    uint8_t parts;           /* QPART_GOT_* */
    uint8_t from_buffer;     /* 0xFF = sensors */
    uint8_t has_agg;         /* any expression other than a selection */
    int16_t epoch_units;     /* 10-ms units, or QUERY_EPOCH_ONCE */
    uint16_t num_epochs;     /* FOR clause; 0 = unbounded */
    uint32_t epoch_base;     /* K: epoch e starts at (K + e - 1) x epoch length (core/schedule.h) */
    uint8_t base_known;      /* QUERY_BASE_*: where epoch_base came from */
    uint8_t wide;            /* aggregate state layout (ops/agg.h): 0 narrow, 1 wide */
    uint8_t tuple_bytes;     /* sum of field sizes (tuples only) */
    uint8_t fields[QUERY_MAX_FIELDS]; /* catalog ids, CATALOG_NULL_ATTR if unknown */
    qexpr exprs[QUERY_MAX_EXPRS];
} query;

/* query.base_known */
#define QUERY_BASE_NONE 0u    /* not known yet */
#define QUERY_BASE_GUESSED 1u /* counted from the node's own start: no trailer came */
#define QUERY_BASE_SET 2u     /* chosen by the root, carried in the query's trailer */

#define QUERY_IS_AGG_EXPR(e) ((e)->kind == QEXPR_AGG || (e)->kind == QEXPR_TEMPORAL_AGG)

#endif /* MOTE_QUERY_QUERY_H */
