#include "bytefifo.h"

#include <stdlib.h>

int bytefifo_init(bytefifo *f, uint32_t cap)
{
    f->buf = malloc(cap ? cap : 1);
    f->cap = cap;
    f->head = 0;
    f->len = 0;
    f->overflow = 0;
    return f->buf ? 0 : -1;
}

void bytefifo_free(bytefifo *f)
{
    free(f->buf);
    f->buf = NULL;
}

void bytefifo_push(bytefifo *f, const uint8_t *bytes, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++) {
        if (f->len == f->cap) {
            f->overflow += n - i;
            return;
        }
        f->buf[(f->head + f->len++) % f->cap] = bytes[i];
    }
}

uint32_t bytefifo_pop(bytefifo *f, uint8_t *out, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && f->len) {
        out[n++] = f->buf[f->head];
        f->head = (f->head + 1) % f->cap;
        f->len--;
    }
    return n;
}
