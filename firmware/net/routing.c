#include "routing.h"

#include <string.h>

#include "le16.h"

#define NO_SLOT ROUTING_MAX_NEIGHBORS
#define ROOT_ID 0u
#define COST_NONE 0xFFFFu
/* A result given up counts as this many sends in the parent's ETX: more than any
 * result that got through (core/mote_state.h allows up to 6). */
#define ROUTING_GIVEN_UP_TRIES 8u
#define UNKNOWN_COST_EXTRA 64u /* path_cost of a neighbour whose cost we have not heard */

/* int16 on the wire, uint16 inside: wrap-around arithmetic stays defined. */
static int16_t seq_to_wire(uint16_t s)
{
    return s < 0x8000u ? (int16_t)s : (int16_t)(-(int32_t)(0x10000L - (int32_t)s));
}

/* EWMA with alpha 2^-ROUTING_EWMA_SHIFT toward 255 (received) or 0 (lost); rounding
 * lets both ends be reached. */
#define EWMA_ROUND ((1u << ROUTING_EWMA_SHIFT) - 1u)
static uint8_t quality_hit(uint8_t q)
{
    return (uint8_t)(q + ((255u - q + EWMA_ROUND) >> ROUTING_EWMA_SHIFT));
}

static uint8_t quality_miss(uint8_t q)
{
    return (uint8_t)(q - ((q + EWMA_ROUND) >> ROUTING_EWMA_SHIFT));
}

/* Expected transmissions over a link, in 1/16 units (16 = perfect). */
static uint16_t link_etx16(uint8_t q)
{
    return (uint16_t)((16u * 255u) / (q ? q : 1u));
}

/*
 * What a hop over a link of value v (0..255, the share of sends acked) costs a path,
 * in 1/16 units: its ETX squared. A lossy link costs more than its retransmissions:
 * its losses come in runs (a collision storm, a sleeping parent), its retries are
 * bounded by the schedule, and each one takes air from its level. ETX alone rated a
 * grid's diagonal (0.64 each way, ETX 2.4) about as two sides (2 x 1.07): trees took
 * diagonals, and on a 1,000-node grid COUNT delivered 384 of 1,000. Without them, 998.
 */
static uint16_t link_cost16(uint8_t v)
{
    return link_etx16((uint8_t)(((uint16_t)v * v) / 255u));
}

void routing_init(routing *rt, uint16_t self)
{
    uint8_t i;

    memset(rt, 0, sizeof(*rt));
    rt->self = self;
    rt->parent_slot = NO_SLOT;
    for (i = 0; i < ROUTING_DUP_RING; i++) {
        rt->dup_src[i] = TOS_BCAST_ADDR; /* never a sourceaddr */
    }
    if (self == ROOT_ID) {
        rt->flags = ROUTING_F_ROOT;
        rt->parent = TOS_UART_ADDR;
        rt->depth = 0;
        rt->cost = 0;
    } else {
        rt->parent = ROUTING_PARENT_NONE;
        rt->depth = ROUTING_DEPTH_NONE;
        rt->cost = COST_NONE;
    }
}

static uint8_t find_slot(const routing *rt, uint16_t id)
{
    uint8_t i;

    for (i = 0; i < rt->n_nb; i++) {
        if (rt->nb[i].id == id) {
            return i;
        }
    }
    return NO_SLOT;
}

/*
 * Heard in every period, a neighbour shows silent == 1 at tick time; it has
 * missed ROUTING_PARENT_LOST_PERIODS whole periods once silent exceeds that.
 */
static uint8_t is_lost(const routing_neighbor *n)
{
    return n->silent > ROUTING_PARENT_LOST_PERIODS;
}

/* A neighbour through which we could reach the root at all. */
static uint8_t routes_to_root(const routing_neighbor *n)
{
    return n->depth < ROUTING_MAX_DEPTH && !is_lost(n) && !(n->flags & ROUTING_NB_CHILD);
}

/*
 * Route generations (routing.h, Loops): the root counts its beacons, every node carries
 * its parent's count in its own. Compared modulo 2^16; 0 is "none yet" (the root
 * skips it), which any generation is newer than.
 */
static uint8_t gen_newer(uint16_t a, uint16_t b)
{
    uint16_t d = (uint16_t)(a - b);
    return b == 0u ? a != 0u : d != 0u && d < 0x8000u;
}

/* n's path carries root news we have not had: it cannot be routing through us. */
static uint8_t fresher(const routing *rt, const routing_neighbor *n)
{
    return (n->flags & ROUTING_NB_GEN) && gen_newer(n->gen, rt->gen);
}

/* n advertised a generation more than `by` older than ours. */
static uint8_t lags(const routing *rt, const routing_neighbor *n, uint8_t by)
{
    return (n->flags & ROUTING_NB_GEN) && rt->gen != 0u && gen_newer(rt->gen, (uint16_t)(n->gen + by));
}

/* n's path lags ours by more than ROUTING_GEN_SLACK: taking it would leave our generation
 * ahead of our parent's, and a node that had ours from us could then look fresher to the
 * parent than it is. */
static uint8_t staler(const routing *rt, const routing_neighbor *n)
{
    return lags(rt, n, ROUTING_GEN_SLACK);
}

static uint8_t is_candidate(const routing *rt, const routing_neighbor *n)
{
    return routes_to_root(n) && n->quality >= ROUTING_QUALITY_MIN && !staler(rt, n);
}

/*
 * Sends to n that would be acknowledged, 0..255, as far as what we hear of n tells. Until
 * its beacon lists us, n is taken to hear us a quarter as well as we hear it, not as
 * well: a link heard well may not carry our sends (the two directions differ by both
 * ends' hardware), and CTP takes no parent whose reverse link it does not know. On `sinr`
 * a fifth of the count the 1,000-node grid gave up went to parents that never
 * acknowledged that child. Seeds 1-10 on `sinr` (bench/issue10.py): SELECT 49 @4 s .944
 * -> .969, 100 @8 s .942 -> .979, COUNT 100 98.5 -> 99.5, the 1,000-node COUNT 746.5 ->
 * 807 (seeds 1-30: 743.75 -> 826); `logistic`'s grids unchanged, the Intel lab @31 s
 * .979 -> .993. Taken as half as well: 800.75 and SELECT 49 .941; an eighth: 789.75.
 */
