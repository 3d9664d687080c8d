/*
 * schedule.h - when epochs begin, when each node wakes within them, and when
 *              control packets travel down the tree (TODS 2005 §6.1.1, design.md §2).
 *
 * Epochs are numbered by time. A query's epochs are aligned on multiples of
 * its epoch length P in logical time (synchronised from the parent, §12.2):
 * epoch e spans [(K + e - 1) P, (K + e) P), where K, the query's epoch base, is
 * chosen once by the root and carried with the query (the motebase trailer of
 * AM 101, core/trailer.h). Every node therefore numbers every epoch the same
 * way, however late it got the query, and a record's epoch number says which
 * epoch its readings belong to. The root starts epoch 1 at least
 * SCHED_START_DELAY_MS (and one epoch) after the query is complete, so the
 * query has reached the network when epoch 1 begins instead of joining it
 * level by level (sched_start_base).
 *
 * Within an epoch, intervals of I = P / n are counted back from its end, where
 * n (sched_intervals) gives each about SCHED_INTERVAL_TARGET_MS and stays in
 * [SCHED_INTERVALS_MIN, SCHED_INTERVALS_MAX]. A level's interval must hold its
 * nodes' sends and resends under contention, a few 50-ms packets each: with
 * eight intervals of a 2 s epoch (255 ms) a 25-node COUNT counted a median 16-18
 * nodes on the default radio, records missing their parent's interval; with four
 * (510 ms), 25. Fewer than four cannot hold listen, transmit and overhear of one epoch
 * apart from the next: nodes skipped every other epoch. Epochs under
 * SCHED_SHORT_EPOCH_MS keep eight: there a lossy 25-node network is already past
 * what the channel carries (docs/radio.md), longer intervals delivered
 * little more (1 s SELECT, 25 nodes: 40-43 % either way) and, with every
 * relay sending all the time, stops took an epoch longer to reach the deepest
 * nodes on the sinr radio. A node at depth d
 *     listens      in interval d+1 (its children transmit),
 *     transmits    in interval d   (records go to the parent, which listens),
 *     overhears    in interval d-1 (its parent transmits: route liveness, sync),
 * and sleeps otherwise, so a partial aggregate climbs one level per interval
 * and reaches the root (depth 0, last interval) at the end of the epoch it was
 * sampled in. Intervals past the epoch's start simply continue backwards into
 * the previous epochs' time: a node at depth 20 works on epoch e about two
 * epochs before e ends. The levels form a pipeline, every depth up to 254 has
 * its own interval, and records are merged by epoch number, never by arrival
 * time, so a record can only ever join the state of the epoch it was sampled
 * in. (An earlier design clamped the depth at 6 to keep every level inside one
 * epoch: levels past 6 shared a slot and their records were merged an epoch
 * late.)
 * The `slots enabled=0` command sets this aside for comparison: every depth in
 * the root's intervals, a record climbing a level an epoch (core/runs.c,
 * unslotted; docs/papers.md §6.1.1).
 *
 * Where motebase departs from the paper, and why:
 *   - Wake-ups are event-driven, at most one alarm each. A node with children
 *     wakes for their interval (and samples then: the reading belongs to the
 *     epoch); a leaf wakes only at its transmit time, sampling there. Hearing
 *     the parent's first result or beacon ends the wait for it; an alarm at the
 *     end of the parent's interval is only the fallback when it is silent.
 *     Whether a node has children is what routing says or what it heard in the
 *     last CHILD_MEMORY_EPOCHS epochs. At long epochs (below) a leaf child of
 *     the root does not wait for it after its send either: the root listens all
 *     along and says nothing there to wait for.
 *   - The transmit start is delayed by a random part of the interval
 *     (sched_jitter_span) so a level does not contend at one instant, a node
 *     that listened for children too (core/runs.c, jitter). Tuples of epochs from
 *     SCHED_SHORT_EPOCH_MS on draw it from the whole epoch but one interval
 *     (core/runs.c, transmit_span): their relays listen all along.
 *   - One interval per level is too short for tuples: a relay near the root
 *     carries its whole subtree. So a node keeps sending results while the
 *     parent is known to listen -- through the parent's interval, and for as
 *     long as the parent acknowledges or is overheard; a parent listens
 *     ACTIVITY_HOLD_MS after each tuple addressed to it (an activity tail). The
 *     root never sleeps (it is powered by the MIB510 board) and emits its
 *     aggregate records at the end of its interval, to the UART.
 *   - A result stays with its sender until the parent acknowledges it (up to
 *     RESULT_MAX_TRIES sends, same multihop seqno so a lost ack does not
 *     duplicate it). A node whose result queue is full stops listening
 *     (backpressure): its children keep their results.
 *
 * Control packets that travel down (query parts, DEL, RATE, commands) cannot
 * use the data schedule: a node overhears its parent in interval d-1, after its
 * own transmit interval, so a part would cross one level per epoch. They use a
 * wave instead: in every control period of SCHED_CTL_PERIOD_MS (aligned on
 * logical time, like the epochs) a node at depth d may start a downward burst
 * in its down slot, SCHED_CTL_SLOT_MS long, starting d x SCHED_CTL_SLOT_MS
 * after the period's start (modulo the period, so any depth has one); a node
 * that runs a query and would sleep listens in its parent's down slot. A node
 * that hears a downward packet from upstream stays awake a while
 * (CTL_AWAKE_MS) and forwards in its own slot, which follows at once: a burst
 * crosses one level per slot, and nodes woken by its first packet hear the
 * rest at radio speed. Listening costs SCHED_CTL_SLOT_MS + SCHED_TX_GUARD_MS per
 * period (11 %) on nodes that otherwise sleep; a network where no query runs
 * never sleeps and floods at radio speed anyway.
 *
 * At long epochs that 11 % is most of what a node spends: 5.2 mW of the 1.86 mW
 * that two AA cells allow over 24 weeks (TODS 2005 §3.6, docs/papers.md). So
 * from SCHED_LONG_EPOCH_MS on a node keeps SCHED_LONG_WAVES waves an epoch
 * instead: depth d's slot starts d x SCHED_CTL_SLOT_MS after each epoch's start
 * and after each 1 / SCHED_LONG_WAVES of the epoch (sched_wave_since; not modulo
 * a period, so the burst crosses any depth the radio forms in one go), and a
 * node that would sleep listens only in its parent's slot of them.
 * Every node of a query cuts its epochs at the same logical times, so the whole
 * tree listens in the same wave, and a DEL, RATE or command crosses it within half
 * an epoch (a node that missed it: its parent's echoes come a wave later, and
 * a parent answers a straggler's result at once and again in its next wave,
 * core/stops.c). A DEL does not
 * wait for the slot at all (core/txpath.c, tx_down_gate): the relays of tuples listen
 * all along, and only the sleeping leaves wait for the wave's echoes. Two waves, not
 * one: with one, a relay that missed its wave's DEL -- a whole level forwards in
 * one slot -- heard it from a neighbour a second or two later, but its sleeping
 * children only in the next epoch's wave or as they sent, having sampled twice
 * after the stop (sinr 100-node grid at 8 s, seeds 1-10: 36 of 1,000 nodes
 * sampled two epochs after the stop, 1 three; with two waves 6 and 2; with a wave
 * every period, none past one). The second wave costs a leaf about 127 ms awake an
 * epoch (docs/papers.md, §3.6). A node keeps
 * one wave, sends and listens in it (run_send_wave), and changes it only as one
 * of its epochs begins (core/runs.c, take_wave): the wave of its queries' epoch
 * -- the longest, should several run -- once every one has begun an epoch and
 * all are long, else every period's. So a new query spreads in the wave the
 * nodes already keep (one that runs nothing listens all along), and a RATE goes
 * down in the wave its children still keep. A downward packet waiting for the
 * wave lets the beacons and requests queued behind it go first (core/txpath.c).
 * Shorter epochs keep the wave of every period exactly as before: delivery and
 * stops on them are measured with it.
 *
 * All times are logical milliseconds modulo 2^32; compare with sched_due().
 */
