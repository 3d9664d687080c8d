/*
 * routing.h - MintRoute-style collection tree toward node 0.
 *
 * Mechanism:
 *   - Every multihop packet a node transmits (beacon, own result, forwarded
 *     result) carries its sourceaddr, its own running seqno and its depth in
 *     the TOS_MHopMsg header (routing_fill_header). Because the radio is
 *     promiscuous, each node overhears its neighbours' traffic: the seqno gap
 *     since the last packet heard from a sender gives the number of losses, and
 *     the link quality is the share received, 0..255: the average of the first
 *     ROUTING_AVERAGE_FIRST packets due, then an EWMA (alpha 1/8). Estimates
 *     with alpha 1/4 wandered so far (a diagonal of a grid, 0.64 each way, read
 *     0.91 both ways at times) that trees kept taking such links.
 *   - A fixed table of ROUTING_MAX_NEIGHBORS neighbours holds quality, the
 *     neighbour's advertised depth and cost, what its beacons say of how well it
 *     hears us (out_quality: the receiveEst of our entry, as MintRoute sends
 *     it), and whether it routes through us. A new sender takes a free slot,
 *     else replaces the worst non-parent entry (long silent first, then the
 *     weakest signal under ROUTING_SNR_FIRM_DB where the radio measures it, then
 *     lowest quality) if that one is weaker than a fresh entry, or is no parent
 *     candidate while the newcomer is -- but for a long silent one, only by a
 *     newcomer heard at least ROUTING_SNR_ADMIT_DB over our noise, where
 *     measured.
 *   - Link value: the share of our sends that would be acknowledged, 0..255.
 *     For the parent, once we send to it, 255 over an EWMA (alpha 1/4) of the
 *     sends each result took, its ETX (routing_parent_took: the data path's
 *     feedback, collisions included); for others, quality x out_quality / 255
 *     (quality^2 / 1020 until its beacon has listed us: a quarter of the way back
 *     assumed, not all of it). A link is judged after
 *     ROUTING_NB_SEEN_MATURE of the sender's packets were due, and good at >=
 *     ROUTING_LINK_GOOD.
 *   - Path cost, 1/16 units: what the neighbour advertises plus what the hop
 *     costs, the square of its ETX (link_cost16: a lossy link loses in runs and
 *     its retries are bounded), plain ETX into the root (always awake), plus two
 *     hops a dB for a link heard under ROUTING_SNR_FIRM_DB over our noise where
 *     the radio measures it (hal.h rx_snr_db; an EWMA per neighbour): such a link
 *     delivers in quiet and fails under the interference of a loaded level.
 *   - Parent = among eligible neighbours (heard recently, quality >=
 *     ROUTING_QUALITY_MIN, not our child) the one with the cheapest path; on a
 *     tie one whose link is not known to be lossy (judged, below
 *     ROUTING_LINK_POOR), then the smallest depth, then the best heard link,
 *     then the lowest id. The current parent is kept unless a candidate is
 *     closer to the root and cheaper by ROUTING_CLOSER_MARGIN, or better heard
 *     by ROUTING_SWITCH_MARGIN at the same depth, or has a good link while the
 *     parent's is lossy -- any link not known to be lossy while the parent's
 *     fails (ROUTING_LINK_FAILING) -- or, as deep as we are or deeper, offers a
 *     path cheaper by ROUTING_COST_MARGIN while advertising a cost below ours
 *     (cheaper_further: a descendant's cost is above ours, so it cannot route
 *     through us), over a link not known to be lossy -- or, for a node with no
 *     children whose parent fails, one that beats the parent's by
 *     ROUTING_SWITCH_MARGIN. Moves for a link happen once a beacon period, not
 *     while duty cycled under routing_keep_steady -- there only from a failing parent
 *     (ROUTING_LINK_FAILING), to any candidate, a deeper one too: the
 *     subtree loses an epoch of records moving, and every epoch staying. A
 *     candidate as deep as we are is considered only if heard this period (the
 *     last one, under routing_keep_steady: a node reconsiders only as it plans
 *     an epoch, just after a tick) and its id is lower than ours (two such
 *     moves at once close a loop). depth = parent depth + 1, at most
 *     ROUTING_MAX_DEPTH. A parent left keeps what its acks said in its
 *     estimate, or it would sound good again and win us back at once. The
 *     cost advertised in beacons is the path cost through the parent;
 *     neighbours rank us by it.
 *   - Node 0 is the root: depth 0, pseudo-parent TOS_UART_ADDR, never changes.
 *   - Beacons (AM 250): mhop header + RoutePacket {parent u16, cost u16,
 *     estEntries u8, estEntries x {id u16, receiveEst u8}}. The node glue sends
 *     one per beacon period and calls routing_tick() once per period; a parent
 *     not heard for ROUTING_PARENT_LOST_PERIODS periods is dropped and another
 *     selected.
 *   - Duty cycling (a query runs, routing_set_duty_cycled): the node sleeps
 *     through most of its parent's packets, so a silent beacon period says
 *     nothing about it, and seqno gaps count packets sent while it slept (the
 *     estimates drift low; the parent's link is judged by its acks). Whether
 *     the parent lives is judged by what the node expected to hear: the glue
 *     reports each listening window in which the parent stayed silent
 *     (routing_parent_missed); any packet or ack from it clears the count
 *     (routing_parent_acked); enough in a row drop it. Other neighbours still
 *     age per period, so their depths go stale and stop counting as routes.
 *   - Loops: a neighbour that names us as its parent is never chosen.
 *     Route generations (DSDV's sequence numbers, one per tree): the root
 *     counts its beacons, every node advertises in its beacons' trailer the
 *     count its parent last advertised, so news of the root flows down the
 *     tree and a node's generation is never newer than its parent's. A
 *     neighbour with a newer generation than ours cannot be routing through us
 *     (it heard the root before we did); one more than ROUTING_GEN_SLACK
 *     older is no candidate (our generation would run ahead of our parent's,
 *     and a node that had ours from us could look newer to the parent than it
 *     is; within the slack that risk is left to the depth rules below).
 *     A parent that becomes as deep as we are is dropped (it may route
 *     through us; this stops count-to-infinity) unless its generation is newer
 *     than ours or the cost it advertises is still below ours (not while duty
 *     cycled under routing_keep_steady: records are timed by depth): then it
 *     moved to a deeper path, not through us, and we follow it down. After
 *     losing its parent a node only takes a neighbour strictly closer to the
 *     root than it was or with a newer generation (a descendant's stale depth
 *     cannot lure it into a cycle: on an idle 49-node `sinr` grid, seed 9, the
 *     root's two children lost it together and took descendants heard since,
 *     and every node was in a loop for 20 s). Finding none it is unrouted
 *     until the root's next news reaches a neighbour. A neighbour without a
 *     generation (a MintRoute mote) is judged as before generations: while
 *     duty cycled the node chooses at the end of the next period among the
 *     neighbours heard since the loss (fresh depths); the node glue keeps it
 *     listening meanwhile (routing_searching) and answers a child's send with
 *     a beacon advertising ROUTING_DEPTH_NONE, so the subtree drops it. A
 *     neighbour as deep as we are is taken for its good link only once our
 *     depth has not grown for ROUTING_SETTLE_PERIODS: a descendant's depth is
 *     stale by what ours grew, and only a child (never chosen) can then match.
 *     For the same reason, until then no neighbour whose generation is older
 *     than ours replaces a working parent at all, however close it says it is.
 *   - Forwarding checks: a packet already seen is a duplicate -- a neighbour
 *     resends only the packet it sent us last (its queue goes one packet at a
 *     time), so its entry keeps that packet's seqno, however many others pass
 *     through meanwhile; a sender without an entry is looked up in a ring of
 *     ROUTING_DUP_RING sourceaddr+seqno. One whose hopcount is <= our depth
 *     cannot come from a child, so it is a possible cycle.
 *
 * Deterministic: no randomness and no clock inside; identical input sequences
 * give identical trees (the emulator must reproduce a run from its seed).
 */