static uint8_t heard_both_ways(const routing_neighbor *n)
{
    uint8_t back = n->out_quality ? n->out_quality : (uint8_t)(n->quality / 4u);
    return (uint8_t)(((uint16_t)n->quality * back) / 255u);
}

/* The same from the parent's acks once we send to it, else from what we hear. */
static uint8_t link_value(const routing *rt, uint8_t slot)
{
    if (slot == rt->parent_slot && (rt->flags & ROUTING_F_PARENT_ACKS))
        return rt->parent_link;
    return heard_both_ways(&rt->nb[slot]);
}

/* Enough of n's packets were due to judge its link (a fresh estimate says nothing). */
static uint8_t link_judged(const routing_neighbor *n)
{
    return (n->flags & ROUTING_NB_SEEN_MASK) >= ROUTING_NB_SEEN_MATURE;
}

/* A link that loses few sends or acks. */
static uint8_t link_good(const routing *rt, uint8_t slot)
{
    return link_judged(&rt->nb[slot]) && link_value(rt, slot) >= ROUTING_LINK_GOOD;
}

/*
 * One known to lose half the sends or more. Depth alone picks long, lossy links
 * (a diagonal to the root over two short hops), and the subtree behind one
 * loses what the retries cannot carry. A link not judged yet is not lossy: a
 * tree forms by depth first, as fast as beacons spread.
 */
static uint8_t link_lossy(const routing *rt, uint8_t slot)
{
    return link_judged(&rt->nb[slot]) && link_value(rt, slot) < ROUTING_LINK_POOR;
}

/*
 * The parent's acks say the link barely works: three sends in four or more lost. A
 * node that keeps such a parent until a neighbour's link is proven good may keep it
 * for good -- where neighbours are many (the Intel lab layout), the table turns over
 * before an entry is judged, and estimates made while asleep run low. It then
 * leaves for any neighbour not known to be lossy that it hears better.
 */
static uint8_t parent_failing(const routing *rt)
{
    return rt->parent_slot != NO_SLOT && (rt->flags & ROUTING_F_PARENT_ACKS) &&
           rt->parent_link < ROUTING_LINK_FAILING;
}

/* nb[slot]'s link beats nb[than]'s by the switch margin: clearly, not by chance. */
static uint8_t link_beats(const routing *rt, uint8_t slot, uint8_t than)
{
    return link_value(rt, slot) >= (uint16_t)link_value(rt, than) + ROUTING_SWITCH_MARGIN;
}

/*
 * A link to leave the parent for: a good one, or, from a failing parent, one not known
 * to be lossy or one that clearly beats it. A neighbour that sleeps between its slots
 * counts what it slept through as lost, so the way back it reports runs low, and a
 * lossy-looking link that is three times the failing parent's was never taken (100-node
 * COUNT on `sinr`, seed 1: node 82 kept a parent that acked 11 of 200 frames).
 */
static uint8_t link_to_leave_for(const routing *rt, uint8_t slot)
{
    return link_good(rt, slot) ||
           (parent_failing(rt) && (!link_lossy(rt, slot) || link_beats(rt, slot, rt->parent_slot)));
}

/*
 * What a link heard weakly costs on top of its ETX. The estimates come from a quiet
 * channel: on the sinr radio a link 11 dB over the noise delivers a whole frame 95 %
 * of the time until another frame adds a little interference. Trees took such links
 * across half a grid (25 nodes, seed 4: 50 m to a parent, three levels for 25 nodes)
 * and a level's records, all in one interval, then drowned each other: COUNT 25 at
 * 2 s 20.9 of 25, COUNT 100 at 4 s 52.9 of 100 (seeds 1-10); with this cost 24.3 and
 * 85.5. Below ROUTING_SNR_FIRM_DB each dB costs two hops: a weak link is taken only
 * where nothing stronger leads on.
 */
static uint16_t weak_signal_cost(const routing_neighbor *n)
{
    if (n->snr == ROUTING_SNR_UNKNOWN || n->snr >= ROUTING_SNR_FIRM_DB)
        return 0u;
    return (uint16_t)((uint8_t)(ROUTING_SNR_FIRM_DB - n->snr) * ROUTING_SNR_PENALTY);
}

/*
 * Sends from here to the root through nb[slot], in 1/16 units: what it advertises
 * plus the ETX of our link to it. A neighbour heard only through its data (no
 * beacon yet) is taken to cost a good hop per level, and a little more.
 */
static uint32_t path_cost(const routing *rt, uint8_t slot)
{
    const routing_neighbor *n = &rt->nb[slot];
    uint32_t c = n->cost == COST_NONE ? 16u * (uint32_t)n->depth + UNKNOWN_COST_EXTRA : n->cost;
    uint8_t v = link_value(rt, slot);
    /* The root never sleeps and forwards to the UART: its links lose sends one by one,
     * not in runs, so their ETX is what they cost. Squared, the Intel lab layout's
     * many lossy root links sent tuples through relays that then carried a fifth more
     * frames on a shared channel: SELECT at 4 s fell from .55 to .44. */
    c += n->id == ROOT_ID ? link_etx16(v) : link_cost16(v);
    return c + weak_signal_cost(n);
}

/*
 * The cheaper path to the root first (path_cost), then -- on a tie -- a link not
 * known to be lossy, closer to the root, the better link, the lower id: a total
 * order, so ties are reproducible. Depth first chose links a fifth of whose sends
 * got through, one hop from the root (Intel lab layout: 26 of 54 motes were the
 * root's children, a dozen of them on such links), over two good hops. Who may be
 * chosen at all is still decided by depth (may_replace_parent, safe_after_loss):
 * that is what keeps the tree free of loops.
 */
static uint8_t better(const routing *rt, uint8_t a, uint8_t b)
{
    const routing_neighbor *na = &rt->nb[a], *nb = &rt->nb[b];
    uint32_t ca = path_cost(rt, a), cb = path_cost(rt, b);
    uint8_t va, vb;

    if (ca != cb) {
        return ca < cb;
    }
    if (link_lossy(rt, a) != link_lossy(rt, b)) {
        return link_lossy(rt, b);
    }
    if (na->depth != nb->depth) {
        return na->depth < nb->depth;
    }
    va = heard_both_ways(na);
    vb = heard_both_ways(nb);
    if (va != vb) {
        return va > vb;
    }
    return na->id < nb->id;
}

