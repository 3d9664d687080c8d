/*
 * bytefifo.h - bounded byte ring between the root's UART and Python.
 *
 * The root writes framed bytes during a run; Python drains them between run
 * slices. The capacity is fixed at creation; bytes that do not fit are
 * counted and dropped (a real UART overruns the same way when nobody reads).
 */
#ifndef EMU_BYTEFIFO_H
#define EMU_BYTEFIFO_H

#include <stdint.h>

typedef struct bytefifo {
    uint8_t *buf;
    uint32_t cap;
    uint32_t head; /* next byte to read */
    uint32_t len;
    uint64_t overflow;
} bytefifo;

int bytefifo_init(bytefifo *f, uint32_t cap);
void bytefifo_free(bytefifo *f);
void bytefifo_push(bytefifo *f, const uint8_t *bytes, uint32_t n);
uint32_t bytefifo_pop(bytefifo *f, uint8_t *out, uint32_t max);

#endif /* EMU_BYTEFIFO_H */