#ifndef MOTE_NET_ROUTING_H
#define MOTE_NET_ROUTING_H

#include <stdint.h>

#include "mhop.h"

#define ROUTING_MAX_NEIGHBORS 10u
#define ROUTING_DUP_RING 8u
#define ROUTING_MAX_DEPTH 254u         /* 0xFF is 'no route': every 8-bit depth is usable */
#define ROUTING_DEPTH_NONE MHOP_HOPCOUNT_INVALID
#define ROUTING_PARENT_NONE TOS_BCAST_ADDR
#define ROUTING_QUALITY_INIT 128u      /* link quality after the first packet heard */
#define ROUTING_QUALITY_MIN 96u        /* below this a neighbour is no parent candidate */
#define ROUTING_LINK_GOOD 170u         /* 2 of 3 sends acked (receive rate 208/255 both ways) */
#define ROUTING_LINK_POOR 128u         /* half the sends unacked: worth leaving for a good link */
#define ROUTING_LINK_FAILING 64u       /* 3 of 4 sends unacked: worth leaving for any link not lossy */
#define ROUTING_SWITCH_MARGIN 32u      /* a candidate must beat the parent's link by this */
#define ROUTING_EWMA_SHIFT 3u          /* link estimates: EWMA with alpha 1/8 */
#define ROUTING_AVERAGE_FIRST 7u       /* ...after the first packets due, averaged (routing.c) */
#define ROUTING_COST_MARGIN 24u        /* a path away from the root must be cheaper by this (1/16) */
#define ROUTING_CLOSER_MARGIN 16u      /* ...and one closer to it by this */
#define ROUTING_PARENT_LOST_PERIODS 3u /* beacon periods without hearing the parent */
#define ROUTING_SETTLE_PERIODS 3u      /* depth unchanged this long before taking a sibling */
#define ROUTING_MAX_GAP 16u            /* a larger seqno jump is a reboot, not 16+ losses */
#define ROUTING_PARENT_MAX_MISSES 8u   /* silent listening windows in a row, duty cycled */
#define ROUTING_SNR_UNKNOWN 0          /* a packet's signal not measured (hal.h rx_snr_db) */
#define ROUTING_SNR_FIRM_DB 15         /* a link heard this far over the noise holds under load */
#define ROUTING_SNR_PENALTY 32u        /* ...below it each dB costs two hops (1/16 units) */
#define ROUTING_SNR_ADMIT_DB 21        /* a newcomer displaces a live entry only this strong */
/* A candidate may lag our route generation by this much. Beacons wait behind results, so
 * a relay's subtree hears the root's news late and unevenly: with no slack, candidates
 * that had merely missed a beacon were refused and nodes kept failing parents (`sinr`,
 * seeds 1-10, SELECT 100 @8 s .942 -> .922, `logistic` SELECT 25 @2 s .989 -> .968);
 * with 2, .942 and .984. */