/* Worse-first eviction order: long silent, then the weaker of two measured signals if
 * either is weak (admit), then weakest link, then the later slot. */
static uint8_t worse_victim(const routing_neighbor *a, const routing_neighbor *b)
{
    uint8_t a_lost = is_lost(a);
    uint8_t b_lost = is_lost(b);
    int8_t weaker = a->snr < b->snr ? a->snr : b->snr; /* unmeasured (0) if either is */

    if (a_lost != b_lost) {
        return a_lost;
    }
    if (weaker != ROUTING_SNR_UNKNOWN && weaker < ROUTING_SNR_FIRM_DB && a->snr != b->snr) {
        return a->snr < b->snr;
    }
    return a->quality < b->quality;
}

/*
 * Slot for a sender not in the table yet, or NO_SLOT if it is not worth one. Where the
 * radio measures the signal, a full table takes a newcomer under ROUTING_SNR_ADMIT_DB
 * only in a long silent entry's place, and gives up its weakest signal first, as the
 * 4-bit link estimator asks its physical layer before it evicts. On the sinr radio a
 * grid node hears ~29 neighbours, most over transitional links; the ten places turned
 * over to them, each admitted at a fresh entry's quality, and relays changed parents
 * about ten times a query (100-node grid at 8 s, seed 1: 996 changes, 363 on logistic).
 * Seeds 1-20 on sinr, the rule off -> 18 dB -> 21 dB with the weakest evicted: SELECT
 * 49 @4 s .908 -> .942 -> .939, 100 @8 s .840 -> .944 -> .951, COUNT 25 24.2 -> 24.5 ->
 * 24.8, MAX 25 exact .969 -> .980 -> .987, COUNT 100 @4 s 87.7 -> 93.9 -> 93.7.
 */
static uint8_t admit(routing *rt, uint16_t id, uint8_t hopcount, int8_t snr_db)
{
    routing_neighbor *n;
    uint8_t victim = NO_SLOT;
    uint8_t i, newcomer_useful, victim_useful;

    if (rt->n_nb < ROUTING_MAX_NEIGHBORS) {
        victim = rt->n_nb++;
    } else {
        for (i = 0; i < rt->n_nb; i++) {
            if (i != rt->parent_slot && (victim == NO_SLOT || worse_victim(&rt->nb[i], &rt->nb[victim]))) {
                victim = i;
            }
        }
        if (victim == NO_SLOT) {
            return NO_SLOT;
        }
        n = &rt->nb[victim];
        /* Only a newcomer that could be a parent displaces one that could not. */
        newcomer_useful = hopcount < ROUTING_MAX_DEPTH && (rt->depth == ROUTING_DEPTH_NONE || hopcount < rt->depth);
        victim_useful = n->depth < ROUTING_MAX_DEPTH && (rt->depth == ROUTING_DEPTH_NONE || n->depth < rt->depth);
        if (!(is_lost(n) || n->quality < ROUTING_QUALITY_INIT ||
              (newcomer_useful && !victim_useful))) {
            return NO_SLOT;
        }
        if (!is_lost(n) && snr_db != ROUTING_SNR_UNKNOWN && snr_db < ROUTING_SNR_ADMIT_DB) {
            return NO_SLOT;
        }
        rt->stats.table_replacements++;
    }
    n = &rt->nb[victim];
    memset(n, 0, sizeof(*n));
    n->id = id;
    n->cost = COST_NONE;
    n->quality = ROUTING_QUALITY_INIT;
    n->depth = ROUTING_DEPTH_NONE;
    return victim;
}

/*
 * Fold the seqno gap since the last packet from n into its link estimate.
 * While duty cycled the gap also counts packets sent while we slept, so the
 * estimate drifts low; the parent is then judged by misses, not by quality.
 */
static void count_due(routing_neighbor *n, uint8_t packets)
{
    uint8_t seen = (uint8_t)(n->flags & ROUTING_NB_SEEN_MASK);
    uint8_t room = (uint8_t)((ROUTING_NB_SEEN_MASK - seen) / ROUTING_NB_SEEN_ONE);

    if (packets > room) {
        packets = room;
    }
    n->flags = (uint8_t)(n->flags + packets * ROUTING_NB_SEEN_ONE);
}

/*
 * One packet of n's that was due, received or not. The first ones average (the k-th
 * weighs 1/k) until the EWMA's own weight takes over: started from
 * ROUTING_QUALITY_INIT, the EWMA judged a link by its last few packets -- a grid's
 * diagonal (0.64) heard 4 of its first 5 rated 190, as good as a side.
 */
static void fold_due(routing_neighbor *n, uint8_t received)
{
    uint8_t k = (uint8_t)((n->flags & ROUTING_NB_SEEN_MASK) / ROUTING_NB_SEEN_ONE);
    uint8_t target = received ? 255u : 0u;

    count_due(n, 1);
    if (k < ROUTING_AVERAGE_FIRST) {
        /* k packets averaged so far: the new one weighs 1/(k+1) */
        n->quality = (uint8_t)(((uint16_t)n->quality * k + target) / (k + 1u));
    } else {
        n->quality = received ? quality_hit(n->quality) : quality_miss(n->quality);
    }
}

static void estimate_link(routing_neighbor *n, uint16_t seqno)
{
    uint8_t gap = (uint8_t)(seqno - n->last_seqno);

    if (gap == 0) {
        return; /* a link-layer retransmission, already counted */
    }
    if (gap <= ROUTING_MAX_GAP) {
        for (; gap > 1; gap--) {
            fold_due(n, 0);
        }
    }
    /* beyond ROUTING_MAX_GAP (or backwards): the sender rebooted; restart the reference */
    fold_due(n, 1);
    n->last_seqno = (uint8_t)seqno;
}

/*
 * Leaving a parent, keep what its acks said in its link estimate, so that a
 * parent left for losing our sends does not look as good as it sounds and win
 * us back at once (asleep, nothing else revises the estimate).
 */
static void remember_acks(routing *rt)
{
    uint16_t target = (uint16_t)rt->parent_link * 255u;
    uint8_t r = 0;

    while (r < 255u && (uint16_t)(r + 1u) * (r + 1u) <= target) {
        r++;
    }
    rt->nb[rt->parent_slot].quality = r;
}

