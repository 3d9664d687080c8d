/*
 * evq.h - the emulator's event queue: an indexed binary min-heap of timers.
 *
 * Mechanism (in the spirit of simavr's sim_cycle_timers): the set of things
 * that can be pending is fixed when the network is built, so every possible
 * timer gets a numbered SLOT up front (node i's alarm, node i's radio, a pool
 * of fault slots). A slot is either idle or sits at exactly one place in the
 * heap, so re-arming replaces the old deadline in place (set_alarm semantics
 * of hal.h) and cancelling is O(log n); no stale entries, no allocation after
 * evq_init. Ties on time are broken by a global arming sequence number, which
 * makes the order of events, and therefore a whole run, deterministic.
 */
#ifndef EMU_EVQ_H
#define EMU_EVQ_H

#include <stdint.h>

#define EVQ_IDLE UINT32_MAX

typedef struct evq_entry {
    uint64_t time_us;
    uint64_t seq;
    uint32_t slot;
} evq_entry;

typedef struct evq {
    evq_entry *heap;  /* heap[0..count) ordered by (time_us, seq) */
    uint32_t *pos;    /* pos[slot] = index in heap, or EVQ_IDLE */
    uint32_t count;
    uint32_t n_slots;
    uint64_t next_seq;
} evq;

/* Allocates room for n_slots timers; returns 0 on success. */
int evq_init(evq *q, uint32_t n_slots);
void evq_free(evq *q);

/* Arms `slot` for `time_us`, replacing any deadline it had. */
void evq_schedule(evq *q, uint32_t slot, uint64_t time_us);
void evq_cancel(evq *q, uint32_t slot);
int evq_is_armed(const evq *q, uint32_t slot);

/* Earliest deadline, UINT64_MAX when empty. */
static inline uint64_t evq_next_time(const evq *q)
{
    return q->count ? q->heap[0].time_us : UINT64_MAX;
}

/* Removes the earliest timer; returns its slot and stores its time. */
uint32_t evq_pop(evq *q, uint64_t *time_us);

#endif /* EMU_EVQ_H */
