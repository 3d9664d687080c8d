#include "trailer.h"

#include "../net/le16.h"
#include "query.h"

static uint8_t check_of(const uint8_t *t)
{
    uint8_t i, x = TRAILER_CHECK_SEED;
    for (i = 0; i < TRAILER_LEN - 1u; i++)
        x ^= t[i];
    return x;
}

uint8_t trailer_read(const uint8_t *msg, uint8_t len, qtrailer *out)
{
    const uint8_t *t = msg + TRAILER_OFFSET;
    if (len < TRAILER_OFFSET + TRAILER_LEN || t[0] != 'm' || t[1] != 'b' ||
        t[2] != TRAILER_VERSION || t[TRAILER_LEN - 1u] != check_of(t))
        return 0;
    out->flags = t[3];
    out->base = (uint32_t)le16_get(t + 4) | (uint32_t)le16_get(t + 6) << 16;
    return 1;
}

void trailer_write(uint8_t *msg, const qtrailer *q)
{
    uint8_t *t = msg + TRAILER_OFFSET;
    t[0] = 'm';
    t[1] = 'b';
    t[2] = TRAILER_VERSION;
    t[3] = q->flags;
    le16_put(t + 4, (uint16_t)(q->base & 0xFFFFu));
    le16_put(t + 6, (uint16_t)(q->base >> 16));
    t[TRAILER_LEN - 1u] = check_of(t);
}

void trailer_of_query(const query *q, qtrailer *out)
{
    out->flags = (uint8_t)((q->base_known == QUERY_BASE_SET ? TRAILER_HAS_BASE : 0u) |
                           (q->wide ? TRAILER_WIDE : 0u));
    out->base = q->base_known == QUERY_BASE_SET ? q->epoch_base : 0u;
}

void trailer_apply_flags(query *q, const qtrailer *t)
{
    q->wide = (t->flags & TRAILER_WIDE) ? 1u : 0u;
}