static void set_parent(routing *rt, uint8_t slot)
{
    uint16_t id = slot == NO_SLOT ? ROUTING_PARENT_NONE : rt->nb[slot].id;
    uint32_t cost;
    uint8_t i;

    if (id != rt->parent) {
        rt->stats.parent_changes++;
        rt->parent_misses = 0;
        if ((rt->flags & ROUTING_F_PARENT_ACKS) && rt->parent_slot != NO_SLOT)
            remember_acks(rt);
        rt->flags &= (uint8_t)~ROUTING_F_PARENT_ACKS;
    }
    if (slot == NO_SLOT && rt->parent != ROUTING_PARENT_NONE) {
        rt->lost_depth = rt->depth;
    }
    if (slot != NO_SLOT) {
        rt->flags &= (uint8_t)~ROUTING_F_LOST_ROUTE;
    } else if (rt->parent != ROUTING_PARENT_NONE) {
        rt->flags |= ROUTING_F_LOST_ROUTE;
    }
    if (slot == NO_SLOT && rt->parent != ROUTING_PARENT_NONE) {
        for (i = 0; i < rt->n_nb; i++) {
            if (rt->nb[i].silent == 0) {
                rt->nb[i].silent = 1; /* depths heard so far may lead back through us */
            }
            /* estimates made while asleep ran low: judge every link afresh, awake */
            if ((rt->flags & ROUTING_F_DUTY_CYCLED) && rt->nb[i].quality < ROUTING_QUALITY_INIT) {
                rt->nb[i].quality = ROUTING_QUALITY_INIT;
                rt->nb[i].flags &= (uint8_t)~ROUTING_NB_SEEN_MASK;
            }
        }
    }
    rt->parent = id;
    rt->parent_slot = slot;
    if (slot == NO_SLOT) {
        rt->depth = ROUTING_DEPTH_NONE;
        rt->cost = COST_NONE;
        return;
    }
    if (rt->depth == ROUTING_DEPTH_NONE || rt->nb[slot].depth + 1u > rt->depth) {
        rt->settled = 0;
    }
    rt->depth = (uint8_t)(rt->nb[slot].depth + 1u);
    if (fresher(rt, &rt->nb[slot]))
        rt->gen = rt->nb[slot].gen;
    cost = path_cost(rt, slot);
    rt->cost = cost >= COST_NONE ? (uint16_t)(COST_NONE - 1u) : (uint16_t)cost;
}

/*
 * Whether n may become the parent when there is no working one. A neighbour with a
 * newer route generation than ours never routes through us. Otherwise: with a depth
 * still set (the parent was just lost), n is strictly closer to the root than we
 * were, so it cannot be a descendant. Unrouted, n must have been heard since the
 * loss (a fresh depth) and, if we lost a route, advertise no more than the depth we
 * had: all our descendants advertise more, however stale. One as deep as we were is
 * taken at once if its id is lower than ours (two such nodes that lost their parents
 * together would otherwise take each other), else at the period's end
 * (`period_end`, routing_tick), when it has had time to tell its own loss. Taking any
 * neighbour heard since the loss closed loops: on an idle 49-node grid on `sinr`
 * (seed 9) the root's two children lost it together, and every node was in a loop for
 * 20 s; on a 1,000-node grid at 8-s epochs, loops of 100 nodes formed at the period's
 * end. Deeper neighbours wait for newer generations, which cross a level an epoch
 * while a query runs.
 */
static uint8_t safe_after_loss(const routing *rt, const routing_neighbor *n, uint8_t period_end)
{
    if (rt->depth != ROUTING_DEPTH_NONE) {
        return n->depth < rt->depth || fresher(rt, n);
    }
    if (n->silent != 0) {
        return 0;
    }
    return !(rt->flags & ROUTING_F_LOST_ROUTE) || fresher(rt, n) || n->depth < rt->lost_depth ||
           (n->depth == rt->lost_depth && (n->id < rt->self || period_end));
}

/* Duty cycled while aggregates run (routing_keep_steady): the tree is held still. */
static uint8_t held_steady(const routing *rt)
{
    const uint8_t steady = ROUTING_F_DUTY_CYCLED | ROUTING_F_STEADY;
    return (rt->flags & steady) == steady;
}

/*
 * Leaving a lossy parent for its link: once a period, and not while duty-cycled
 * aggregates hold the tree steady (a subtree that moves loses an epoch of records) --
 * unless the parent fails: then the subtree loses every epoch's records while it stays.
 * On a 1,000-node grid on `sinr` (seed 2) a relay that had taken a 36-m link after
 * losing its parent kept it for 22 epochs, 6 sends of its record each, none received.
 */
static uint8_t link_switch_allowed(const routing *rt)
{
    return !(rt->flags & ROUTING_F_LINK_SWITCHED) && (!held_steady(rt) || parent_failing(rt));
}

/*
 * Heard recently enough that what it advertised still holds: this period -- or, while
 * aggregates hold the tree steady, the last one. There a node reconsiders its parent
 * only as it plans an epoch (routing_hold_switches), just after the tick that marked
 * every neighbour unheard, and the neighbours one level deeper, heard in their interval
 * before ours, always looked silent then.
 */
static uint8_t heard_lately(const routing *rt, const routing_neighbor *n)
{
    return n->silent <= (held_steady(rt) ? 1u : 0u);
}

/* No neighbour names us as parent, and no child told us a depth for two periods. */
static uint8_t childless(const routing *rt)
{
    uint8_t i;
    if (rt->deepest || rt->deepest_prev)
        return 0;
    for (i = 0; i < rt->n_nb; i++)
        if (rt->nb[i].flags & ROUTING_NB_CHILD)
            return 0;
    return 1;
}

/*
 * A link to take for a cheaper path further from the root: one not known to be lossy --
 * or, from a failing parent, one that clearly beats it (link_to_leave_for), if we have
 * no children. A node whose cost jumped with its failing parent's acks might otherwise
 * take a descendant still advertising our old cost; a leaf has none. On `sinr` leaves in
 * a pocket of a grid, their only shallower link failing and their deeper neighbours
 * heard as lossy (they sleep between slots), kept the failing parent for whole queries
 * (100-node COUNT at 4 s, seed 26: node 39, 23 records of 23 unacked). Seeds 1-100:
 * exact .720 -> .742, mean error 1.02 -> 0.85.
 */