#define ROUTING_GEN_SLACK 2u
/* A child whose beacons lag our generation by more than this is told ours at once
 * (routing_on_packet_snr). A leaf of a tuple query is awake only around its own sends, and
 * its parent's beacons ride on the parent's: it heard none, its generation stopped, and a
 * neighbour that lost its parent could not take it (docs/radio.md, a link dies under a
 * SELECT). With 2 as with 8 the six-mote layout there recovers; 8 tells less often. */
#define ROUTING_GEN_TELL 8u

/* RoutePacket after the mhop header: parent, cost, estEntries, entries. */
#define ROUTING_BEACON_FIXED 5u
#define ROUTING_BEACON_ENTRY 3u
/* motebase's trailer after the entries: 'm' 'b' deepest (routing_deepest) flags
 * generation (u16, little-endian). A MintRoute node reads estEntries entries and ignores
 * what follows. */
#define ROUTING_BEACON_TRAILER 6u
#define ROUTING_TRAILER_ALL_LISTED 0x01u /* every neighbour the sender hears is listed */
/* Whole beacon (mhop header + RoutePacket) with every neighbour listed; fits TOS_DATA_LENGTH. */
#define ROUTING_BEACON_MAX \
    (MHOP_HEADER_LEN + ROUTING_BEACON_FIXED + ROUTING_BEACON_ENTRY * ROUTING_MAX_NEIGHBORS)

/* routing.flags */
#define ROUTING_F_ROOT 0x01u       /* node 0: depth 0, parent TOS_UART_ADDR, never changes */
#define ROUTING_F_DUTY_CYCLED 0x02u /* asleep most of the time: silence is no sign of loss */
#define ROUTING_F_LOST_ROUTE 0x04u /* unrouted after having had a parent: descendants may linger */
#define ROUTING_F_HOLD 0x08u       /* a working parent is kept, however a neighbour compares */
#define ROUTING_F_LINK_SWITCHED 0x10u /* left a lossy parent (or deepened) this period */
#define ROUTING_F_PARENT_ACKS 0x20u /* parent_link holds the parent's acks */
#define ROUTING_F_STEADY 0x40u     /* duty cycled, a lossy parent is kept (routing_keep_steady) */

/* What to do with a multihop packet addressed to this node. */
typedef enum routing_verdict {
    ROUTING_ACCEPT = 0,      /* new, from a child: intercept or forward it */
    ROUTING_DROP_DUP = 1,    /* same sourceaddr+seqno seen recently */
    ROUTING_DROP_CYCLE = 2,  /* hopcount <= own depth */
    ROUTING_DROP_NO_ROUTE = 3 /* we have no parent, cannot forward */
} routing_verdict;

