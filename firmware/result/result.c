#include "result.h"

#include "../net/le16.h"
#include "../query/catalog.h"

static void put_header(uint8_t *out, uint8_t qid, uint8_t idx, uint16_t epoch, uint8_t type,
                       uint32_t time_ms)
{
    uint8_t i;
    for (i = 0; i < QR_LEN; i++)
        out[i] = 0;
    out[QR_OFF_QID] = qid;
    out[QR_OFF_IDX] = idx;
    le16_put(out + QR_OFF_EPOCH, epoch);
    out[QR_OFF_TYPE] = type;
    /* timeSyncData: low byte of time.high32 (always 0 for a 32-bit clock), then time.low32 */
    le16_put(out + QR_OFF_TIME + 1, (uint16_t)(time_ms & 0xFFFFu));
    le16_put(out + QR_OFF_TIME + 3, (uint16_t)(time_ms >> 16));
}

static void put_value(uint8_t *p, uint8_t size, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t i;
    for (i = 0; i < size; i++, u >>= 8)
        p[i] = (uint8_t)(u & 0xFFu);
}

uint8_t qr_encode_tuple(uint8_t out[QR_LEN], const query *q, uint16_t epoch, uint32_t time_ms,
                        const int32_t values[QUERY_MAX_FIELDS])
{
    uint8_t *d = out + QR_DATA, *p = d + QR_TUPLE_HEADER;
    uint32_t not_null = 0;
    uint8_t i;
    if (q->tuple_bytes > QR_TUPLE_VALUES_MAX)
        return 0;
    put_header(out, q->qid, 0, epoch, QR_TUPLE, time_ms);
    d[0] = q->qid;
    d[1] = q->num_fields;
    for (i = 0; i < q->num_fields; i++) {
        uint8_t size = catalog_wire_size(q->fields[i]);
        if (size == 0)
            continue;
        put_value(p, size, values[i]);
        p += size;
        not_null |= (uint32_t)1u << i;
    }
    le16_put(d + 2, (uint16_t)(not_null & 0xFFFFu));
    le16_put(d + 4, (uint16_t)(not_null >> 16));
    return QR_LEN;
}

uint8_t qr_encode_record(uint8_t out[QR_LEN], uint8_t qid, uint8_t result_idx, uint16_t epoch,
                         uint32_t time_ms, int16_t group, uint8_t expr_idx, const uint8_t *state,
                         uint8_t state_len)
{
    uint8_t i;
    if (state_len > QR_DATA_LEN - QR_RECORD_HEADER)
        return 0;
    put_header(out, qid, result_idx, epoch, QR_AGG_RECORD, time_ms);
    le16_put(out + QR_OFF_GROUP, (uint16_t)group);
    out[QR_OFF_EXPR] = expr_idx;
    for (i = 0; i < state_len; i++)
        out[QR_OFF_STATE + i] = state[i];
    return QR_LEN;
}

uint8_t qr_decode(qr_view *v, const uint8_t *qr, uint8_t len)
{
    uint16_t g;
    if (len < QR_LEN)
        return 0;
    v->qid = qr[QR_OFF_QID];
    v->type = qr[QR_OFF_TYPE];
    v->epoch = le16_get(qr + QR_OFF_EPOCH);
    v->time_ms = (uint32_t)le16_get(qr + QR_OFF_TIME + 1) |
                 (uint32_t)le16_get(qr + QR_OFF_TIME + 3) << 16;
    g = le16_get(qr + QR_OFF_GROUP);
    v->group = (int16_t)(g >= 0x8000u ? (int32_t)g - 0x10000 : (int32_t)g);
    v->expr = qr[QR_OFF_EXPR];
    v->state = qr + QR_OFF_STATE;
    return 1;
}

/* Offset in the tuple values of field `f`, given the local field sizes. */
static uint8_t value_offset(const query *q, uint8_t f)
{
    uint8_t i, off = 0;
    for (i = 0; i < f; i++)
        off = (uint8_t)(off + catalog_wire_size(q->fields[i]));
    return off;
}

static int32_t get_value(const uint8_t *p, uint8_t attr)
{
    uint8_t size = catalog_wire_size(attr), type = catalog_get(attr)->type;
    if (size == 1)
        return type == TOS_TYPE_INT8 ? (int32_t)(p[0] >= 0x80 ? p[0] - 0x100 : p[0]) : p[0];
    if (size == 2) {
        int32_t u = le16_get(p);
        return type == TOS_TYPE_INT16 && u >= 0x8000 ? u - 0x10000 : u;
    }
    return 0;
}

static uint8_t same_tuple_shape(const uint8_t *a, const uint8_t *b, const query *q)
{
    uint8_t i;
    if (a[QR_OFF_TYPE] != QR_TUPLE || b[QR_OFF_TYPE] != QR_TUPLE || a[QR_OFF_QID] != q->qid ||
        b[QR_OFF_QID] != q->qid || a[QR_DATA + 1] != q->num_fields ||
        b[QR_DATA + 1] != q->num_fields)
        return 0;
    for (i = 2; i < QR_TUPLE_HEADER; i++)
        if (a[QR_DATA + i] != b[QR_DATA + i])
            return 0;
    return 1;
}

uint8_t qr_tuple_average(uint8_t *dst, uint8_t dst_count, const uint8_t *src, uint8_t src_count,
                         const query *q)
{
    uint8_t *dv = dst + QR_DATA + QR_TUPLE_HEADER;
    const uint8_t *sv = src + QR_DATA + QR_TUPLE_HEADER;
    uint8_t i, off = 0;
    int32_t total = (int32_t)dst_count + src_count;
    if (!same_tuple_shape(dst, src, q) || total == 0 || q->tuple_bytes > QR_TUPLE_VALUES_MAX)
        return 0;
    for (i = 0; i < q->num_fields; i++) {
        uint8_t attr = q->fields[i], size = catalog_wire_size(attr);
        if (size == 1 || size == 2) {
            int32_t avg = (get_value(dv + off, attr) * dst_count +
                           get_value(sv + off, attr) * src_count) / total;
            put_value(dv + off, size, avg);
        } else {
            uint8_t k;
            for (k = 0; k < size; k++)
                dv[off + k] = sv[off + k];
        }
        off = (uint8_t)(off + size);
    }
    return 1;
}

int16_t qr_tuple_key(const uint8_t *qr, const query *q)
{
    uint8_t i, pick = QUERY_MAX_FIELDS;
    for (i = 0; i < q->num_fields && pick == QUERY_MAX_FIELDS; i++)
        if (q->fields[i] < CATALOG_COUNT && catalog_get(q->fields[i])->source == CATALOG_SRC_SENSOR)
            pick = i;
    for (i = 0; i < q->num_fields && pick == QUERY_MAX_FIELDS; i++)
        if (q->fields[i] < CATALOG_COUNT)
            pick = i;
    if (pick == QUERY_MAX_FIELDS || catalog_wire_size(q->fields[pick]) > 2)
        return 0;
    return (int16_t)get_value(qr + QR_DATA + QR_TUPLE_HEADER + value_offset(q, pick),
                              q->fields[pick]);
}
