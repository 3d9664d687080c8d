#include "evq.h"

#include <stdint.h>
#include <stdlib.h>

#define ARITY 4u
#define LINE 64u

static uint32_t parent_of(uint32_t i) { return (i - 1u) / ARITY; }
static uint32_t first_child(uint32_t i) { return ARITY * i + 1u; }

/*
 * The sift loops work on local copies of heap, pos, count and mask: stores into
 * pos[] (uint32_t) could otherwise alias q->count and force a reload per level.
 */
static void sift_up(evq *q, uint32_t i, uint64_t key)
{
    uint64_t *heap = q->heap;
    uint32_t *pos = q->pos;
    uint64_t mask = q->slot_mask;
    while (i > 0) {
        uint32_t p = parent_of(i);
        uint64_t up = heap[p];
        if (up <= key)
            break;
        heap[i] = up;
        pos[up & mask] = i;
        i = p;
    }
    heap[i] = key;
    pos[key & mask] = i;
}

/* Index of the smallest of the children starting at c (count entries in the heap). */
static inline uint32_t min_child(const uint64_t *h, uint32_t count, uint32_t c)
{
    uint32_t best, k;
    if (c + 3u < count) { /* full group: selects, no branches to mispredict */
        uint32_t a = c + (uint32_t)(h[c + 1u] < h[c]);
        uint32_t b = c + 2u + (uint32_t)(h[c + 3u] < h[c + 2u]);
        return h[b] < h[a] ? b : a;
    }
    for (best = c, k = c + 1u; k < count; k++)
        if (h[k] < h[best])
            best = k;
    return best;
}

static void sift_down(evq *q, uint32_t i, uint64_t key)
{
    uint64_t *heap = q->heap;
    uint32_t *pos = q->pos;
    uint64_t mask = q->slot_mask;
    uint32_t count = q->count, c;
    while ((c = first_child(i)) < count) {
        c = min_child(heap, count, c);
        if (heap[c] >= key)
            break;
        heap[i] = heap[c];
        pos[heap[i] & mask] = i;
        i = c;
    }
    heap[i] = key;
    pos[key & mask] = i;
}

int evq_init(evq *q, uint32_t n_slots)
{
    uint32_t s, cap = n_slots ? n_slots : 1u;
    uintptr_t addr;
    q->heap = NULL;
    q->pos = NULL;
    q->heap_mem = NULL;
    q->count = 0;
    if (n_slots > EVQ_MAX_SLOTS)
        return -1;
    /* room to slide heap so that heap[1], the first group of children, starts a line */
    q->heap_mem = malloc(sizeof *q->heap * cap + 2u * LINE);
    q->pos = malloc(sizeof *q->pos * cap);
    if (!q->heap_mem || !q->pos) {
        evq_free(q);
        return -1;
    }
    addr = (uintptr_t)q->heap_mem + LINE;
    addr = (addr + LINE - 1u) / LINE * LINE - sizeof *q->heap;
    q->heap = (uint64_t *)addr;
    for (s = 0; s < n_slots; s++)
        q->pos[s] = EVQ_IDLE;
    q->n_slots = n_slots;
    for (q->slot_bits = 1; (1u << q->slot_bits) < cap; q->slot_bits++)
        ;
    q->slot_mask = ((uint64_t)1 << q->slot_bits) - 1u;
    q->base_us = 0;
    q->popped_us = 0;
    q->span_us = (uint64_t)1 << (64u - q->slot_bits);
    return 0;
}

void evq_free(evq *q)
{
    free(q->heap_mem);
    free(q->pos);
    q->heap_mem = NULL;
    q->heap = NULL;
    q->pos = NULL;
    q->count = 0;
}

/* Moves base_us up to `to` (no pending deadline before it); keys keep their order. */
static void rebase(evq *q, uint64_t to)
{
    uint64_t shift = (to - q->base_us) << q->slot_bits;
    uint32_t i;
    for (i = 0; i < q->count; i++)
        q->heap[i] -= shift;
    q->base_us = to;
}

int evq_schedule(evq *q, uint32_t slot, uint64_t time_us)
{
    uint64_t key;
    uint32_t i = q->pos[slot];
    if (time_us < q->base_us)
        time_us = q->base_us; /* callers never schedule before now >= base */
    if (time_us - q->base_us >= q->span_us) {
        /* nothing is ever scheduled before the last popped deadline */
        uint64_t earliest = evq_next_time(q);
        rebase(q, earliest < q->popped_us ? earliest : q->popped_us);
        if (time_us - q->base_us >= q->span_us)
            return -1;
    }
    key = (time_us - q->base_us) << q->slot_bits | slot;
    if (i == EVQ_IDLE)
        sift_up(q, q->count++, key);
    else if (key < q->heap[i])
        sift_up(q, i, key);
    else
        sift_down(q, i, key);
    return 0;
}

static void remove_at(evq *q, uint32_t i)
{
    uint64_t last;
    q->pos[q->heap[i] & q->slot_mask] = EVQ_IDLE;
    last = q->heap[--q->count];
    if (i == q->count)
        return;
    if (i > 0 && last < q->heap[parent_of(i)])
        sift_up(q, i, last);
    else
        sift_down(q, i, last);
}

void evq_cancel(evq *q, uint32_t slot)
{
    uint32_t i = q->pos[slot];
    if (i != EVQ_IDLE)
        remove_at(q, i);
}

uint32_t evq_pop(evq *q, uint64_t *time_us)
{
    uint64_t *heap = q->heap;
    uint32_t *pos = q->pos;
    uint64_t mask = q->slot_mask;
    uint64_t key = heap[0], last;
    uint32_t i = 0, c, count;
    *time_us = q->base_us + (key >> q->slot_bits);
    q->popped_us = *time_us;
    pos[key & mask] = EVQ_IDLE;
    count = --q->count;
    last = heap[count];
    if (count == 0)
        return (uint32_t)(key & mask);
    /* Floyd: walk the hole down to a leaf, then let the last key climb back */
    while ((c = first_child(i)) < count) {
        c = min_child(heap, count, c);
        heap[i] = heap[c];
        pos[heap[i] & mask] = i;
        i = c;
    }
    sift_up(q, i, last);
    return (uint32_t)(key & mask);
}