typedef struct routing_neighbor {
    uint16_t id;
    uint16_t cost;       /* advertised cumulative cost (beacons only) */
    uint8_t last_seqno;  /* low byte of the last seqno heard from id: gaps are small */
    uint8_t quality;     /* receive-success EWMA, 0..255 */
    uint8_t depth;       /* advertised hopcount, ROUTING_DEPTH_NONE if unrouted */
    uint8_t silent;      /* routing_tick() periods since last heard */
    uint8_t flags;       /* ROUTING_NB_* */
    uint8_t data_seq;    /* low byte of the seqno of the last packet it sent us (NB_DATA_SEEN) */
    uint8_t out_quality; /* how well it hears us, from its beacons' entries; 0: not told */
    int8_t snr;          /* dB over our noise floor, EWMA 1/4 of its packets; 0: unknown */
    uint16_t gen;        /* route generation of its last beacon (ROUTING_NB_GEN) */
} routing_neighbor;

/* routing_neighbor.flags */
#define ROUTING_NB_CHILD 0x01u     /* its last beacon (or result) named us as parent */
#define ROUTING_NB_DATA_SEEN 0x02u /* data_seq holds something */
#define ROUTING_NB_MOTEBASE 0x20u  /* its beacons carry motebase's trailer: it takes bundles */
#define ROUTING_NB_GEN 0x40u       /* gen holds the route generation its trailer advertised */
/* Packets the neighbour sent since admitted (heard or missed), saturating: a link is
 * judged good or lossy only after ROUTING_NB_SEEN_MATURE of them. */
#define ROUTING_NB_SEEN_ONE 0x04u
#define ROUTING_NB_SEEN_MASK 0x1Cu
#define ROUTING_NB_SEEN_MATURE (5u * ROUTING_NB_SEEN_ONE)

typedef struct routing_stats { /* diagnostics, wrapping */
    uint16_t dup_drops;
    uint16_t cycle_drops;
    uint16_t no_route_drops;
    uint16_t parent_changes;
    uint16_t table_replacements;
} routing_stats;

typedef struct routing {
    routing_stats stats;
    /* private */
    routing_neighbor nb[ROUTING_MAX_NEIGHBORS];
    uint16_t dup_src[ROUTING_DUP_RING];
    uint16_t dup_seq[ROUTING_DUP_RING];
    uint16_t self;
    uint16_t parent;     /* node id, TOS_UART_ADDR at the root, ROUTING_PARENT_NONE */
    uint16_t cost;
    uint16_t seqno;      /* next seqno this node puts on the air (int16 on the wire) */
    uint16_t gen;        /* route generation: the root's beacon count, as our path told it */
    uint8_t depth;
    uint8_t parent_slot; /* index into nb, or ROUTING_MAX_NEIGHBORS */
    uint8_t n_nb;
    uint8_t dup_head;
    uint8_t beacon_cursor; /* rotates the listed entries when they do not all fit */
    uint8_t flags;         /* ROUTING_F_* */
    uint8_t parent_misses; /* listening windows the parent stayed silent in, in a row */
    uint8_t lost_depth;    /* depth before the route was lost */
    uint8_t deepest;       /* deepest depth children advertised this period (0: none) */
    uint8_t deepest_prev;  /* ... and in the period before */
    uint8_t parent_link;   /* 255 / the EWMA of sends per result to the parent (F_PARENT_ACKS) */
    uint8_t settled;       /* routing_tick() periods since our depth last grew */
} routing;

void routing_init(routing *rt, uint16_t self);

/*
 * Every packet heard (addressed to us or overheard) whose type carries a
 * TOS_MHopMsg header (AM 240, 107, 250). Updates the sender's advertised
 * depth and liveness and, for AM 240 and 250 (which carry the sender's
 * running seqno; 107 always carries 0), its link estimate. For AM 250,
 * `body`/`body_len` are the RoutePacket bytes after the mhop header (ignored
 * for other types). May change the parent.
 */
void routing_on_packet(routing *rt, const tos_header *tos, const mhop_header *mh,
                       const uint8_t *body, uint8_t body_len);

/* The same, for a packet whose signal the radio measured: `snr_db` over our noise
 * floor (ROUTING_SNR_UNKNOWN: not measured). Returns 1 for a beacon of our child whose
 * route generation lags ours by more than ROUTING_GEN_TELL: it does not hear our beacons,
 * and one sent at once -- while it listens after its own -- tells it ours. */
uint8_t routing_on_packet_snr(routing *rt, const tos_header *tos, const mhop_header *mh,
                              const uint8_t *body, uint8_t body_len, int8_t snr_db);

