/*
 * bigmem.h - zeroed allocations for the large per-node arrays, on huge pages where the
 * system offers them.
 *
 * At 10,000 nodes the firmware states alone are ~31 MB, touched in no particular order
 * as events move from node to node: with 4 KiB pages nearly every first touch of a node
 * also missed the TLB. On Linux a block of at least BIGMEM_HUGE bytes is mapped
 * anonymously (zeroed) and advised MADV_HUGEPAGE, so transparent huge pages (in their
 * `madvise` mode too) back it with 2 MiB pages; elsewhere, or if mmap fails, calloc.
 * Only where the memory comes from changes, never what it holds.
 */
#ifndef EMU_BIGMEM_H
#define EMU_BIGMEM_H

#include <stddef.h>

#define BIGMEM_HUGE ((size_t)2u << 20)

typedef struct bigmem {
    void *p;
    size_t len;  /* bytes mapped (0: p came from calloc) */
} bigmem;

/* n * size zeroed bytes at b->p; b->p is NULL on failure (or for 0 bytes: 1 byte). */
void bigmem_calloc(bigmem *b, size_t n, size_t size);
void bigmem_free(bigmem *b);

#endif /* EMU_BIGMEM_H */
