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

uint8_t bundle_item_size(const uint8_t qr[QR_LEN])
{
    uint8_t i;
    if (qr[QR_OFF_TYPE] != QR_TUPLE)
        return 0;
    for (i = QR_OFF_TIME + 5u; i < QR_DATA; i++)
        if (qr[i])
            return 0;
    return (uint8_t)(BUNDLE_ITEM_HEADER + BUNDLE_QR_HEAD + tuple_len(qr));
}

uint8_t bundle_put(uint8_t *out, uint8_t room, const uint8_t qr[QR_LEN], uint16_t origin)
{
    uint8_t size = bundle_item_size(qr), n, i;
    if (size == 0 || size > room)
        return 0;
    n = (uint8_t)(size - BUNDLE_ITEM_HEADER);
    le16_put(out, origin);
    out[2] = n;
    for (i = 0; i < BUNDLE_QR_HEAD; i++)
        out[BUNDLE_ITEM_HEADER + i] = qr[i];
    for (i = BUNDLE_QR_HEAD; i < n; i++)
        out[BUNDLE_ITEM_HEADER + i] = qr[QR_DATA + i - BUNDLE_QR_HEAD];
    return size;
}

uint8_t bundle_get(const uint8_t *in, uint8_t len, uint8_t qr[QR_LEN], uint16_t *origin)
{
    uint8_t n, i;
    if (len < BUNDLE_ITEM_HEADER)
        return 0;
    n = in[2];
    if (n < BUNDLE_QR_HEAD + QR_TUPLE_HEADER || n > BUNDLE_QR_HEAD + QR_DATA_LEN ||
        n > len - BUNDLE_ITEM_HEADER || in[BUNDLE_ITEM_HEADER + QR_OFF_TYPE] != QR_TUPLE)
        return 0;
    *origin = le16_get(in);
    for (i = 0; i < QR_LEN; i++)
        qr[i] = 0;
    for (i = 0; i < BUNDLE_QR_HEAD; i++)
        qr[i] = in[BUNDLE_ITEM_HEADER + i];
    for (i = BUNDLE_QR_HEAD; i < n; i++)
        qr[QR_DATA + i - BUNDLE_QR_HEAD] = in[BUNDLE_ITEM_HEADER + i];
    return (uint8_t)(BUNDLE_ITEM_HEADER + n);
}

uint8_t bundle_count(const uint8_t *in, uint8_t len)
{
    uint8_t qr[QR_LEN], count = 0, used;
    uint16_t origin;
    while (len) {
        used = bundle_get(in, len, qr, &origin);
        if (used == 0)
            return 0;
        in += used;
        len = (uint8_t)(len - used);
        count++;
    }
    return count;
}
