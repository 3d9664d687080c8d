/*
 * trailer.h - motebase's extension of the query message (AM 101).
 *
 * A QueryMessage is 40 bytes; TinyDB sends it in a 49-byte payload and never
 * reads bytes 40..48. motebase puts a trailer there that only motebase motes
 * (and a gateway that knows it talks to one) read or write:
 *
 *   40 'm' | 41 'b' | 42 version | 43 flags | 44 epoch base K (u32 LE) | 48 check
 *
 *   flags bit 0  the query's aggregates use motebase's 32-bit partial states
 *   flags bit 1  K is set: epoch e of the query starts at (K + e - 1) x its
 *                epoch length in logical time (core/schedule.h)
 *   check        XOR of bytes 40..47 with TRAILER_CHECK_SEED: stale bytes an
 *                unmodified mote left in its buffer do not pass for a trailer.
 *
 * An unmodified TinyDB mote ignores the trailer and, when it forwards a part,
 * sends whatever its buffer held there; a part without a valid trailer is a
 * plain TinyDB part (narrow states, no epoch base).
 */
#ifndef MOTE_QUERY_TRAILER_H
#define MOTE_QUERY_TRAILER_H

#include <stdint.h>

#define TRAILER_OFFSET 40u
#define TRAILER_LEN 9u
#define TRAILER_VERSION 1u
#define TRAILER_WIDE 0x01u
#define TRAILER_HAS_BASE 0x02u
#define TRAILER_CHECK_SEED 0x5Au

typedef struct qtrailer {
    uint8_t flags; /* TRAILER_* */
    uint32_t base;
} qtrailer;

struct query;

/* The trailer a node writes for query `q`: its width and, once set, its base. */
void trailer_of_query(const struct query *q, qtrailer *out);

/* Take the flags of a trailer into a query still being assembled (its width). */
void trailer_apply_flags(struct query *q, const qtrailer *t);

/* Read the trailer of an AM 101 payload of `len` bytes; 0 if it has none. */
uint8_t trailer_read(const uint8_t *msg, uint8_t len, qtrailer *out);

/* Write a trailer into msg[TRAILER_OFFSET .. +TRAILER_LEN) (a 49-byte payload). */
void trailer_write(uint8_t *msg, const qtrailer *t);

#endif /* MOTE_QUERY_TRAILER_H */