/*
 * Duplicate / cycle / no-route check for a packet addressed to this node,
 * before intercepting (merging) or forwarding it. Records it in the duplicate
 * ring when accepted; counts drops. A packet whose hopcount is over `depth` comes
 * from below: the node's depth (routing_depth), or the shallower one its schedule
 * still keeps after its route moved deeper (core/results.c).
 */
routing_verdict routing_should_forward(routing *rt, const mhop_header *mh, uint8_t depth);

/*
 * Header for the next transmission of a payload produced by `origin` (self
 * for own results, the incoming originaddr when forwarding): sourceaddr =
 * self, hopcount = depth, seqno = own counter, then incremented (not at the
 * root, whose parent is the UART). Returns the destination for the TOS header:
 * the parent, or TOS_BCAST_ADDR with hopcount MHOP_HOPCOUNT_INVALID if none.
 */
uint16_t routing_fill_header(routing *rt, mhop_header *mh, uint16_t origin);

/*
 * Encode this node's beacon (mhop header + RoutePacket) into out; returns
 * its length, or 0 if cap < ROUTING_BEACON_FIXED + MHOP_HEADER_LEN. Lists
 * as many neighbours as fit, rotating across calls. Send it broadcast, AM 250.
 */
uint8_t routing_build_beacon(routing *rt, uint8_t *out, uint8_t cap);

/*
 * Once per beacon period: ages neighbours, drops a silent parent (not while
 * duty cycled: then only misses count), reselects.
 */
void routing_tick(routing *rt);

/* Whether the node sleeps between slots (a query runs); see the mechanism above. */
void routing_set_duty_cycled(routing *rt, uint8_t on);

/*
 * Hold (on) or allow (off) switching away from a working parent. A node that
 * keeps a slot schedule holds it while an epoch is under way: a child that
 * changed parent between planning its epoch and sending its record would send
 * to a parent that did not plan to listen for it, and the record would come
 * late. Releasing the hold reconsiders the choice at once. A lost parent is
 * dropped either way.
 */
void routing_hold_switches(routing *rt, uint8_t on);

/*
 * While on and duty cycled, a working parent is not left for a better link, only
 * when lost, when it fails, or for one closer to the root. A node whose records are merged up the
 * tree (aggregates) keeps it: a subtree that moves loses an epoch or two of
 * records on the way, more than a lossy link loses while the query runs.
 */
void routing_keep_steady(routing *rt, uint8_t on);

/* The parent acknowledged a send: it is alive and hears us. */
void routing_parent_acked(routing *rt);
/*
 * The data path's verdict on the link to the parent: a result was taken after
 * `tries` sends, or given up (0). Sends that met a parent known to be busy (no
 * queue room) are no tries (core/txpath.c): congestion is not the link's fault.
 */
void routing_parent_took(routing *rt, uint8_t tries);

/* A window in which the parent may have been heard passed in silence; `limit` such
 * windows in a row drop it (at least ROUTING_PARENT_MAX_MISSES: the glue knows how many
 * windows a parent that is alive may stay silent through). */
void routing_parent_missed(routing *rt, uint8_t limit);

uint16_t routing_parent(const routing *rt);

/* Packets this node has put on the air since boot (beacons and results), modulo 2^16. */
uint16_t routing_packets_sent(const routing *rt);
/* 1 if the parent's beacons carry motebase's trailer: it takes bundled tuples
 * (result/bundle.h). The root's pseudo-parent, the UART, does not. */
uint8_t routing_parent_bundles(const routing *rt);
/* 1 while unrouted after having had a parent: the node should listen to find a new one. */
uint8_t routing_searching(const routing *rt);
/*
 * The deepest depth in this node's subtree as far as its children's beacons
 * told it in the last two beacon periods (its own depth if it heard of none;
 * ROUTING_DEPTH_NONE if unrouted). Each node advertises it in its beacons, so
 * the root learns how deep the tree is: how long a query takes to reach every
 * level and how far ahead the deepest level works (core/schedule.h).
 */
uint8_t routing_deepest(const routing *rt);
uint8_t routing_depth(const routing *rt);
/* Link quality (0..255) to the parent, 0 if none; 255 at the root. */
uint8_t routing_parent_quality(const routing *rt);
/* Neighbour entries, for diagnostics and tests. */
uint8_t routing_neighbor_count(const routing *rt);
const routing_neighbor *routing_neighbor_at(const routing *rt, uint8_t i);

#endif /* MOTE_NET_ROUTING_H */
