/*
 * evq.h - the emulator's event queue: an indexed 4-ary min-heap of timers.
 *
 * Mechanism (in the spirit of simavr's sim_cycle_timers): the set of things
 * that can be pending is fixed when the network is built, so every possible
 * timer gets a numbered SLOT up front (node i's alarm, node i's radio, a pool
 * of fault slots). A slot is either idle or sits at exactly one place in the
 * heap, so re-arming replaces the old deadline in place (set_alarm semantics
 * of hal.h) and cancelling is O(log n); no stale entries, no allocation after
 * evq_init.
 *
 * Each heap entry is ONE 64-bit key, (time - base) << slot_bits | slot: one
 * compare orders by time and breaks ties by slot number (node alarms before
 * radios, lower node ids first), which makes the order of events, and
 * therefore a whole run, deterministic and independent of when a timer was
 * armed. Four children of a node are one aligned 32-byte group, so a level
 * of sift-down touches one cache line. `base` moves forward (all keys shifted
 * down, order unchanged) when a deadline would not fit in the key's time
 * bits (2^46 us, about 2 years, with the largest slot counts).
 */
#ifndef EMU_EVQ_H
#define EMU_EVQ_H

#include <stdint.h>

#define EVQ_IDLE UINT32_MAX
#define EVQ_MAX_SLOTS (1u << 18)

typedef struct evq {
    uint64_t *heap;  /* heap[0..count), heap[1] 64-byte aligned */
    void *heap_mem;  /* the allocation heap points into */
    uint32_t *pos;   /* pos[slot] = index in heap, or EVQ_IDLE */
    uint32_t count;
    uint32_t n_slots;
    uint32_t slot_bits;
    uint64_t slot_mask;
    uint64_t base_us;    /* time of key 0 */
    uint64_t span_us;    /* keys cover [base_us, base_us + span_us) */
    uint64_t popped_us;  /* deadline of the last pop: nothing is scheduled before it */
} evq;

/* Allocates room for n_slots (<= EVQ_MAX_SLOTS) timers; returns 0 on success. */
int evq_init(evq *q, uint32_t n_slots);
void evq_free(evq *q);

/* Arms `slot` for `time_us` (never before the last pop), replacing any
 * deadline it had. -1 (nothing changed) if time_us lies more than the key
 * span beyond the last pop. */
int evq_schedule(evq *q, uint32_t slot, uint64_t time_us);
void evq_cancel(evq *q, uint32_t slot);

static inline int evq_is_armed(const evq *q, uint32_t slot)
{
    return q->pos[slot] != EVQ_IDLE;
}

/* Earliest deadline, UINT64_MAX when empty. */
static inline uint64_t evq_next_time(const evq *q)
{
    return q->count ? q->base_us + (q->heap[0] >> q->slot_bits) : UINT64_MAX;
}

/* Slot of the earliest deadline, EVQ_IDLE when empty. */
static inline uint32_t evq_next_slot(const evq *q)
{
    return q->count ? (uint32_t)(q->heap[0] & q->slot_mask) : EVQ_IDLE;
}

/* Removes the earliest timer; returns its slot and stores its time. */
uint32_t evq_pop(evq *q, uint64_t *time_us);

#endif /* EMU_EVQ_H */
