#include "fastlane.h"

#include <string.h>

#define FLAG 0x7Eu
#define ESCAPE 0x7Du
#define ESCAPE_XOR 0x20u
#define MIN_FRAME 4u
#define PACKET_ACK 0x41u    /* protocol, token, packet, CRC */
#define PACKET_NO_ACK 0x42u /* protocol, packet, CRC */

typedef struct shape {
    uint8_t key[FASTLANE_KEY];
    uint8_t key_len;
    uint16_t n;
    uint16_t offset[FASTLANE_HOLES];
    uint8_t kind[FASTLANE_HOLES];
    uint16_t end[FASTLANE_HOLES + 1]; /* piece i is text[end[i-1], end[i]) */
    uint16_t widest;                  /* the longest line, newline included */
    uint16_t need;                    /* bytes of packet the holes read */
    char text[FASTLANE_TEXT];
} shape;

struct fastlane {
    fastlane_keyspec spec;
    uint8_t n_shapes;
    uint16_t crc[256];
    uint16_t crc2[256]; /* crc[b] run through one more zero byte */
    shape shapes[FASTLANE_SHAPES];
};

size_t fastlane_size(void)
{
    return sizeof(fastlane);
}

void fastlane_init(fastlane *fl, const fastlane_keyspec *spec)
{
    unsigned i, b;
    memset(fl, 0, sizeof(*fl));
    fl->spec = *spec;
    for (i = 0; i < 256u; i++) { /* CRC-16/XMODEM (binascii.crc_hqx with 0) */
        uint32_t c = i << 8;
        for (b = 0; b < 8u; b++)
            c = (c & 0x8000u ? (c << 1) ^ 0x1021u : c << 1) & 0xFFFFu;
        fl->crc[i] = (uint16_t)c;
    }
    /* CRC is linear: two bytes b0 b1 from state c give crc2[hi(c) ^ b0] ^ crc[lo(c) ^ b1],
     * with crc2[u] = crc[u] << 8 ^ crc[crc[u] >> 8], the first byte's table pushed on. */
    for (i = 0; i < 256u; i++)
        fl->crc2[i] = (uint16_t)(fl->crc[i] << 8 ^ fl->crc[fl->crc[i] >> 8]);
}

static uint8_t hole_size(uint8_t kind)
{
    return kind == FASTLANE_U16 || kind == FASTLANE_I16 ? 2u
           : kind == FASTLANE_U32 || kind == FASTLANE_I32 ? 4u
                                                          : 1u;
}

int fastlane_add(fastlane *fl, const uint8_t *key, uint8_t key_len, uint16_t n,
                 const uint16_t *offsets, const uint8_t *kinds, const char *text,
                 const uint16_t *ends)
{
    shape *s;
    uint16_t i;
    uint32_t widest;
    if (fl->n_shapes == FASTLANE_SHAPES || key_len > FASTLANE_KEY || n > FASTLANE_HOLES ||
        ends[n] > FASTLANE_TEXT)
        return -1;
    s = &fl->shapes[fl->n_shapes];
    memcpy(s->key, key, key_len);
    s->key_len = key_len;
    s->n = n;
    s->need = 0;
    widest = (uint32_t)ends[n] + 1u;
    for (i = 0; i < n; i++) {
        if (kinds[i] > FASTLANE_HEX8 || (i > 0 && ends[i] < ends[i - 1]))
            return -1;
        s->offset[i] = offsets[i];
        s->kind[i] = kinds[i];
        widest += kinds[i] == FASTLANE_HEX8 ? 2u : 11u; /* "-2147483648" */
        if (offsets[i] + hole_size(kinds[i]) > s->need)
            s->need = (uint16_t)(offsets[i] + hole_size(kinds[i]));
    }
    if (widest > 0xFFFFu)
        return -1;
    s->widest = (uint16_t)widest;
    for (i = 0; i <= n; i++)
        s->end[i] = ends[i];
    memcpy(s->text, text, ends[n]);
    fl->n_shapes++;
    return 0;
}

/* Unescapes raw[0, len) into out; 0 if the frame is left to Python (an escape left
 * open, or longer than the buffer). Every 0x7D takes the next byte, whatever it is. The
 * runs between escapes go by memchr and memcpy: most frames have none. */
static size_t unescape(const uint8_t *raw, size_t len, uint8_t *out)
{
    size_t i = 0, n = 0;
    while (i < len) {
        const uint8_t *esc = memchr(raw + i, ESCAPE, len - i);
        size_t run = (esc ? (size_t)(esc - raw) : len) - i;
        if (run > FASTLANE_FRAME - n)
            return 0;
        memcpy(out + n, raw + i, run);
        n += run;
        if (!esc)
            break;
        i += run + 1u;
        if (i == len || n == FASTLANE_FRAME)
            return 0;
        out[n++] = (uint8_t)(raw[i++] ^ ESCAPE_XOR);
    }
    return n;
}

/* Two bytes a step (crc2, see fastlane_init): the two table lookups do not
 * wait on each other, where the byte-wise loop waits on each byte's. */
static uint16_t crc16(const fastlane *fl, const uint8_t *p, size_t len)
{
    uint16_t c = 0;
    size_t i = 0;
    for (; i + 2u <= len; i += 2u)
        c = (uint16_t)(fl->crc2[(uint8_t)((c >> 8) ^ p[i])] ^ fl->crc[(uint8_t)(c ^ p[i + 1u])]);
    if (i < len)
        c = (uint16_t)((c << 8) ^ fl->crc[(uint8_t)((c >> 8) ^ p[i])]);
    return c;
}