static uint8_t link_to_go_further_on(const routing *rt, uint8_t slot)
{
    return !link_lossy(rt, slot) || (childless(rt) && link_to_leave_for(rt, slot));
}

/*
 * Whether nb[slot], as deep as we are or deeper, offers a path cheaper than ours by
 * ROUTING_COST_MARGIN (over link_to_go_further_on). Its advertised cost is below
 * ours, so it does not route through us (a descendant's path contains ours); depth
 * alone cannot tell, which is why moves were once only ever toward the root -- and
 * a tree formed over the first links heard, before any was judged, kept them (a
 * grid's diagonals: 0.64 each way). Once a period, like any move for a link, and
 * not while aggregates hold the tree steady a parent that works; to a neighbour as
 * deep as we are only if its id is lower (may_replace_parent: crossing beacons).
 */
static uint8_t cheaper_further(const routing *rt, uint8_t slot)
{
    const routing_neighbor *n = &rt->nb[slot];

    return rt->parent_slot != NO_SLOT && n->cost < rt->cost && heard_lately(rt, n) &&
           (n->depth > rt->depth || n->id < rt->self) && link_judged(n) &&
           link_to_go_further_on(rt, slot) && link_switch_allowed(rt) &&
           path_cost(rt, slot) + ROUTING_COST_MARGIN < path_cost(rt, rt->parent_slot);
}

/*
 * Whether nb[slot] may replace a working parent. A neighbour closer to the root
 * than we are cannot be our descendant -- unless our depth grew lately: then a
 * descendant that has not heard of it yet advertises a depth, and a cost, stale by
 * the growth, which can be below ours. Until our depth has not grown for
 * ROUTING_SETTLE_PERIODS, only a neighbour whose route generation is not older than
 * ours is taken (a descendant's never is newer, and it is older until it hears us;
 * 100-node grid, 1 s SELECT on `sinr`, seed 4: a relay that lost its parent came
 * back two levels deeper through a fresher neighbour, then took a grandchild still
 * advertising a depth below its new one, and the loop held 3.5 s). One as deep as we
 * are, heard this period, may replace a lossy parent with a good link (two good hops
 * for one lossy one), once our depth has not grown for ROUTING_SETTLE_PERIODS: a
 * descendant k hops below us advertises our depth + k, stale by what our depth
 * grew since it last heard its parent, and it hears of a change about a hop a
 * period; grown by one, only a child (never chosen) could match our depth.
 * Such lateral moves go to lower ids only. Two neighbours at one depth whose
 * beacons cross each hear the other at the old depth; both moving closed
 * two-node loops (Intel lab, seed 2: 2<->6 and 12<->15, for up to 12 s). A loop
 * of stale depths that still forms is broken by the data path: a child no
 * deeper than us is refused and hears our beacon (core/results.c).
 */
static uint8_t may_replace_parent(const routing *rt, uint8_t slot)
{
    const routing_neighbor *n = &rt->nb[slot];
    uint8_t settled = rt->settled >= ROUTING_SETTLE_PERIODS;

    if (!settled && lags(rt, n, 0))
        return 0;
    if (n->depth < rt->depth || cheaper_further(rt, slot)) {
        return 1;
    }
    return settled && n->depth == rt->depth && n->id < rt->self && link_to_leave_for(rt, slot) &&
           n->silent == 0 && link_switch_allowed(rt);
}

enum { KEEP = 0, SWITCH = 1, SWITCH_FOR_LINK = 2 };

/*
 * While aggregates hold the tree steady, a failing parent is still left for a
 * neighbour as deep as it, heard clearly better: our depth -- the interval our records
 * go in, and our children's -- stays, so no record misses its parent's interval. On
 * the sinr radio relays kept parents that acked one send in ten for whole queries
 * (25-node grid, seed 4: 22 -> 5 none of 75, 24 -> 5 18 of 102).
 */
static uint8_t steady_way_around(const routing *rt, uint8_t cur, uint8_t cand)
{
    return held_steady(rt) && parent_failing(rt) && !(rt->flags & ROUTING_F_LINK_SWITCHED) &&
           rt->nb[cand].depth == rt->nb[cur].depth && link_beats(rt, cand, cur);
}

/*
 * Whether nb[cand] is clearly better than the working parent nb[cur] (no
 * flapping), and why: SWITCH_FOR_LINK (to a link_to_leave_for from one known to be
 * lossy) happens once a period, as the acks that judged the parent may have met a
 * passing collision storm rather than a bad link.
 */
static uint8_t worth_switching(const routing *rt, uint8_t cur, uint8_t cand)
{
    uint8_t lossy_cur = link_lossy(rt, cur);

    if (rt->nb[cand].depth >= rt->depth && cheaper_further(rt, cand)) {
        return SWITCH_FOR_LINK;
    }
    if (steady_way_around(rt, cur, cand)) {
        return SWITCH_FOR_LINK;
    }
    if (lossy_cur && link_to_leave_for(rt, cand)) {
        return link_beats(rt, cand, cur) && link_switch_allowed(rt) ? SWITCH_FOR_LINK : KEEP;
    }
    if (!lossy_cur && link_lossy(rt, cand)) {
        return KEEP;
    }
    /* While aggregates hold the tree steady, a parent whose link is not lossy is kept,
     * even for a cheaper path closer to the root. The parent's cost is what its acks
     * say under the load of the data intervals; a candidate's, what we overhear when
     * few others send. So candidates always looked cheaper, and on `sinr` a 1,000-node
     * grid moved 50 parents an epoch, each toward the root over a longer, weaker link:
     * mean depth 25 -> 17 in 40 epochs while records given up after their tries rose
     * from 7 % to 35 %. Seeds 1-6: COUNT 342 -> 489 (MAX 25, COUNT 100 and `logistic`
     * unchanged). A lossy parent is still left (above), and a lost one replaced. */
    if (held_steady(rt) && !lossy_cur) {
        return KEEP;
    }
    if (rt->nb[cand].depth != rt->nb[cur].depth) {
        return rt->nb[cand].depth < rt->nb[cur].depth &&
                       path_cost(rt, cand) + ROUTING_CLOSER_MARGIN <= path_cost(rt, cur)
                   ? SWITCH
                   : KEEP;
    }
    /* Between links judged alike, what we hear of both: acks also count collisions,
     * so a parent judged by them would always look worse than its siblings. Not while
     * aggregates hold the tree steady: asleep, what we hear is how often we slept
     * through a neighbour's packets, and nodes of a lossless 25-node grid running
     * GROUP BY swapped parents of one depth 70 times in 4 epochs, losing a record. */
    if (held_steady(rt))
        return KEEP;
    return rt->nb[cand].quality >= (uint16_t)rt->nb[cur].quality + ROUTING_SWITCH_MARGIN ? SWITCH : KEEP;
}