#ifndef MOTE_CORE_SCHEDULE_H
#define MOTE_CORE_SCHEDULE_H

#include <stdint.h>

#include "../net/airtime.h"

#define SCHED_INTERVAL_TARGET_MS 1024u /* about a second per level's interval... */
#define SCHED_INTERVALS_MIN 4u         /* ...but 4 at least (384 ms at 1.5 s epochs) */
#define SCHED_INTERVALS_MAX 8u         /* and at most 8 (3.9 s at the lab's 31 s) */
#define SCHED_SHORT_EPOCH_MS 1536u     /* shorter epochs keep 8 (see above) */
#define SCHED_MAX_SLOT_DEPTH 254u /* every routable depth has its own interval */
#define SCHED_UNROUTED_SLOT 1u    /* slot of a node without a route: it samples, cannot send */
#define SCHED_EPOCH_UNIT_MS 10u
#define SCHED_ONCE_MS 1024u       /* length of the single epoch of an ONCE query */
#define SCHED_START_DELAY_MS 4096u /* at least this (and one epoch) before epoch 1 */
/* A result packet's worst case from send to end of air (net/airtime.h): 50 ms. */
#define SCHED_TX_GUARD_MS RADIO_SEND_MS
#define SCHED_CTL_PERIOD_MS 1024u /* the down wave's period */
/* One level's down slot: a packet that starts in its first backoff ends in it (64 ms). */
#define SCHED_CTL_SLOT_MS (RADIO_SEND_MS + RADIO_BYTES_MS(RADIO_BACKOFF_BYTES))
/* Epochs from this long keep SCHED_LONG_WAVES down waves an epoch instead of one a
 * control period (see above), and a leaf child of the root does not wait for it after
 * its send (core/runs.c). Six periods (6.1 s): each such epoch saves at least 2/3 of
 * the listening; shorter epochs keep every period's wave. Any lifetime whose period
 * falls below the threshold is planned at the threshold (gateway/plan/lifetime.py),
 * outlasting its request. */
