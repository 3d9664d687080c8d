/*
 * schedule.h - epoch boundaries and the slotted communication schedule
 *              (TODS 2005 §6.1.1, design.md §2).
 *
 * Epochs of a query are aligned on multiples of the epoch length in the
 * node's logical time (synchronised from the parent, §12.2), so every node of
 * the tree starts epoch k at the same instant without exchanging start times.
 * The epoch is cut into SCHED_INTERVALS equal intervals, numbered back from
 * its end. A node at depth d
 *     listens      in interval d+1 (its children transmit),
 *     transmits    in interval d   (records go to the parent, which listens),
 *     overhears    in interval d-1 (its parent transmits: time/epoch sync,
 *                                   route liveness, query forwards),
 * and sleeps otherwise, so a partial aggregate climbs one level per interval
 * and reaches the root (depth 0, last interval) within the epoch it was
 * sampled in. Interval length = epoch / SCHED_INTERVALS (at least 1 ms);
 * nodes deeper than SCHED_MAX_DEPTH, or without a route, use the slot of
 * SCHED_MAX_DEPTH.
 *
 * Why SCHED_MAX_DEPTH is 6, not the deepest tree we may meet: the paper sizes
 * the interval as epoch / tree depth, but nothing on the wire tells a node the
 * network's depth, and every node must cut the epoch the same way. A bound is
 * the consistent choice, and the interval length, not in-epoch delivery from
 * the deepest levels, is what decides whether records arrive: a whole level
 * (hidden terminals included) transmits inside one interval. Measured on the
 * lossy mica2 grids at 1 s epochs (COUNT mean nodes counted, seed 1 / 2):
 * bound 14 (62 ms) 5.1 / 6.0 of 25; bound 6 (125 ms) 17.8 / 17.4 of 25 and
 * 29 / 28 of 100 (depth-10 tree) -- better on the deep grid too, although its
 * levels 6..10 share one slot: their records reach the depth-6 relays while
 * those wait for their parent, and are merged an epoch late (TinyDB 1.x).
 * Bounds 4-5 gained little more on 25 nodes and lose in-epoch aggregation. The transmit start is delayed by a random part of the
 * interval (sched_jitter_span) so a depth level does not contend at one
 * instant; the delay is folded into the transmit alarm, it costs no event.
 * For aggregates, a node that listened for children draws it from the later
 * half of the span: a child's record that arrives after the parent's went out
 * is dropped (it would count the child twice in the next epoch), so a relay
 * gives its children's resends time (COUNT +1..2 nodes of 25); leaves, and
 * tuples, which are never late, use the whole span.
 *
 * Where motebase departs from the paper, and why:
 *   - Wake-ups are event-driven, at most one alarm each. A node with children
 *     wakes for their interval (and samples then: the reading still belongs
 *     to the epoch); a leaf has nothing to listen to and wakes only at its
 *     transmit time, sampling there. Nobody arms an alarm to go to sleep after
 *     the parent's interval: hearing the parent's first result or beacon ends
 *     that wait (the packet is needed anyway for sync); an alarm at the end of
 *     the parent's interval is only the fallback when the parent is silent.
 *     Whether a node has children is what routing says (their beacons name it)
 *     or what it heard in the last CHILD_MEMORY_EPOCHS epochs; a wrongly
 *     assumed leaf still hears a new child's retries while it is awake in its
 *     own interval, and counts as a parent from then on.
 *   - One interval per level is too short for tuples: a relay near the root
 *     carries its whole subtree, several packets of ~18 ms each on a Mica2.
 *     So results are not confined to the own interval: a node keeps sending
 *     while the parent is known to listen -- through the parent's interval,
 *     and for as long as the parent keeps acknowledging or is overheard
 *     (each is proof it is awake); a parent keeps listening ACTIVITY_HOLD_MS
 *     after each tuple addressed to it or sent by it (an activity tail), so a
 *     relayed backlog flows up at radio speed instead of one slot per epoch.
 *     The root never sleeps (it is powered by the MIB510 board): children of
 *     the root send whenever they have something, and the root emits its
 *     aggregate records at the end of its interval, not at its start: they go
 *     to the UART, where nothing collides, and every record of a depth-1 node
 *     (a whole subtree) still in retries gets in. Other nodes must emit
 *     inside their interval, where their parent listens.
 *   - A result stays with its sender until the parent acknowledges it (up to
 *     RESULT_MAX_TRIES sends, same multihop seqno so a lost ack does not
 *     duplicate it). A node whose result queue is full stops listening: its
 *     children's sends go unacknowledged and they keep their results, so a
 *     burst that a relay cannot forward yet backs up toward the leaves
 *     instead of being dropped at the relay; where a queue really overflows
 *     -- at the node producing the readings -- the naive/winavg/delta policy
 *     chooses what survives (§6.3.1).
 *   - Aggregate records are one packet per node and epoch in the common case
 *     and gain nothing from the tail: they do not extend the parent's hold,
 *     and a record that misses the parent's transmit time is merged into its
 *     next epoch's state (TinyDB 1.x behaviour). An unacknowledged record is
 *     resent after a short random pause (SCHED_TX_GUARD_MS plus up to
 *     RECORD_RETRY_SPREAD_MS), not after the tuples' hold: it most likely met
 *     a sibling's record, and the parent listens through the whole interval.
 *   - Query parts (and other control packets) go in the sender's own
 *     interval, when its children wait for it, and cross one level per epoch
 *     while queries run. Three rules make the children really be awake then:
 *     results wait behind a queued control packet (a child stops waiting for
 *     its parent on the parent's first result, so a relayed tuple sent first
 *     would put it to sleep before the part); the wait lasts until a packet
 *     started in the parent's interval has ended (SCHED_TX_GUARD_MS); a node
 *     that heard a part keeps listening ACTIVITY_HOLD_MS, and the sender may
 *     send the next part within that hold (the control tail), so a query of
 *     many parts crosses a level in one interval. A node still missing parts
 *     listens through the whole parent interval, and asks for what it lacks
 *     (core/sharing.h), since broadcasts to sleeping neighbours are lost.
 *
 * All times are logical milliseconds modulo 2^32; compare with sched_due().
 */