static void reselect(routing *rt, uint8_t period_end)
{
    const routing_neighbor *cur, *cand;
    uint8_t best = NO_SLOT;
    uint8_t have_parent, i, why;

    if (rt->flags & ROUTING_F_ROOT) {
        return;
    }
    /* A parent now as deep as we were may route through us: treat it as lost (no
     * count-to-infinity) -- unless its cost is still below ours, which it cannot be
     * through us. It moved to a deeper, cheaper path (cheaper_further), and we follow
     * one level deeper too: dropping it dropped whole subtrees, each move rippling
     * out (an idle 1,000-node grid, seeds 1 and 3: 21 and 26 nodes without a parent at
     * 20 s, none now). Not while aggregates hold the tree steady: records are timed by
     * depth, and a depth that follows hop by hop, a beacon period at a time, left a
     * relay holding 550 of 1,000 nodes' count late at its parent every other epoch. */
    have_parent = rt->parent_slot != NO_SLOT && routes_to_root(&rt->nb[rt->parent_slot]) &&
                  (rt->nb[rt->parent_slot].depth < rt->depth ||
                   fresher(rt, &rt->nb[rt->parent_slot]) ||
                   (rt->nb[rt->parent_slot].cost < rt->cost && !held_steady(rt)));
    /* Switches held (mid-epoch): a working parent is kept whatever the candidates, so
     * none is looked at. Every packet heard comes here; while aggregates run this is
     * most of them, and the loop's path costs were a twelfth of the emulator's time. */
    if (have_parent && (rt->flags & ROUTING_F_HOLD)) {
        set_parent(rt, rt->parent_slot); /* kept; its depth may have changed */
        return;
    }
    for (i = 0; i < rt->n_nb; i++) {
        if (is_candidate(rt, &rt->nb[i]) &&
            (have_parent ? may_replace_parent(rt, i) : safe_after_loss(rt, &rt->nb[i], period_end)) &&
            (best == NO_SLOT || better(rt, i, best))) {
            best = i;
        }
    }
    if (have_parent) {
        cur = &rt->nb[rt->parent_slot];
        cand = best == NO_SLOT ? cur : &rt->nb[best];
        /* hysteresis: keep a working parent unless clearly beaten; while switches are
         * held (mid-epoch), keep it anyway */
        why = cand == cur || (rt->flags & ROUTING_F_HOLD) ? KEEP : worth_switching(rt, rt->parent_slot, best);
        if (why == KEEP) {
            best = rt->parent_slot; /* kept; its depth may have changed */
        } else if (why == SWITCH_FOR_LINK) {
            rt->flags |= ROUTING_F_LINK_SWITCHED;
        }
    }
    set_parent(rt, best);
}

/* motebase's beacon trailer ('m' 'b' deepest flags) after the entries, NULL if none. */
static const uint8_t *beacon_trailer(const uint8_t *body, uint8_t body_len)
{
    uint16_t at = (uint16_t)(ROUTING_BEACON_FIXED + body[4] * ROUTING_BEACON_ENTRY);
    if (at + ROUTING_BEACON_TRAILER > body_len || body[at] != 'm' || body[at + 1u] != 'b')
        return 0;
    return body + at;
}

/* A child's beacon: the deepest depth below it, from motebase's trailer. */
static void heard_deepest(routing *rt, const uint8_t *trailer)
{
    uint8_t deepest = trailer[2];
    if (deepest != ROUTING_DEPTH_NONE && deepest > rt->deepest)
        rt->deepest = deepest;
}

uint8_t routing_deepest(const routing *rt)
{
    uint8_t d = rt->depth;
    if (d == ROUTING_DEPTH_NONE)
        return d;
    if (rt->deepest > d)
        d = rt->deepest;
    return rt->deepest_prev > d ? rt->deepest_prev : d;
}

static void set_child(routing_neighbor *n, uint8_t child)
{
    n->flags = (uint8_t)(child ? n->flags | ROUTING_NB_CHILD : n->flags & ~ROUTING_NB_CHILD);
}

/*
 * n's beacon lists how well it hears its neighbours: our entry is the way back. A
 * beacon whose trailer says it lists every neighbour its sender hears, and does not
 * list us, says n does not hear us: on the sinr radio a child heard its parent well and
 * was never heard back (25-node grid, 54 sends to the root, none acknowledged), yet
 * rated the link as good as what it heard.
 */
static void heard_back(const routing *rt, routing_neighbor *n, const uint8_t *body, uint8_t body_len,
                       const uint8_t *trailer)
{
    uint16_t at = ROUTING_BEACON_FIXED;
    uint8_t k;

    for (k = 0; k < body[4] && at + ROUTING_BEACON_ENTRY <= body_len; k++) {
        if (le16_get(&body[at]) == rt->self) {
            n->out_quality = body[at + 2u] ? body[at + 2u] : 1u;
            return;
        }
        at = (uint16_t)(at + ROUTING_BEACON_ENTRY);
    }
    if (trailer && (trailer[3] & ROUTING_TRAILER_ALL_LISTED))
        n->out_quality = 1u;
}

void routing_on_packet(routing *rt, const tos_header *tos, const mhop_header *mh,
                       const uint8_t *body, uint8_t body_len)
{
    routing_on_packet_snr(rt, tos, mh, body, body_len, ROUTING_SNR_UNKNOWN);
}

/* Fold a packet's measured signal into n's: the first sets it, then an EWMA of 1/4. */
static void heard_signal(routing_neighbor *n, int8_t snr_db)
{
    if (snr_db <= ROUTING_SNR_UNKNOWN)
        return;
    /* a received frame stands at least 1 dB over the noise: the average is never 0 */
    n->snr = n->snr == ROUTING_SNR_UNKNOWN ? snr_db
                                           : (int8_t)((3u * (uint8_t)n->snr + (uint8_t)snr_db + 2u) >> 2);
}