static const shape *find_shape(const fastlane *fl, const uint8_t *pkt, size_t len)
{
    uint8_t key[FASTLANE_KEY];
    uint16_t nne = fl->spec.not_null_end;
    uint8_t i;
    if (len < nne || len < 5u || len <= fl->spec.qr_type_at || len > 0xFFFFu)
        return 0;
    memcpy(key, pkt + 2, 3);
    key[3] = pkt[fl->spec.qr_type_at];
    memcpy(key + 4, pkt + nne - 5u, 5);
    key[9] = (uint8_t)len;
    key[10] = (uint8_t)(len >> 8);
    for (i = 0; i < fl->n_shapes; i++) {
        const shape *s = &fl->shapes[i];
        if (s->key_len == 11u && memcmp(s->key, key, 11) == 0 && s->need <= len)
            return s;
    }
    return 0;
}

static char *put_uint(char *o, uint32_t v)
{
    char tmp[10];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n)
        *o++ = tmp[--n];
    return o;
}

static char *put_int(char *o, int32_t v)
{
    if (v < 0) {
        *o++ = '-';
        return put_uint(o, (uint32_t)0u - (uint32_t)v);
    }
    return put_uint(o, (uint32_t)v);
}

static char *put_hole(char *o, uint8_t kind, const uint8_t *p)
{
    static const char hex[] = "0123456789abcdef";
    uint32_t u;
    switch (kind) {
    case FASTLANE_U8:
        return put_uint(o, p[0]);
    case FASTLANE_I8:
        return put_int(o, (int8_t)p[0]);
    case FASTLANE_U16:
        return put_uint(o, (uint32_t)(p[0] | p[1] << 8));
    case FASTLANE_I16:
        return put_int(o, (int16_t)(uint16_t)(p[0] | p[1] << 8));
    case FASTLANE_HEX8:
        *o++ = hex[p[0] >> 4];
        *o++ = hex[p[0] & 15u];
        return o;
    default:
        u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        return kind == FASTLANE_U32 ? put_uint(o, u) : put_int(o, (int32_t)u);
    }
}

static size_t format_line(const shape *s, const uint8_t *pkt, char *out)
{
    char *o = out;
    uint16_t i, from = 0;
    for (i = 0; i < s->n; i++) {
        memcpy(o, s->text + from, (size_t)(s->end[i] - from));
        o += s->end[i] - from;
        from = s->end[i];
        o = put_hole(o, s->kind[i], pkt + s->offset[i]);
    }
    memcpy(o, s->text + from, (size_t)(s->end[s->n] - from));
    o += s->end[s->n] - from;
    *o++ = '\n';
    return (size_t)(o - out);
}

/* The head (protocol byte, token) of a finished frame whose content[0, size) the
 * Python deframer would take as a good packet (Deframer._end_of_frame): 1 for 0x42, 2 for
 * 0x41, or 0 if it is left to Python, which counts it. size 0 is unescape's "left". */
static size_t packet_head(const fastlane *fl, const uint8_t *content, size_t size)
{
    if (size < MIN_FRAME || size > fl->spec.mtu)
        return 0;
    if (crc16(fl, content, size - 2u) != (uint16_t)(content[size - 2u] | content[size - 1u] << 8))
        return 0;
    return content[0] == PACKET_NO_ACK ? 1u : content[0] == PACKET_ACK ? 2u : 0u;
}

/* The packet of a finished frame, or 0 if it is left to Python. */
static const shape *frame_packet(const fastlane *fl, const uint8_t *content, size_t size,
                                 const uint8_t **pkt, size_t *len)
{
    size_t head = packet_head(fl, content, size);
    if (!head)
        return 0;
    *pkt = content + head;
    *len = size - head - 2u;
    return find_shape(fl, *pkt, *len);
}

size_t fastlane_walk(const fastlane *fl, const uint8_t *data, size_t start, size_t end,
                     char *out, size_t cap, size_t *out_len, uint32_t *lines)
{
    uint8_t content[FASTLANE_FRAME];
    size_t pos = start;
    while (pos < end) {
        const uint8_t *flag = memchr(data + pos, FLAG, end - pos);
        size_t stop = (size_t)(flag - data), size, len;
        const uint8_t *pkt;
        const shape *s;
        if (stop == pos) { /* back-to-back flags: between two frames */
            pos++;
            continue;
        }
        size = unescape(data + pos, stop - pos, content);
        s = frame_packet(fl, content, size, &pkt, &len);
        if (!s || cap - *out_len < s->widest)
            return pos;
        *out_len += format_line(s, pkt, out + *out_len);
        (*lines)++;
        pos = stop + 1u;
    }
    return end;
}

size_t fastlane_split(const fastlane *fl, const uint8_t *data, size_t start, size_t end,
                      uint8_t *out, size_t cap, size_t *out_len, uint32_t *ends,
                      uint32_t max_packets, uint32_t *count)
{
    uint8_t content[FASTLANE_FRAME];
    size_t pos = start;
    while (pos < end) {
        const uint8_t *flag = memchr(data + pos, FLAG, end - pos);
        size_t stop = (size_t)(flag - data), size, len;
        if (stop == pos) { /* back-to-back flags: between two frames */
            pos++;
            continue;
        }
        if (*count == max_packets)
            return pos;
        size = unescape(data + pos, stop - pos, content);
        /* Only 0x42: a 0x41 frame's token would need a slot of its own, and the gateway
         * receives next to none of them. */
        if (packet_head(fl, content, size) != 1u)
            return pos;
        len = size - 3u;
        /* ends[] holds 32-bit offsets: a buffer past 4 GiB stops early, never wraps. */
        if (cap - *out_len < len || (uint64_t)*out_len + len > UINT32_MAX)
            return pos;
        memcpy(out + *out_len, content + 1, len);
        *out_len += len;
        ends[(*count)++] = (uint32_t)*out_len;
        pos = stop + 1u;
    }
    return end;
}