#define SCHED_LONG_EPOCH_MS (6u * SCHED_CTL_PERIOD_MS)
/* Waves an epoch from SCHED_LONG_EPOCH_MS on: epochs are multiples of 10 ms, so half
 * of one is a whole number of ms and every wave starts at the same logical time on
 * every node. */
#define SCHED_LONG_WAVES 2u

/* Epoch length in ms for an epochDuration in 10-ms units (0x7FFF = ONCE). */
uint32_t sched_epoch_ms(int16_t units);

/* Intervals per epoch of epoch_ms, and their length. */
uint8_t sched_intervals(uint32_t epoch_ms);
uint32_t sched_interval_ms(uint32_t epoch_ms);

/*
 * Range of the random transmit delay within an interval: late enough starts
 * still end inside the interval (interval - SCHED_TX_GUARD_MS), but never less
 * than half the interval (short epochs).
 */
uint32_t sched_jitter_span(uint32_t interval_ms);

/* The epoch base K of a query completed at the root at `now`: epoch 1 starts at
 * K x epoch_ms, the first epoch boundary at least one epoch and
 * SCHED_START_DELAY_MS away -- and far enough for the query to reach the
 * deepest level (`deepest`, routing_deepest; SCHED_DEPTH_UNKNOWN if not known)
 * before that level's work on epoch 1 begins, so epoch 1 counts every node. */
#define SCHED_DEPTH_UNKNOWN 0xFFu
uint32_t sched_start_base(uint32_t now, uint32_t epoch_ms, uint8_t deepest);

/* The base K that keeps numbering `label` for the epoch starting at `start` (a
 * multiple of epoch_ms): a new rate continues the count. */
uint32_t sched_rebase(uint32_t start, uint32_t epoch_ms, uint32_t label);

/* Start of epoch `label` (>= 1) of a query with base K. */
uint32_t sched_label_start(uint32_t base, uint32_t epoch_ms, uint32_t label);

/*
 * The first epoch number >= min_label whose work at slot depth `slot` has not
 * begun at `now`: its children's interval (slot + 1) starts at or after now.
 */
uint32_t sched_next_label(uint32_t now, uint32_t base, uint32_t epoch_ms, uint8_t slot,
                          uint32_t min_label);

/* When work on epoch `label` begins at slot depth `slot`: its children's interval. */
uint32_t sched_work_start(uint32_t base, uint32_t epoch_ms, uint8_t slot, uint32_t label);

/* Slot depth used for a routing depth (unrouted: SCHED_UNROUTED_SLOT). */
uint8_t sched_slot_depth(uint8_t depth);

/*
 * Start of interval `k` counted back from the end of the epoch that starts at
 * `epoch_start`: interval k spans [end - (k+1)*I, end - k*I).
 */
uint32_t sched_interval_start(uint32_t epoch_start, uint32_t epoch_ms, uint8_t k);

/* Time since the last start of `depth`'s down slot, in [0, SCHED_CTL_PERIOD_MS):
 * below SCHED_CTL_SLOT_MS the slot is on; the next one starts PERIOD - offset later. */
uint32_t sched_down_offset(uint32_t now, uint8_t depth);

/*
 * The same for a down wave every `wave_ms` (0: the wave of every control period,
 * sched_down_offset): from SCHED_LONG_EPOCH_MS on, SCHED_LONG_WAVES an epoch (wave_ms =
 * epoch / SCHED_LONG_WAVES, run_send_wave), `depth`'s slot depth x SCHED_CTL_SLOT_MS
 * after each wave's start, the first at the epoch's: the time since the slot last
 * started.
 */
uint32_t sched_wave_ms(uint32_t epoch_ms);
uint32_t sched_wave_since(uint32_t now, uint32_t wave_ms, uint8_t depth);

/* 1 if logical time `t` has been reached at `now` (wrap-safe). */
static inline uint8_t sched_due(uint32_t t, uint32_t now) { return (int32_t)(now - t) >= 0; }

/* The later of two logical times (wrap-safe). */
static inline uint32_t sched_later(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0 ? a : b; }

/* 1 if `now` lies in [start, start + len). */
static inline uint8_t sched_within(uint32_t now, uint32_t start, uint32_t len)
{
    return now - start < len;
}

#endif /* MOTE_CORE_SCHEDULE_H */
