/*
 * result.h - QueryResult encoding (wire-format §7), the 42 bytes after the
 * multihop header of an AM 240 packet.
 *
 *   0 qid | 1 result_idx | 2 epoch u16 | 4 qrType | 5 timeSyncData[5]
 *   | 10 clockCount i16 | 12 lastDiff i16 | 14 d[28]
 *
 * qrType 2 (tuple):  d = qid | numFields | notNull u32 | values in field order,
 *                    each sized by its wire type, NULL fields take no bytes.
 * qrType 3 (record): d = groupNo i16 | exprIdx | partial state (ops/agg.h: the
 *                    query's narrow or wide layout, agg_wire_size() bytes).
 * Bytes not covered by a field are zero, so equal results encode equally.
 */
#ifndef MOTE_RESULT_RESULT_H
#define MOTE_RESULT_RESULT_H

#include <stdint.h>

#include "../query/query.h"

#define QR_LEN 42u
#define QR_DATA 14u
#define QR_DATA_LEN 28u
#define QR_TUPLE_HEADER 6u
#define QR_TUPLE_VALUES_MAX (QR_DATA_LEN - QR_TUPLE_HEADER) /* 22 */
#define QR_RECORD_HEADER 3u

enum qr_type {
    QR_UNDEFINED = 0,
    QR_TUPLE = 2,
    QR_AGG_RECORD = 3
};

/* Offsets inside a QueryResult. */
#define QR_OFF_QID 0u
#define QR_OFF_IDX 1u
#define QR_OFF_EPOCH 2u
#define QR_OFF_TYPE 4u
#define QR_OFF_TIME 5u
#define QR_OFF_GROUP (QR_DATA + 0u)
#define QR_OFF_EXPR (QR_DATA + 2u)
#define QR_OFF_STATE (QR_DATA + QR_RECORD_HEADER)

/* The decoded view of a received result's header. */
typedef struct qr_view {
    uint8_t qid;
    uint8_t type;
    uint16_t epoch;
    uint32_t time_ms;        /* sender's logical time (low 32 bits) */
    int16_t group;           /* records only */
    uint8_t expr;            /* records only */
    const uint8_t *state;    /* records only: QR_DATA_LEN - 3 bytes */
} qr_view;

/*
 * Tuple of query `q` from sampled `values` (one per field, in field order).
 * Every field with a local attribute is marked not-null. Returns QR_LEN, or 0
 * if the values do not fit (queries with more are refused at assembly).
 */
uint8_t qr_encode_tuple(uint8_t out[QR_LEN], const query *q, uint16_t epoch, uint32_t time_ms,
                        const int32_t values[QUERY_MAX_FIELDS]);

/* One aggregate record: `state_len` bytes of state (<= 25). Returns QR_LEN or 0. */
uint8_t qr_encode_record(uint8_t out[QR_LEN], uint8_t qid, uint8_t result_idx, uint16_t epoch,
                         uint32_t time_ms, int16_t group, uint8_t expr_idx, const uint8_t *state,
                         uint8_t state_len);

/*
 * Average tuple `src` (standing for src_count results) into tuple `dst`
 * (dst_count results) field by field, weighted by the counts, for the radio
 * queue's WINAVG policy. 1- and 2-byte values are averaged; 4-byte values
 * (clock words) take the newer tuple's value. Returns 0, leaving dst intact,
 * unless both are tuples of query `q` with the same non-null fields.
 */
uint8_t qr_tuple_average(uint8_t *dst, uint8_t dst_count, const uint8_t *src, uint8_t src_count,
                         const query *q);

/*
 * The value the DELTA policy scores a tuple of `q` on: its first sensor field
 * (else its first non-null field), as int16; 0 if none.
 */
int16_t qr_tuple_key(const uint8_t *qr, const query *q);

/* Decode the fixed part of a received QueryResult (len bytes). 0 if too short. */
uint8_t qr_decode(qr_view *v, const uint8_t *qr, uint8_t len);

#endif /* MOTE_RESULT_RESULT_H */
