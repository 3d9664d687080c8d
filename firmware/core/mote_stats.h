/*
 * mote_stats.h - counters a node keeps about itself (read through
 * mote_get_stats; mirrored in mote_api.cdef for Python).
 */
#ifndef MOTE_CORE_MOTE_STATS_H
#define MOTE_CORE_MOTE_STATS_H

#include <stdint.h>

#include "../query/catalog.h"

/* What a node counts itself; the state keeps these (core/mote_state.h). */
#define MOTE_COUNTER_FIELDS                                                                  \
    uint32_t results_sent;       /* own tuples and records handed to the queue / UART */      \
    uint32_t results_forwarded;  /* children's results passed on toward the root */          \
    uint32_t records_merged;     /* children's aggregate records merged (TAG) */             \
    uint32_t records_late;       /* children's records dropped: not for the epoch under way */ \
    uint32_t records_suppressed; /* own MIN/MAX records dropped after snooping a sibling */   \
    uint32_t parts_rejected;     /* malformed or truncated AM 101 parts */                   \
    uint32_t parts_no_slot;      /* new queries dropped: all slots busy */                   \
    uint32_t queries_refused;    /* complete queries that could not run (state memory) */    \
    uint32_t group_overflows;    /* readings or records lost: no free group slot */          \
    uint32_t ctl_dropped;        /* control packets lost: control queue full */              \
    uint32_t results_unacked;    /* results given up: parent silent, or left after a send */ \
    uint32_t results_unsent;     /* records given up: no queue room before the next epoch */ \
    uint32_t commands_executed;                                                              \
    uint32_t commands_unknown;   /* unknown names or bad parameters */                       \
    uint32_t epochs;             /* epochs started over all queries */                       \
    uint16_t samples[CATALOG_COUNT]; /* samples taken per attribute id (wraps at 2^16) */

typedef struct mote_counters {
    MOTE_COUNTER_FIELDS
} mote_counters;

/* What mote_get_stats reports: the node's counters, then its radio queue's (net/radioq.h). */
typedef struct mote_stats {
    MOTE_COUNTER_FIELDS
    uint32_t queue_dropped; /* radio queue: refused or trimmed */
    uint32_t queue_merged;  /* radio queue: WINAVG merges */
    uint32_t queue_evicted; /* radio queue: DELTA evictions */
} mote_stats;

#endif /* MOTE_CORE_MOTE_STATS_H */
