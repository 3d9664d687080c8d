#include "bundle.h"

#include "../net/le16.h"

/* The header of a result's data part: a tuple's (qid, numFields, notNull) or a
 * record's (groupNo, exprIdx). */
static uint8_t data_header_len(uint8_t type)
{
    return type == QR_TUPLE ? QR_TUPLE_HEADER : QR_RECORD_HEADER;
}

/* The data part's length without its trailing zeros (the receiver zero-fills), at
 * least its header. */
static uint8_t data_len(const uint8_t qr[QR_LEN])
{
    uint8_t n = QR_DATA_LEN, least = data_header_len(qr[QR_OFF_TYPE]);
    while (n > least && qr[QR_DATA + n - 1u] == 0)
        n--;
    return n;
}

/* A whole item's bytes before the data part: a record's carry its timeSyncData. */
static uint8_t head_len(uint8_t type)
{
    return type == QR_AGG_RECORD ? BUNDLE_RECORD_HEAD : BUNDLE_QR_HEAD;
}

/* qr's epoch less first's, modulo 2^16 as epochs wrap. */
static int16_t epoch_step(const uint8_t qr[QR_LEN], const uint8_t first[QR_LEN])
{
    return (int16_t)(uint16_t)(le16_get(&qr[QR_OFF_EPOCH]) - le16_get(&first[QR_OFF_EPOCH]));
}

/* Whether `qr` may follow `first` as a short item: everything but the epoch and the
 * values is the first's, and the epoch is near it. */
static uint8_t shortens(const uint8_t qr[QR_LEN], const uint8_t *first)
{
    uint8_t i;
    int16_t step;
    if (!first || qr[QR_OFF_TYPE] != QR_TUPLE || first[QR_OFF_TYPE] != QR_TUPLE ||
        qr[QR_OFF_QID] != first[QR_OFF_QID] || qr[QR_OFF_IDX] != first[QR_OFF_IDX])
        return 0;
    for (i = 0; i < QR_TUPLE_HEADER; i++)
        if (qr[QR_DATA + i] != first[QR_DATA + i])
            return 0;
    step = epoch_step(qr, first);
    return step >= -BUNDLE_EPOCH_REACH && step <= BUNDLE_EPOCH_REACH;
}

uint8_t bundle_item_size(const uint8_t qr[QR_LEN], const uint8_t *first)
{
    uint8_t i, n;
    if (qr[QR_OFF_TYPE] != QR_TUPLE && qr[QR_OFF_TYPE] != QR_AGG_RECORD)
        return 0;
    for (i = BUNDLE_RECORD_HEAD; i < QR_DATA; i++)
        if (qr[i])
            return 0;
    n = data_len(qr);
    if (shortens(qr, first))
        return (uint8_t)(BUNDLE_ITEM_HEADER + BUNDLE_SHORT_HEAD + n - QR_TUPLE_HEADER);
    return (uint8_t)(BUNDLE_ITEM_HEADER + head_len(qr[QR_OFF_TYPE]) + n);
}

uint8_t bundle_put(uint8_t *out, uint8_t room, const uint8_t qr[QR_LEN], uint16_t origin,
                   const uint8_t *first)
{
    uint8_t size = bundle_item_size(qr, first), n, i, head;
    if (size == 0 || size > room)
        return 0;
    le16_put(out, origin);
    n = (uint8_t)(size - BUNDLE_ITEM_HEADER);
    if (shortens(qr, first)) {
        out[2] = (uint8_t)(BUNDLE_SHORT + n - BUNDLE_SHORT_HEAD);
        out[3] = (uint8_t)epoch_step(qr, first);
        for (i = BUNDLE_SHORT_HEAD; i < n; i++)
            out[BUNDLE_ITEM_HEADER + i] = qr[QR_DATA + QR_TUPLE_HEADER + i - BUNDLE_SHORT_HEAD];
        return size;
    }
    out[2] = n;
    head = head_len(qr[QR_OFF_TYPE]);
    for (i = 0; i < n; i++)
        out[BUNDLE_ITEM_HEADER + i] = qr[i < head ? i : QR_DATA + i - head];
    return size;
}

static void clear(uint8_t qr[QR_LEN])
{
    uint8_t i;
    for (i = 0; i < QR_LEN; i++)
        qr[i] = 0;
}

/* A short item: `m` value bytes after its epoch's step, the rest from `first`. */
static uint8_t get_short(const uint8_t *in, uint8_t len, uint8_t qr[QR_LEN], const uint8_t *first)
{
    uint8_t m = (uint8_t)(in[2] - BUNDLE_SHORT), i;
    int16_t step;
    if (!first || first[QR_OFF_TYPE] != QR_TUPLE || m > QR_TUPLE_VALUES_MAX ||
        m > len - BUNDLE_ITEM_HEADER - BUNDLE_SHORT_HEAD)
        return 0;
    clear(qr);
    for (i = 0; i < BUNDLE_QR_HEAD; i++)
        qr[i] = first[i];
    step = in[3] < 0x80u ? in[3] : (int16_t)(in[3] - 0x100);
    le16_put(&qr[QR_OFF_EPOCH], (uint16_t)(le16_get(&first[QR_OFF_EPOCH]) + (uint16_t)step));
    for (i = 0; i < QR_TUPLE_HEADER; i++)
        qr[QR_DATA + i] = first[QR_DATA + i];
    for (i = 0; i < m; i++)
        qr[QR_DATA + QR_TUPLE_HEADER + i] = in[BUNDLE_ITEM_HEADER + BUNDLE_SHORT_HEAD + i];
    return (uint8_t)(BUNDLE_ITEM_HEADER + BUNDLE_SHORT_HEAD + m);
}

uint8_t bundle_get(const uint8_t *in, uint8_t len, uint8_t qr[QR_LEN], uint16_t *origin,
                   const uint8_t *first)
{
    uint8_t n, i, used, type, head;
    if (len < BUNDLE_ITEM_HEADER + BUNDLE_SHORT_HEAD)
        return 0;
    n = in[2];
    if (n & BUNDLE_SHORT) {
        used = get_short(in, len, qr, first);
        if (used)
            *origin = le16_get(in);
        return used;
    }
    if (n <= BUNDLE_QR_HEAD || n > len - BUNDLE_ITEM_HEADER)
        return 0;
    type = in[BUNDLE_ITEM_HEADER + QR_OFF_TYPE];
    head = head_len(type);
    if ((type != QR_TUPLE && type != QR_AGG_RECORD) ||
        n < head + data_header_len(type) ||
        n > head + QR_DATA_LEN)
        return 0;
    *origin = le16_get(in);
    clear(qr);
    for (i = 0; i < n; i++)
        qr[i < head ? i : QR_DATA + i - head] = in[BUNDLE_ITEM_HEADER + i];
    return (uint8_t)(BUNDLE_ITEM_HEADER + n);
}

uint8_t bundle_count(const uint8_t *in, uint8_t len)
{
    uint8_t first[QR_LEN], qr[QR_LEN], count = 0, used;
    uint16_t origin;
    while (len) {
        used = bundle_get(in, len, count ? qr : first, &origin, count ? first : 0);
        if (used == 0)
            return 0;
        in += used;
        len = (uint8_t)(len - used);
        count++;
    }
    return count;
}
