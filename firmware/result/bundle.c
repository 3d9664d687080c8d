#include "bundle.h"

#include "../net/le16.h"

/* The tuple part's length without its trailing zeros: the receiver zero-fills. */
static uint8_t tuple_len(const uint8_t qr[QR_LEN])
{
    uint8_t n = QR_DATA_LEN;
    while (n > QR_TUPLE_HEADER && qr[QR_DATA + n - 1u] == 0)
        n--;
    return n;
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
    if (!first || qr[QR_OFF_QID] != first[QR_OFF_QID] || qr[QR_OFF_IDX] != first[QR_OFF_IDX])
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
    if (qr[QR_OFF_TYPE] != QR_TUPLE)
        return 0;
    for (i = QR_OFF_TIME + 5u; i < QR_DATA; i++)
        if (qr[i])
            return 0;
    n = tuple_len(qr);
    if (shortens(qr, first))
        return (uint8_t)(BUNDLE_ITEM_HEADER + BUNDLE_SHORT_HEAD + n - QR_TUPLE_HEADER);
    return (uint8_t)(BUNDLE_ITEM_HEADER + BUNDLE_QR_HEAD + n);
}

uint8_t bundle_put(uint8_t *out, uint8_t room, const uint8_t qr[QR_LEN], uint16_t origin,
                   const uint8_t *first)
{
    uint8_t size = bundle_item_size(qr, first), n, i;
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
    for (i = 0; i < BUNDLE_QR_HEAD; i++)
        out[BUNDLE_ITEM_HEADER + i] = qr[i];
    for (i = BUNDLE_QR_HEAD; i < n; i++)
        out[BUNDLE_ITEM_HEADER + i] = qr[QR_DATA + i - BUNDLE_QR_HEAD];
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
    if (!first || m > QR_TUPLE_VALUES_MAX || m > len - BUNDLE_ITEM_HEADER - BUNDLE_SHORT_HEAD)
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
    uint8_t n, i, used;
    if (len < BUNDLE_ITEM_HEADER + BUNDLE_SHORT_HEAD)
        return 0;
    n = in[2];
    if (n & BUNDLE_SHORT) {
        used = get_short(in, len, qr, first);
        if (used)
            *origin = le16_get(in);
        return used;
    }
    if (n < BUNDLE_QR_HEAD + QR_TUPLE_HEADER || n > BUNDLE_QR_HEAD + QR_DATA_LEN ||
        n > len - BUNDLE_ITEM_HEADER || in[BUNDLE_ITEM_HEADER + QR_OFF_TYPE] != QR_TUPLE)
        return 0;
    *origin = le16_get(in);
    clear(qr);
    for (i = 0; i < BUNDLE_QR_HEAD; i++)
        qr[i] = in[BUNDLE_ITEM_HEADER + i];
    for (i = BUNDLE_QR_HEAD; i < n; i++)
        qr[QR_DATA + i - BUNDLE_QR_HEAD] = in[BUNDLE_ITEM_HEADER + i];
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
