#if defined(__linux__)
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS, madvise */
#include <sys/mman.h>
#endif

#include "bigmem.h"

#include <stdint.h>
#include <stdlib.h>

void bigmem_calloc(bigmem *b, size_t n, size_t size)
{
    size_t bytes;
    b->p = NULL;
    b->len = 0;
    if (size != 0 && n > SIZE_MAX / size)
        return;
    bytes = n * size;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= BIGMEM_HUGE) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: refused, the pages stay small */
            b->p = p;
            b->len = bytes;
            return;
        }
    }
#endif
    b->p = calloc(bytes ? bytes : 1u, 1u);
}

void bigmem_free(bigmem *b)
{
#if defined(__linux__)
    if (b->len) {
        munmap(b->p, b->len);
        b->p = NULL;
        b->len = 0;
        return;
    }
#endif
    free(b->p);
    b->p = NULL;
}