uint8_t routing_on_packet_snr(routing *rt, const tos_header *tos, const mhop_header *mh,
                              const uint8_t *body, uint8_t body_len, int8_t snr_db)
{
    routing_neighbor *n;
    uint8_t slot, lagging = 0;
    uint16_t src = mh->sourceaddr;

    if (src == rt->self || src == TOS_BCAST_ADDR || src == TOS_UART_ADDR) {
        return 0;
    }
    slot = find_slot(rt, src);
    if (slot == NO_SLOT) {
        slot = admit(rt, src, mh->hopcount, snr_db);
        if (slot == NO_SLOT) {
            return 0;
        }
        rt->nb[slot].last_seqno = (uint8_t)mh->seqno;
    } else if (am_is_result(tos->type) || tos->type == AM_ROUTE_BEACON) {
        estimate_link(&rt->nb[slot], (uint16_t)mh->seqno);
    }
    n = &rt->nb[slot];
    n->silent = 0;
    heard_signal(n, snr_db);
    if (slot == rt->parent_slot) {
        rt->parent_misses = 0;
    }
    n->depth = mh->hopcount;
    if (tos->type == AM_ROUTE_BEACON && body_len >= ROUTING_BEACON_FIXED) {
        const uint8_t *trailer = beacon_trailer(body, body_len);
        set_child(n, le16_get(&body[0]) == rt->self);
        n->cost = le16_get(&body[2]);
        heard_back(rt, n, body, body_len, trailer);
        n->flags = (uint8_t)(trailer ? n->flags | ROUTING_NB_MOTEBASE | ROUTING_NB_GEN
                                     : n->flags & ~(ROUTING_NB_MOTEBASE | ROUTING_NB_GEN));
        if (trailer)
            n->gen = le16_get(&trailer[4]);
        if (trailer && (n->flags & ROUTING_NB_CHILD)) {
            heard_deepest(rt, trailer);
            lagging = lags(rt, n, ROUTING_GEN_TELL);
        }
    } else if (am_is_result(tos->type) && tos->addr != TOS_BCAST_ADDR) {
        set_child(n, tos->addr == rt->self); /* whom it sends results to is its parent */
        if (tos->addr != rt->self) /* it is done with what it sent us: no resend to come */
            n->flags &= (uint8_t)~ROUTING_NB_DATA_SEEN;
    }
    reselect(rt, 0);
    return lagging;
}

/* `slot`: the sender's neighbour entry, or NO_SLOT. */
static uint8_t seen_recently(const routing *rt, uint8_t slot, uint16_t src, uint16_t seq)
{
    uint8_t i;

    if (slot != NO_SLOT && (rt->nb[slot].flags & ROUTING_NB_DATA_SEEN) &&
        rt->nb[slot].data_seq == (uint8_t)seq)
        return 1;
    for (i = 0; i < ROUTING_DUP_RING; i++) {
        if (rt->dup_src[i] == src && rt->dup_seq[i] == seq) {
            return 1;
        }
    }
    return 0;
}

routing_verdict routing_should_forward(routing *rt, const mhop_header *mh, uint8_t depth)
{
    uint16_t seq = (uint16_t)mh->seqno;
    uint8_t slot = find_slot(rt, mh->sourceaddr);

    if (seen_recently(rt, slot, mh->sourceaddr, seq)) {
        rt->stats.dup_drops++;
        return ROUTING_DROP_DUP;
    }
    if (rt->depth == ROUTING_DEPTH_NONE) {
        rt->stats.no_route_drops++;
        return ROUTING_DROP_NO_ROUTE;
    }
    if (mh->hopcount <= depth) {
        rt->stats.cycle_drops++;
        return ROUTING_DROP_CYCLE;
    }
    if (slot != NO_SLOT) {
        rt->nb[slot].data_seq = (uint8_t)seq;
        rt->nb[slot].flags |= ROUTING_NB_DATA_SEEN;
    }
    rt->dup_src[rt->dup_head] = mh->sourceaddr;
    rt->dup_seq[rt->dup_head] = seq;
    rt->dup_head = (uint8_t)((rt->dup_head + 1u) % ROUTING_DUP_RING);
    return ROUTING_ACCEPT;
}

uint16_t routing_fill_header(routing *rt, mhop_header *mh, uint16_t origin)
{
    mh->sourceaddr = rt->self;
    mh->originaddr = origin;
    mh->seqno = seq_to_wire(rt->seqno);
    mh->hopcount = rt->depth;
    if (!(rt->flags & ROUTING_F_ROOT)) {
        rt->seqno++; /* the root's results go to the UART, where nobody estimates links */
    }
    return rt->parent == ROUTING_PARENT_NONE ? TOS_BCAST_ADDR : rt->parent;
}

uint8_t routing_build_beacon(routing *rt, uint8_t *out, uint8_t cap)
{
    mhop_header mh;
    uint8_t room, listed = 0, k, i, trailer;
    uint8_t *entry;

    if (cap < MHOP_HEADER_LEN + ROUTING_BEACON_FIXED) {
        return 0;
    }
    if (rt->flags & ROUTING_F_ROOT) {
        rt->gen = (uint16_t)(rt->gen + 1u == 0u ? 1u : rt->gen + 1u);
    }
    mh.sourceaddr = rt->self;
    mh.originaddr = rt->self;
    mh.seqno = seq_to_wire(rt->seqno++);
    mh.hopcount = rt->depth;
    mhop_header_pack(&mh, out);
    le16_put(&out[MHOP_HEADER_LEN], rt->parent);
    le16_put(&out[MHOP_HEADER_LEN + 2], rt->cost);

    trailer = cap >= MHOP_HEADER_LEN + ROUTING_BEACON_FIXED + ROUTING_BEACON_TRAILER;
    room = (uint8_t)((cap - MHOP_HEADER_LEN - ROUTING_BEACON_FIXED -
                      (trailer ? ROUTING_BEACON_TRAILER : 0u)) /
                     ROUTING_BEACON_ENTRY);
    entry = &out[MHOP_HEADER_LEN + ROUTING_BEACON_FIXED];
    for (k = 0; k < rt->n_nb && listed < room; k++) {
        i = (uint8_t)((rt->beacon_cursor + k) % rt->n_nb);
        if (is_lost(&rt->nb[i])) {
            continue;
        }
        le16_put(entry, rt->nb[i].id);
        entry[2] = rt->nb[i].quality;
        entry += ROUTING_BEACON_ENTRY;
        listed++;
    }
    if (rt->n_nb) {
        rt->beacon_cursor = (uint8_t)((rt->beacon_cursor + k) % rt->n_nb);
    }
    out[MHOP_HEADER_LEN + 4] = listed;
    if (!trailer)
        return (uint8_t)(MHOP_HEADER_LEN + ROUTING_BEACON_FIXED + listed * ROUTING_BEACON_ENTRY);
    entry[0] = 'm';
    entry[1] = 'b';
    entry[2] = routing_deepest(rt);
    /* With room in the table every sender heard has an entry (the long silent are not
     * listed: not heard either); a full table may have turned one away. */
    entry[3] = k == rt->n_nb && rt->n_nb < ROUTING_MAX_NEIGHBORS ? ROUTING_TRAILER_ALL_LISTED : 0u;
    le16_put(&entry[4], rt->gen);
    return (uint8_t)(MHOP_HEADER_LEN + ROUTING_BEACON_FIXED + listed * ROUTING_BEACON_ENTRY +
                     ROUTING_BEACON_TRAILER);
}

