/*
 * radioq.h - bounded output queue of result packets with prioritisation
 *            (TODS 2005 §6.3.1, design.md §2).
 *
 * Mechanism:
 *   - A fixed pool of RADIOQ_MAX_LEN entries; the usable length is set at run
 *     time (radioq_set_len, default RADIOQ_DEFAULT_LEN). An entry holds the
 *     bytes that follow the TOS_MHopMsg header (the QueryResult, <=
 *     MHOP_PAYLOAD_MAX) plus metadata. The multihop header itself is written at
 *     transmission time (routing_fill_header with the entry's origin), so local
 *     and forwarded results share the queue.
 *   - Entries never move; a small array of slot indices keeps arrival order.
 *   - Policies, applied when a push finds the queue full:
 *       NAIVE   FIFO; the newcomer is dropped.
 *       WINAVG  the oldest entry and the next oldest one of the same
 *               (qid, origin) are averaged into one entry carrying the sum of
 *               their counts, through the query engine's radioq_merge_fn (only
 *               it knows the tuple layout); the newcomer is then appended. If no
 *               such pair exists or the merge refuses, the newcomer is dropped.
 *       DELTA   score = |value - last delivered value| for the entry's
 *               (qid, origin) (RADIOQ_SCORE_MAX if none delivered yet); the
 *               highest score is sent first (oldest on ties), the lowest is
 *               evicted (the newcomer is dropped if it is the lowest), and the
 *               remaining entries of a (qid, origin) are rescored after each of
 *               its deliveries. Out-of-order delivery is intended.
 *   - Urgent entries (the query engine's aggregate records, which must reach
 *     the parent within its interval) go first, oldest first, under every
 *     policy; the policy orders the rest.
 *   - radioq_pop hands over the next entry (a copy) and counts it delivered:
 *     delivery means "handed to the radio"; link retries are the HAL's job.
 *   - Last delivered values are remembered in a ring of RADIOQ_HISTORY
 *     (qid, origin) slots, overwriting the oldest.
 * All operations are O(RADIOQ_MAX_LEN) at most; nothing allocates.
 */
#ifndef MOTE_NET_RADIOQ_H
#define MOTE_NET_RADIOQ_H

#include <stdint.h>

#include "mhop.h"

/* At most 8: slot occupancy is one byte of bits. An entry is 60 B: the AVR profile
 * keeps 4, TinyDB's own mica2 default queue length (`qlen`) was 5. */
#ifndef RADIOQ_MAX_LEN
#ifdef MOTE_PROFILE_AVR
#define RADIOQ_MAX_LEN 4u
#else
#define RADIOQ_MAX_LEN 8u
#endif
#endif
#ifndef RADIOQ_DEFAULT_LEN
#define RADIOQ_DEFAULT_LEN RADIOQ_MAX_LEN /* a relay buffers what it can; `qlen 5` as in the paper */
#endif
#define RADIOQ_PAYLOAD_MAX MHOP_PAYLOAD_MAX /* 42 */
#ifndef RADIOQ_HISTORY
#define RADIOQ_HISTORY 8u
#endif
#define RADIOQ_SCORE_MAX 0xFFFFu

typedef enum radioq_policy {
    RADIOQ_NAIVE = 0,
    RADIOQ_WINAVG = 1,
    RADIOQ_DELTA = 2
} radioq_policy;

typedef struct radioq_entry {
    uint16_t origin;  /* originaddr for the mhop header */
    uint16_t epoch;
    int16_t value;    /* the reading DELTA scores on, chosen by the query engine */
    uint16_t score;   /* DELTA priority (kept current under every policy) */
    uint8_t qid;
    uint8_t count;    /* results this entry stands for (> 1 after WINAVG merges, saturates) */
    uint8_t len;      /* valid bytes in payload */
    uint8_t urgent;   /* goes before every entry that is not (an aggregate record, due in
                         its interval), whatever the policy */
    uint8_t packed;   /* 0: payload is one result; n > 0: the queue's user packed n results
                         into it (core/txpath.c, as a bundle body: result/bundle.h) */
    uint8_t payload[RADIOQ_PAYLOAD_MAX];
} radioq_entry;

/*
 * WINAVG merge: average `src` (standing for src->count results) into `dst`
 * (dst->count results), weighting by count, in place. The queue then sets
 * dst->count to the sum and keeps dst's position. Return 1 if merged, 0 if
 * these two cannot be averaged (e.g. aggregate records); dst must then be
 * left unchanged.
 */
typedef uint8_t (*radioq_merge_fn)(void *ctx, radioq_entry *dst, const radioq_entry *src);

typedef struct radioq_stats {
    uint32_t enqueued;  /* accepted by push */
    uint32_t dropped;   /* newcomers refused, entries trimmed by set_len */
    uint32_t merged;    /* WINAVG merges */
    uint32_t evicted;   /* DELTA evictions of a queued entry */
    uint32_t delivered; /* handed over by pop */
} radioq_stats;

typedef struct radioq {
    radioq_stats stats;
    /* private */
    radioq_entry slot[RADIOQ_MAX_LEN];
    radioq_merge_fn merge;
    void *merge_ctx;
    uint16_t hist_origin[RADIOQ_HISTORY];
    int16_t hist_value[RADIOQ_HISTORY];
    uint8_t hist_qid[RADIOQ_HISTORY];
    uint8_t order[RADIOQ_MAX_LEN]; /* slot indices, oldest first */
    uint8_t used;                  /* bit i set: slot[i] holds an entry */
    uint8_t count;
    uint8_t len;
    uint8_t policy;
    uint8_t hist_count;
    uint8_t hist_head;
} radioq;

/* Empty queue, NAIVE, RADIOQ_DEFAULT_LEN; merge may be NULL (WINAVG then drops). */
void radioq_init(radioq *q, radioq_merge_fn merge, void *merge_ctx);

/* Returns 0 for an unknown policy (nothing changes). */
uint8_t radioq_set_policy(radioq *q, uint8_t policy);
uint8_t radioq_policy_of(const radioq *q);

/*
 * 1..RADIOQ_MAX_LEN, else returns 0 and nothing changes. Shrinking below the
 * current count removes entries as a full push would (newest under NAIVE and
 * WINAVG, lowest score under DELTA), counted as dropped.
 */
uint8_t radioq_set_len(radioq *q, uint8_t len);
uint8_t radioq_len(const radioq *q);

/*
 * Offer a result: payload (len <= RADIOQ_PAYLOAD_MAX bytes after the mhop
 * header) with its metadata (count is forced to >= 1). Returns 1 if queued
 * (possibly after a merge or an eviction), 0 if dropped or malformed.
 */
uint8_t radioq_push(radioq *q, const radioq_entry *e);

/* The entry radioq_pop would return, NULL if empty; valid until the next change. */
const radioq_entry *radioq_peek(const radioq *q);

/* The entry pushed last, NULL if empty: its user may add to its payload in place. */
radioq_entry *radioq_newest(radioq *q);

/* Remove the next entry into *out; returns 0 if the queue is empty. */
uint8_t radioq_pop(radioq *q, radioq_entry *out);

uint8_t radioq_count(const radioq *q);
const radioq_stats *radioq_get_stats(const radioq *q);

#endif /* MOTE_NET_RADIOQ_H */