#ifndef MOTE_CORE_SCHEDULE_H
#define MOTE_CORE_SCHEDULE_H

#include <stdint.h>

#define SCHED_MAX_DEPTH 6u
#define SCHED_INTERVALS (SCHED_MAX_DEPTH + 2u)
#define SCHED_EPOCH_UNIT_MS 10u
#define SCHED_ONCE_MS 1024u /* length of the single epoch of an ONCE query */
/* A result packet's worst case from send to end of air: initial CSMA backoff
 * (32 byte times) + a 56-byte packet with preamble on a 38.4 kbit/s CC1000. */
#define SCHED_TX_GUARD_MS 26u

/* Epoch length in ms for an epochDuration in 10-ms units (0x7FFF = ONCE). */
uint32_t sched_epoch_ms(int16_t units);

uint32_t sched_interval_ms(uint32_t epoch_ms);

/*
 * Range of the random transmit delay within an interval: late enough starts
 * still end inside the interval (interval - SCHED_TX_GUARD_MS), but never less
 * than half the interval (short epochs).
 */
uint32_t sched_jitter_span(uint32_t interval_ms);

/* First epoch start at or after `now`. */
uint32_t sched_next_boundary(uint32_t now, uint32_t epoch_ms);

/* Slot depth used for a routing depth (clamped; unrouted -> SCHED_MAX_DEPTH). */
uint8_t sched_slot_depth(uint8_t depth);

/*
 * Start of interval `k` counted back from the end of the epoch that starts at
 * `epoch_start`: interval k spans [end - (k+1)*I, end - k*I).
 */
uint32_t sched_interval_start(uint32_t epoch_start, uint32_t epoch_ms, uint8_t k);

/* 1 if logical time `t` has been reached at `now` (wrap-safe). */
static inline uint8_t sched_due(uint32_t t, uint32_t now) { return (int32_t)(now - t) >= 0; }

/* The later of two logical times (wrap-safe). */
static inline uint32_t sched_later(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0 ? a : b; }

#endif /* MOTE_CORE_SCHEDULE_H */