void routing_tick(routing *rt)
{
    uint8_t i;

    rt->deepest_prev = rt->deepest; /* children that left stop counting after two periods */
    rt->deepest = 0;
    rt->flags &= (uint8_t)~ROUTING_F_LINK_SWITCHED;
    if (rt->settled < 0xFFu) {
        rt->settled++;
    }

    if (rt->depth == ROUTING_DEPTH_NONE) {
        reselect(rt, 1);
    }
    for (i = 0; i < rt->n_nb; i++) {
        /* a sleeping node cannot tell a silent parent from its own absence */
        if (rt->nb[i].silent < 0xFFu &&
            !((rt->flags & ROUTING_F_DUTY_CYCLED) && i == rt->parent_slot)) {
            rt->nb[i].silent++;
        }
    }
    reselect(rt, 0);
}

void routing_set_duty_cycled(routing *rt, uint8_t on)
{
    if (on && !(rt->flags & ROUTING_F_DUTY_CYCLED) && rt->parent_slot != NO_SLOT) {
        rt->nb[rt->parent_slot].silent = 0; /* judged by misses from now on */
    }
    if (!on && (rt->flags & ROUTING_F_HOLD)) {
        routing_hold_switches(rt, 0); /* nobody keeps a schedule: choose freely again */
    }
    rt->flags = (uint8_t)(on ? rt->flags | ROUTING_F_DUTY_CYCLED
                             : rt->flags & ~ROUTING_F_DUTY_CYCLED);
}

void routing_hold_switches(routing *rt, uint8_t on)
{
    rt->flags = (uint8_t)(on ? rt->flags | ROUTING_F_HOLD : rt->flags & ~ROUTING_F_HOLD);
    if (!on) {
        reselect(rt, 0);
    }
}

/* The first ack outcome from a new parent starts from what we heard of it. */
static void parent_link_start(routing *rt)
{
    if (!(rt->flags & ROUTING_F_PARENT_ACKS)) {
        rt->parent_link = heard_both_ways(&rt->nb[rt->parent_slot]);
        rt->flags |= ROUTING_F_PARENT_ACKS;
    }
}

void routing_keep_steady(routing *rt, uint8_t on)
{
    rt->flags = (uint8_t)(on ? rt->flags | ROUTING_F_STEADY : rt->flags & ~ROUTING_F_STEADY);
}

void routing_parent_acked(routing *rt)
{
    if (rt->parent_slot != NO_SLOT) {
        rt->nb[rt->parent_slot].silent = 0;
        rt->parent_misses = 0;
    }
}

/*
 * The parent's link from the data path: an EWMA (alpha 1/4) of the sends each result
 * took -- the ETX, in 1/16 units -- kept as its inverse, the share of sends acked.
 * Averaging 1/tries instead overrates a lossy link: one that acks 41 % of sends gave
 * 155/255, above ROUTING_LINK_POOR, so a relay kept its diagonal to the root and the
 * subtree behind it lost what the retries could not carry.
 */
void routing_parent_took(routing *rt, uint8_t tries)
{
    uint16_t etx, sample, link;

    if (rt->parent_slot == NO_SLOT) {
        return;
    }
    parent_link_start(rt);
    etx = link_etx16(rt->parent_link);
    sample = (uint16_t)(16u * (tries ? tries : ROUTING_GIVEN_UP_TRIES));
    /* rounded away from the estimate so that both ends are reached */
    etx = (uint16_t)(sample >= etx ? etx + (sample - etx + 3u) / 4u
                                   : etx - (etx - sample + 3u) / 4u);
    link = (uint16_t)((16u * 255u) / etx); /* etx >= 16, as the start and every sample are */
    rt->parent_link = (uint8_t)(link > 255u ? 255u : link);
    reselect(rt, 0);
}

void routing_parent_missed(routing *rt, uint8_t limit)
{
    if (rt->parent_slot == NO_SLOT || ++rt->parent_misses < limit) {
        return;
    }
    rt->nb[rt->parent_slot].silent = ROUTING_PARENT_LOST_PERIODS + 1u; /* is_lost */
    reselect(rt, 0);
}

uint16_t routing_packets_sent(const routing *rt)
{
    return rt->seqno;
}

uint16_t routing_parent(const routing *rt)
{
    return rt->parent;
}

uint8_t routing_parent_bundles(const routing *rt)
{
    return rt->parent_slot < ROUTING_MAX_NEIGHBORS &&
           (rt->nb[rt->parent_slot].flags & ROUTING_NB_MOTEBASE) != 0;
}

uint8_t routing_searching(const routing *rt)
{
    return (rt->flags & ROUTING_F_LOST_ROUTE) != 0;
}

uint8_t routing_depth(const routing *rt)
{
    return rt->depth;
}

uint8_t routing_parent_quality(const routing *rt)
{
    if (rt->flags & ROUTING_F_ROOT) {
        return 255u;
    }
    return rt->parent_slot == NO_SLOT ? 0u : rt->nb[rt->parent_slot].quality;
}

uint8_t routing_neighbor_count(const routing *rt)
{
    return rt->n_nb;
}

const routing_neighbor *routing_neighbor_at(const routing *rt, uint8_t i)
{
    return i < rt->n_nb ? &rt->nb[i] : NULL;
}
