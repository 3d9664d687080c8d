/*
 * le16.h - explicit little-endian field access for wire buffers.
 *
 * Every multi-byte field on a TinyOS 1.x wire is little-endian (AVR native).
 * Layouts are packed and read/written byte by byte through these helpers, never
 * by casting a struct over a buffer: the host running the emulator may differ
 * in byte order and alignment from the mote.
 */
#ifndef MOTE_NET_LE16_H
#define MOTE_NET_LE16_H

#include <stdint.h>

static inline uint16_t le16_get(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline void le16_put(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)(v >> 8);
}

/* int16 fields: two's complement, without an implementation-defined conversion. */
static inline int16_t le16_get_i(const uint8_t *p)
{
    uint16_t v = le16_get(p);

    return v < 0x8000u ? (int16_t)v : (int16_t)(-(int32_t)(0x10000L - (int32_t)v));
}

#endif /* MOTE_NET_LE16_H */
