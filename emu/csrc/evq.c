#include "evq.h"

#include <stdlib.h>

static int earlier(const evq_entry *a, const evq_entry *b)
{
    return a->time_us < b->time_us || (a->time_us == b->time_us && a->seq < b->seq);
}

static void place(evq *q, uint32_t i, evq_entry e)
{
    q->heap[i] = e;
    q->pos[e.slot] = i;
}

static void sift_up(evq *q, uint32_t i)
{
    evq_entry e = q->heap[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!earlier(&e, &q->heap[parent]))
            break;
        place(q, i, q->heap[parent]);
        i = parent;
    }
    place(q, i, e);
}

static void sift_down(evq *q, uint32_t i)
{
    evq_entry e = q->heap[i];
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= q->count)
            break;
        if (child + 1 < q->count && earlier(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!earlier(&q->heap[child], &e))
            break;
        place(q, i, q->heap[child]);
        i = child;
    }
    place(q, i, e);
}

int evq_init(evq *q, uint32_t n_slots)
{
    uint32_t s;
    q->heap = malloc(sizeof *q->heap * (n_slots ? n_slots : 1));
    q->pos = malloc(sizeof *q->pos * (n_slots ? n_slots : 1));
    if (!q->heap || !q->pos) {
        evq_free(q);
        return -1;
    }
    for (s = 0; s < n_slots; s++)
        q->pos[s] = EVQ_IDLE;
    q->count = 0;
    q->n_slots = n_slots;
    q->next_seq = 0;
    return 0;
}

void evq_free(evq *q)
{
    free(q->heap);
    free(q->pos);
    q->heap = NULL;
    q->pos = NULL;
    q->count = 0;
}

int evq_is_armed(const evq *q, uint32_t slot)
{
    return q->pos[slot] != EVQ_IDLE;
}

void evq_schedule(evq *q, uint32_t slot, uint64_t time_us)
{
    evq_entry e;
    uint32_t i = q->pos[slot];
    e.time_us = time_us;
    e.seq = q->next_seq++;
    e.slot = slot;
    if (i == EVQ_IDLE) {
        i = q->count++;
        place(q, i, e);
        sift_up(q, i);
        return;
    }
    if (earlier(&e, &q->heap[i])) {
        place(q, i, e);
        sift_up(q, i);
    } else {
        place(q, i, e);
        sift_down(q, i);
    }
}

static void remove_at(evq *q, uint32_t i)
{
    evq_entry last;
    q->pos[q->heap[i].slot] = EVQ_IDLE;
    last = q->heap[--q->count];
    if (i == q->count)
        return;
    place(q, i, last);
    if (i > 0 && earlier(&last, &q->heap[(i - 1) / 2]))
        sift_up(q, i);
    else
        sift_down(q, i);
}

void evq_cancel(evq *q, uint32_t slot)
{
    uint32_t i = q->pos[slot];
    if (i != EVQ_IDLE)
        remove_at(q, i);
}

uint32_t evq_pop(evq *q, uint64_t *time_us)
{
    uint32_t slot = q->heap[0].slot;
    *time_us = q->heap[0].time_us;
    remove_at(q, 0);
    return slot;
}
