/*
 * Routing tree (net/routing.h): small networks of routing instances exchange
 * beacons over a scripted, deterministic radio; parents, depths, drops and
 * reselection after a parent dies are checked against the topology.
 */
#include <string.h>

#include "check.h"
#include "net/le16.h"
#include "net/routing.h"

#define MAX_NODES 16

typedef struct net {
    routing rt[MAX_NODES];
    uint8_t link[MAX_NODES][MAX_NODES]; /* link[a][b]: b hears a; value = 1-in-N loss, 1 = perfect */
    int8_t snr[MAX_NODES][MAX_NODES];   /* dB over b's noise of what b hears of a; 0 unmeasured */
    uint8_t one_in[MAX_NODES][MAX_NODES]; /* set: b hears only one packet of a in this many */
    uint8_t alive[MAX_NODES];
    int n;
    unsigned round;
} net;

static void net_init(net *nw, int n)
{
    int i;

    memset(nw, 0, sizeof(*nw));
    nw->n = n;
    for (i = 0; i < n; i++) {
        routing_init(&nw->rt[i], (uint16_t)i);
        nw->alive[i] = 1;
    }
}

static void connect(net *nw, int a, int b, uint8_t loss_every)
{
    nw->link[a][b] = loss_every;
    nw->link[b][a] = loss_every;
}

/* Hand a packet (mhop header + body) from `from` to everyone who hears it this round. */
static void deliver(net *nw, int from, const tos_header *tos, const uint8_t *data, uint8_t len)
{
    mhop_header mh;
    int to;
    uint8_t loss;

    mhop_header_unpack(&mh, data);
    for (to = 0; to < nw->n; to++) {
        loss = nw->link[from][to];
        if (to == from || !loss || !nw->alive[to]) {
            continue;
        }
        if (loss > 1 && nw->round % loss == 0) {
            continue; /* this link loses one packet in `loss` */
        }
        if (nw->one_in[from][to] > 1 && nw->round % nw->one_in[from][to] != 0) {
            continue;
        }
        routing_on_packet_snr(&nw->rt[to], tos, &mh, data + MHOP_HEADER_LEN,
                              (uint8_t)(len - MHOP_HEADER_LEN), nw->snr[from][to]);
    }
}

/* One beacon period: every live node beacons, then every node ticks. */
static void net_round(net *nw)
{
    uint8_t buf[TOS_DATA_LENGTH];
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    int i;

    nw->round++;
    for (i = 0; i < nw->n; i++) {
        if (!nw->alive[i]) {
            continue;
        }
        tos.length = routing_build_beacon(&nw->rt[i], buf, sizeof buf);
        deliver(nw, i, &tos, buf, tos.length);
    }
    for (i = 0; i < nw->n; i++) {
        routing_tick(&nw->rt[i]);
    }
}

/* `n` beacon periods. */
static void net_rounds(net *nw, int n)
{
    while (n-- > 0) {
        net_round(nw);
    }
}

static void test_root(void)
{
    routing rt;

    routing_init(&rt, 0);
    CHECK_EQ(routing_parent(&rt), TOS_UART_ADDR);
    CHECK_EQ(routing_depth(&rt), 0);
    routing_tick(&rt);
    routing_tick(&rt);
    routing_tick(&rt);
    routing_tick(&rt);
    CHECK_EQ(routing_parent(&rt), TOS_UART_ADDR);

    routing_init(&rt, 7);
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE);
    CHECK_EQ(routing_depth(&rt), ROUTING_DEPTH_NONE);
}

static void test_beacon_bytes(void)
{
    static const uint8_t golden[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* mhop: src 0, origin 0, seqno 0, hop 0 */
        0x7E, 0x00,                               /* parent: the UART */
        0x00, 0x00,                               /* cost 0 */
        0x01,                                     /* one entry */
        0x05, 0x00, ROUTING_QUALITY_INIT,         /* node 5 at the initial estimate */
        'm', 'b', 0x00,                           /* motebase: the deepest level is 0, */
        ROUTING_TRAILER_ALL_LISTED,               /* every neighbour heard listed, */
        0x01, 0x00,                               /* the root's first generation */
    };
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    mhop_header mh = {5, 5, 0, ROUTING_DEPTH_NONE};
    uint8_t body[ROUTING_BEACON_FIXED] = {0xFF, 0xFF, 0xFF, 0xFF, 0};
    uint8_t out[TOS_DATA_LENGTH];
    routing rt;

    routing_init(&rt, 0);
    routing_on_packet(&rt, &tos, &mh, body, sizeof body);
    CHECK_EQ(routing_build_beacon(&rt, out, sizeof out), sizeof golden);
    CHECK_BYTES(out, golden, sizeof golden);
    /* the seqno advances with every beacon, and so does the root's generation */
    routing_build_beacon(&rt, out, sizeof out);
    CHECK_EQ(le16_get(&out[4]), 1);
    CHECK_EQ(le16_get(&out[sizeof golden - 2u]), 2);
    /* too small a buffer */
    CHECK_EQ(routing_build_beacon(&rt, out, MHOP_HEADER_LEN + ROUTING_BEACON_FIXED - 1), 0);
    /* room for the fixed part only: zero entries listed */
    CHECK_EQ(routing_build_beacon(&rt, out, MHOP_HEADER_LEN + ROUTING_BEACON_FIXED),
             MHOP_HEADER_LEN + ROUTING_BEACON_FIXED);
    CHECK_EQ(out[11], 0);
    CHECK(ROUTING_BEACON_MAX <= TOS_DATA_LENGTH);
}

/* A child's beacon tells its parent how deep the subtree goes; the parent tells its own
 * parent; the value ages out two periods after the child stops saying it. */
static void test_deepest_climbs_to_the_root(void)
{
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    mhop_header mh = {0, 0, 0, 0};
    uint8_t child[MHOP_HEADER_LEN + ROUTING_BEACON_MAX];
    routing root, mid, leaf;
    uint8_t n, i;

    routing_init(&root, 0);
    routing_init(&mid, 1);
    routing_init(&leaf, 2);
    CHECK_EQ(routing_deepest(&leaf), ROUTING_DEPTH_NONE);
    /* mid hears the root, leaf hears mid: a chain of depth 2 */
    for (i = 0; i < 3; i++) {
        n = routing_build_beacon(&root, child, sizeof child);
        mhop_header_unpack(&mh, child);
        tos.length = n;
        routing_on_packet(&mid, &tos, &mh, child + MHOP_HEADER_LEN, (uint8_t)(n - MHOP_HEADER_LEN));
        n = routing_build_beacon(&mid, child, sizeof child);
        mhop_header_unpack(&mh, child);
        routing_on_packet(&leaf, &tos, &mh, child + MHOP_HEADER_LEN, (uint8_t)(n - MHOP_HEADER_LEN));
    }
    CHECK_EQ(routing_depth(&leaf), 2);
    CHECK_EQ(routing_deepest(&leaf), 2);
    CHECK_EQ(routing_deepest(&mid), 1); /* no child heard yet */
    n = routing_build_beacon(&leaf, child, sizeof child);
    mhop_header_unpack(&mh, child);
    routing_on_packet(&mid, &tos, &mh, child + MHOP_HEADER_LEN, (uint8_t)(n - MHOP_HEADER_LEN));
    CHECK_EQ(routing_deepest(&mid), 2);
    n = routing_build_beacon(&mid, child, sizeof child);
    mhop_header_unpack(&mh, child);
    routing_on_packet(&root, &tos, &mh, child + MHOP_HEADER_LEN, (uint8_t)(n - MHOP_HEADER_LEN));
    CHECK_EQ(routing_deepest(&root), 2);
    /* a MintRoute beacon without the trailer says nothing of depth */
    child[MHOP_HEADER_LEN + ROUTING_BEACON_FIXED + child[MHOP_HEADER_LEN + 4] * 3u] = 'x';
    routing_tick(&root);
    routing_tick(&root);
    routing_on_packet(&root, &tos, &mh, child + MHOP_HEADER_LEN, (uint8_t)(n - MHOP_HEADER_LEN));
    CHECK_EQ(routing_deepest(&root), 0);
}

static void test_chain(void)
{
    static net nw;
    int i;

    net_init(&nw, 6);
    for (i = 0; i + 1 < 6; i++) {
        connect(&nw, i, i + 1, 1);
    }
    net_rounds(&nw, 8);
    for (i = 1; i < 6; i++) {
        CHECK_EQ(routing_parent(&nw.rt[i]), i - 1);
        CHECK_EQ(routing_depth(&nw.rt[i]), i);
        CHECK(routing_parent_quality(&nw.rt[i]) > 230); /* 7 beacons heard, none lost */
    }
}

static void test_grid(void)
{
    static net nw;
    int x, y, id, p;

    net_init(&nw, 16);
    for (y = 0; y < 4; y++) {
        for (x = 0; x < 4; x++) {
            if (x + 1 < 4) {
                connect(&nw, y * 4 + x, y * 4 + x + 1, 1);
            }
            if (y + 1 < 4) {
                connect(&nw, y * 4 + x, (y + 1) * 4 + x, 1);
            }
        }
    }
    net_rounds(&nw, 12);
    for (id = 1; id < 16; id++) {
        x = id % 4;
        y = id / 4;
        p = routing_parent(&nw.rt[id]);
        CHECK_EQ(routing_depth(&nw.rt[id]), x + y);
        /* ties at equal depth and quality go to the lower id: the neighbour above */
        CHECK_EQ(p, y > 0 ? id - 4 : id - 1);
    }
}

/* Nodes 1 and 3 one hop from the root, node 2 below both; its link to 1 loses one
 * packet in `loss_1_2`. */
static void diamond(net *nw, uint8_t loss_1_2)
{
    net_init(nw, 4);
    connect(nw, 0, 1, 1);
    connect(nw, 0, 3, 1);
    connect(nw, 1, 2, loss_1_2);
    connect(nw, 3, 2, 1);
}

/* Node 2 hears 1 (loses every 2nd packet) and 3 (perfect), both one hop from the root. */
static void test_prefers_better_link(void)
{
    static net nw;

    diamond(&nw, 2);
    net_rounds(&nw, 20);
    CHECK_EQ(routing_parent(&nw.rt[2]), 3);
    CHECK_EQ(routing_depth(&nw.rt[2]), 2);
    CHECK(routing_parent_quality(&nw.rt[2]) > 200);
}

/* Node 2 hears the root over a link that loses every 2nd packet, and node 1 (one hop
 * from the root) perfectly: two good hops before one lossy one. */
static void test_two_good_hops_beat_one_lossy(void)
{
    static net nw;

    net_init(&nw, 3);
    connect(&nw, 0, 1, 1);
    connect(&nw, 0, 2, 2);
    connect(&nw, 1, 2, 1);
    net_rounds(&nw, 20);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    CHECK_EQ(routing_depth(&nw.rt[2]), 2);
}

/* Node 3 hears the root, and node 2 at the end of the chain 0-1-2; the root's acks
 * say most of 3's sends fail. It leaves the root for node 2, two levels deeper: that
 * path costs less (node 2 advertises a cost below 3's, so it cannot route through
 * 3). Moves were once only ever toward the root; a grid's nodes kept the diagonal
 * links they joined over before any link was judged. */
static void test_leaves_a_failing_parent_for_a_deeper_cheaper_path(void)
{
    static net nw;
    int r;

    net_init(&nw, 4);
    connect(&nw, 0, 1, 1);
    connect(&nw, 1, 2, 1);
    connect(&nw, 2, 3, 1);
    connect(&nw, 0, 3, 1);
    net_rounds(&nw, 10);
    CHECK_EQ(routing_parent(&nw.rt[3]), 0);
    for (r = 0; r < 12; r++) {
        routing_parent_took(&nw.rt[3], 5); /* five sends a result */
    }
    net_round(&nw);
    CHECK_EQ(routing_parent(&nw.rt[3]), 2);
    CHECK_EQ(routing_depth(&nw.rt[3]), 3);
}

/* Node 3 hears nodes 1 and 2 (both one hop from the root) perfectly, but node 1 hears
 * only every 2nd packet of 3's (`back` 2), or none (0): 1's beacons say so -- their
 * receiveEst for 3, or, listing every neighbour 1 hears, no entry for 3 -- and 3 takes
 * node 2. Judged by what it hears alone, 3 rated both links alike and took the lower
 * id, whose acks never came. */
static void check_the_way_back(uint8_t back)
{
    static net nw;

    net_init(&nw, 4);
    connect(&nw, 0, 1, 1);
    connect(&nw, 0, 2, 1);
    connect(&nw, 1, 3, 1);
    connect(&nw, 2, 3, 1);
    nw.link[3][1] = back;
    net_rounds(&nw, 20);
    CHECK_EQ(routing_parent(&nw.rt[3]), 2);
    CHECK_EQ(routing_depth(&nw.rt[3]), 2);
}

static void test_beacons_tell_the_way_back(void)
{
    check_the_way_back(2);
}

static void test_a_beacon_that_leaves_us_out_says_we_are_not_heard(void)
{
    check_the_way_back(0);
}

/* Node 4 routes through 1; it also hears 2 and 3, one hop from the root like 1, without
 * a loss, but 2 only 9 dB over its noise: a link that holds on a quiet channel and
 * fails under load. When 1 dies, 4 takes 3, heard at 25 dB; with the signals not
 * measured, the lower id. The weak link's cost is what its children see advertised,
 * and it is still taken where nothing stronger leads on. */
static void test_weak_signals_cost_more(void)
{
    static net nw;
    int measured;
    uint16_t cost;

    for (measured = 0; measured < 2; measured++) {
        net_init(&nw, 5);
        connect(&nw, 0, 1, 1);
        connect(&nw, 0, 2, 1);
        connect(&nw, 0, 3, 1);
        connect(&nw, 1, 4, 1);
        connect(&nw, 2, 4, 1);
        connect(&nw, 3, 4, 1);
        nw.snr[2][4] = (int8_t)(measured ? 9 : 0);
        nw.snr[3][4] = (int8_t)(measured ? 25 : 0);
        net_rounds(&nw, 10);
        CHECK_EQ(routing_parent(&nw.rt[4]), 1);
        nw.alive[1] = 0;
        net_rounds(&nw, 6);
        CHECK_EQ(routing_parent(&nw.rt[4]), measured ? 3 : 2);
        CHECK_EQ(routing_depth(&nw.rt[4]), 2);
    }
    cost = nw.rt[4].cost;
    nw.alive[3] = 0;
    net_rounds(&nw, 6);
    CHECK_EQ(routing_parent(&nw.rt[4]), 2);
    CHECK_EQ(nw.rt[4].cost, cost + (ROUTING_SNR_FIRM_DB - 9) * ROUTING_SNR_PENALTY);
}

/* A full table may have turned a sender away: its beacons do not say they list all. */
static void test_a_full_table_does_not_claim_to_list_all(void)
{
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    mhop_header mh = {0, 0, 0, ROUTING_DEPTH_NONE};
    uint8_t body[ROUTING_BEACON_FIXED] = {0xFF, 0xFF, 0xFF, 0xFF, 0};
    uint8_t out[TOS_DATA_LENGTH], n;
    uint16_t id;
    routing rt;

    routing_init(&rt, 0);
    for (id = 1; id <= ROUTING_MAX_NEIGHBORS; id++) {
        n = routing_build_beacon(&rt, out, sizeof out);
        CHECK_EQ(out[n - 3u], ROUTING_TRAILER_ALL_LISTED);
        mh.sourceaddr = id;
        mh.originaddr = id;
        routing_on_packet(&rt, &tos, &mh, body, sizeof body);
    }
    n = routing_build_beacon(&rt, out, sizeof out);
    CHECK_EQ(out[MHOP_HEADER_LEN + 4], ROUTING_MAX_NEIGHBORS);
    CHECK_EQ(out[n - 3u], 0);
}

/* A parent heard well but whose acks say most sends fail is left for a good link
 * one hop deeper -- awake, and asleep while tuples flow; not while duty-cycled
 * aggregates hold the tree steady (a subtree that moves loses an epoch of records). */
static void test_acks_judge_the_parent(void)
{
    static net nw;
    int r, mode;

    for (mode = 0; mode < 3; mode++) { /* awake, asleep, asleep and steady */
        net_init(&nw, 3);
        connect(&nw, 0, 1, 1);
        connect(&nw, 0, 2, 1);
        connect(&nw, 1, 2, 1);
        net_rounds(&nw, 8);
        CHECK_EQ(routing_parent(&nw.rt[2]), 0);
        routing_set_duty_cycled(&nw.rt[2], (uint8_t)(mode > 0));
        routing_keep_steady(&nw.rt[2], (uint8_t)(mode == 2));
        for (r = 0; r < 6; r++) {
            routing_parent_took(&nw.rt[2], 4); /* four sends a result */
        }
        net_round(&nw);
        CHECK_EQ(routing_parent(&nw.rt[2]), mode == 2 ? 0 : 1);
        CHECK_EQ(routing_depth(&nw.rt[2]), mode == 2 ? 1 : 2);
    }
}

/* Under steady aggregates a failing parent is left for a neighbour as deep as it: the
 * node's depth, and the interval its records go in, stay. */
static void test_steady_aggregates_leave_a_failing_parent_sideways(void)
{
    static net nw;
    int r;

    diamond(&nw, 1);
    net_rounds(&nw, 8);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    routing_set_duty_cycled(&nw.rt[2], 1);
    routing_keep_steady(&nw.rt[2], 1);
    net_round(&nw);
    for (r = 0; r < 6; r++) {
        routing_parent_took(&nw.rt[2], 4); /* four sends a result: lossy, not failing */
    }
    net_round(&nw);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    for (r = 0; r < 6 && routing_parent(&nw.rt[2]) == 1; r++) {
        routing_parent_took(&nw.rt[2], 0); /* given up */
    }
    net_round(&nw);
    CHECK_EQ(routing_parent(&nw.rt[2]), 3);
    CHECK_EQ(routing_depth(&nw.rt[2]), 2);
}

/*
 * A failing parent is left for a link that looks lossy -- its owner says it hears us one
 * time in three, as a neighbour that sleeps between its slots does -- if it is clearly
 * better than what the parent's acks say: awake, and while steady aggregates hold the
 * tree. One that hears us one time in five is not clearly better, and the parent stays.
 */
static void test_a_failing_parent_is_left_for_a_clearly_better_lossy_link(void)
{
    static net nw;
    int r, mode, one_in;

    for (one_in = 3; one_in <= 5; one_in += 2) {
        for (mode = 0; mode < 2; mode++) { /* awake, asleep and steady */
            diamond(&nw, 1);
            nw.one_in[2][3] = (uint8_t)one_in;
            net_rounds(&nw, 20);
            CHECK_EQ(routing_parent(&nw.rt[2]), 1);
            routing_set_duty_cycled(&nw.rt[2], (uint8_t)mode);
            routing_keep_steady(&nw.rt[2], (uint8_t)mode);
            net_round(&nw);
            for (r = 0; r < 6 && routing_parent(&nw.rt[2]) == 1; r++) {
                routing_parent_took(&nw.rt[2], 0); /* given up */
            }
            net_round(&nw);
            CHECK_EQ(routing_parent(&nw.rt[2]), one_in == 3 ? 3 : 1);
            CHECK_EQ(routing_depth(&nw.rt[2]), 2);
        }
    }
}

/* Under steady aggregates a working parent is kept, even when the root itself comes
 * into range: the parent's cost is what its acks say under load, a candidate's what we
 * overhear in quiet, so every candidate would look cheaper. Awake, the node moves. */
static void test_steady_aggregates_keep_a_working_parent(void)
{
    static net nw;
    int mode;

    for (mode = 0; mode < 2; mode++) { /* awake, asleep and steady */
        net_init(&nw, 3);
        connect(&nw, 0, 1, 1);
        connect(&nw, 1, 2, 1);
        net_rounds(&nw, 8);
        CHECK_EQ(routing_parent(&nw.rt[2]), 1);
        routing_set_duty_cycled(&nw.rt[2], (uint8_t)mode);
        routing_keep_steady(&nw.rt[2], (uint8_t)mode);
        routing_parent_took(&nw.rt[2], 1);
        connect(&nw, 0, 2, 1);
        net_rounds(&nw, 8);
        CHECK_EQ(routing_parent(&nw.rt[2]), mode ? 1 : 0);
        CHECK_EQ(routing_depth(&nw.rt[2]), mode ? 2 : 1);
    }
}

/* Two nodes at one depth, each with a lossy parent and a good link to the other,
 * and their beacons cross: each hears the other at the old depth and cost (sent
 * before their acks told them), so both moving would close a loop. Only the one
 * with the higher id moves. */
static void test_lateral_moves_go_to_lower_ids_only(void)
{
    static net nw;
    uint8_t beacon[2][TOS_DATA_LENGTH];
    tos_header tos[2] = {{TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0},
                         {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0}};
    int r, k;

    net_init(&nw, 3);
    connect(&nw, 0, 1, 1);
    connect(&nw, 0, 2, 1);
    connect(&nw, 1, 2, 1);
    net_rounds(&nw, 8);
    for (r = 1; r <= 2; r++) {
        routing_set_duty_cycled(&nw.rt[r], 1);
        tos[r - 1].length = routing_build_beacon(&nw.rt[r], beacon[r - 1], TOS_DATA_LENGTH);
    }
    for (r = 1; r <= 2; r++) {
        for (k = 0; k < 6; k++) {
            routing_parent_took(&nw.rt[r], 4);
        }
    }
    deliver(&nw, 1, &tos[0], beacon[0], tos[0].length);
    deliver(&nw, 2, &tos[1], beacon[1], tos[1].length);
    CHECK_EQ(routing_parent(&nw.rt[1]), 0);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    CHECK_EQ(routing_depth(&nw.rt[2]), 2);
}

static void test_parent_loss_reselects(void)
{
    static net nw;

    diamond(&nw, 1);
    net_rounds(&nw, 6);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    CHECK_EQ(nw.rt[2].stats.parent_changes, 1);

    nw.alive[1] = 0;
    net_rounds(&nw, (int)ROUTING_PARENT_LOST_PERIODS - 1);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1); /* not yet: still within the grace periods */
    net_round(&nw);
    CHECK_EQ(routing_parent(&nw.rt[2]), 3);
    CHECK_EQ(routing_depth(&nw.rt[2]), 2);
    CHECK_EQ(nw.rt[2].stats.parent_changes, 2);

    /* the only way out dies too: unrouted, and the poison reaches the child */
    nw.alive[3] = 0;
    net_rounds(&nw, (int)ROUTING_PARENT_LOST_PERIODS);
    CHECK_EQ(routing_parent(&nw.rt[2]), ROUTING_PARENT_NONE);
    CHECK_EQ(routing_depth(&nw.rt[2]), ROUTING_DEPTH_NONE);
}

/* A child must not become its parent's parent when the grandparent vanishes. */
static void test_no_two_node_loop(void)
{
    static net nw;

    net_init(&nw, 3);
    connect(&nw, 0, 1, 1);
    connect(&nw, 1, 2, 1);
    net_rounds(&nw, 5);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    nw.alive[0] = 0;
    net_rounds(&nw, 12);
    CHECK(routing_parent(&nw.rt[1]) != 2);
    CHECK_EQ(routing_parent(&nw.rt[1]), ROUTING_PARENT_NONE);
    CHECK_EQ(routing_parent(&nw.rt[2]), ROUTING_PARENT_NONE);
}

static void test_link_estimate_from_gaps(void)
{
    tos_header tos = {TOS_BCAST_ADDR, AM_DATA, TOS_DEFAULT_GROUP, 0};
    mhop_header mh = {9, 9, 100, 1};
    routing rt;
    uint8_t q0, q1;

    routing_init(&rt, 4);
    routing_on_packet(&rt, &tos, &mh, NULL, 0);
    q0 = routing_neighbor_at(&rt, 0)->quality;
    CHECK_EQ(q0, ROUTING_QUALITY_INIT);
    mh.seqno = 101; /* no loss: up */
    routing_on_packet(&rt, &tos, &mh, NULL, 0);
    q1 = routing_neighbor_at(&rt, 0)->quality;
    CHECK(q1 > q0);
    routing_on_packet(&rt, &tos, &mh, NULL, 0); /* retransmission: unchanged */
    CHECK_EQ(routing_neighbor_at(&rt, 0)->quality, q1);
    mh.seqno = 106; /* four lost, one received: down */
    routing_on_packet(&rt, &tos, &mh, NULL, 0);
    CHECK(routing_neighbor_at(&rt, 0)->quality < q1);
    /* seqno wraps from 32767 to -32768 without a reboot */
    mh.seqno = 32767;
    routing_on_packet(&rt, &tos, &mh, NULL, 0);
    q1 = routing_neighbor_at(&rt, 0)->quality;
    mh.seqno = -32768;
    routing_on_packet(&rt, &tos, &mh, NULL, 0);
    CHECK(routing_neighbor_at(&rt, 0)->quality > q1);
    /* the dummy heartbeat (AM 107, seqno always 0) does not disturb the estimate */
    q1 = routing_neighbor_at(&rt, 0)->quality;
    tos.type = AM_DUMMY_RESULT;
    mh.seqno = 0;
    routing_on_packet(&rt, &tos, &mh, NULL, 0);
    CHECK_EQ(routing_neighbor_at(&rt, 0)->quality, q1);
}

static void test_fill_header(void)
{
    static net nw;
    mhop_header mh;
    routing root;
    int r;

    net_init(&nw, 2);
    connect(&nw, 0, 1, 1);
    net_rounds(&nw, 3);
    mh.seqno = 0;
    CHECK_EQ(routing_fill_header(&nw.rt[1], &mh, 1), 0);
    CHECK_EQ(mh.sourceaddr, 1);
    CHECK_EQ(mh.originaddr, 1);
    CHECK_EQ(mh.hopcount, 1);
    r = mh.seqno;
    CHECK_EQ(routing_fill_header(&nw.rt[1], &mh, 42), 0); /* forwarding 42's result */
    CHECK_EQ(mh.originaddr, 42);
    CHECK_EQ(mh.seqno, r + 1);

    routing_init(&root, 0);
    CHECK_EQ(routing_fill_header(&root, &mh, 0), TOS_UART_ADDR);
    CHECK_EQ(mh.hopcount, 0);
    r = mh.seqno;
    routing_fill_header(&root, &mh, 0);
    CHECK_EQ(mh.seqno, r); /* not incremented toward the UART */

    routing_init(&root, 5); /* no parent yet: broadcast, hopcount invalid */
    CHECK_EQ(routing_fill_header(&root, &mh, 5), TOS_BCAST_ADDR);
    CHECK_EQ(mh.hopcount, MHOP_HOPCOUNT_INVALID);
}

static void test_dup_cycle_noroute(void)
{
    static net nw;
    routing *rt;
    mhop_header child = {2, 2, 10, 2};
    mhop_header peer = {5, 5, 3, 1};
    mhop_header up = {0, 0, 3, 0};
    int i;

    net_init(&nw, 3);
    connect(&nw, 0, 1, 1);
    connect(&nw, 1, 2, 1);
    net_rounds(&nw, 4);
    rt = &nw.rt[1];
    CHECK_EQ(routing_depth(rt), 1);
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_ACCEPT);
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_DROP_DUP);
    CHECK_EQ(routing_should_forward(rt, &peer, routing_depth(rt)), ROUTING_DROP_CYCLE);
    CHECK_EQ(routing_should_forward(rt, &up, routing_depth(rt)), ROUTING_DROP_CYCLE);
    child.seqno = 11;
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_ACCEPT);
    /* the ring forgets after ROUTING_DUP_RING newer packets */
    for (i = 0; i < (int)ROUTING_DUP_RING; i++) {
        child.seqno = (int16_t)(20 + i);
        CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_ACCEPT);
    }
    child.seqno = 11;
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_ACCEPT);
    CHECK_EQ(rt->stats.dup_drops, 1);
    CHECK_EQ(rt->stats.cycle_drops, 2);
    /* checked against a shallower depth a schedule keeps, the peer one level below it comes
     * from a child; against our own it is still a cycle */
    peer.seqno = 4;
    CHECK_EQ(routing_should_forward(rt, &peer, 1), ROUTING_DROP_CYCLE);
    CHECK_EQ(routing_should_forward(rt, &peer, 0), ROUTING_ACCEPT);
    CHECK_EQ(rt->stats.cycle_drops, 3);

    /* a packet from a parentless node (hopcount 0xFF) is accepted by the root */
    child.hopcount = MHOP_HOPCOUNT_INVALID;
    CHECK_EQ(routing_should_forward(&nw.rt[0], &child, routing_depth(&nw.rt[0])), ROUTING_ACCEPT);

    routing_init(rt, 1);
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_DROP_NO_ROUTE);
    CHECK_EQ(rt->stats.no_route_drops, 1);
}

/*
 * A neighbour's resend is known by its entry, however many other packets went
 * through the ring meanwhile (a relay of a GROUP BY subtree takes dozens an
 * epoch); once it sends elsewhere the entry forgets, so the 8-bit seqno may wrap.
 */
static void test_neighbour_resend_outlives_the_ring(void)
{
    static net nw;
    routing *rt;
    mhop_header child = {2, 2, 40, 2}, other = {9, 9, 0, 2};
    tos_header elsewhere = {7, AM_DATA, TOS_DEFAULT_GROUP, 0};
    int r, i;

    net_init(&nw, 3);
    connect(&nw, 0, 1, 1);
    connect(&nw, 1, 2, 1);
    for (r = 0; r < 4; r++)
        net_round(&nw);
    rt = &nw.rt[1];
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_ACCEPT);
    for (i = 0; i < (int)(2u * ROUTING_DUP_RING); i++) {
        other.seqno = (int16_t)i;
        CHECK_EQ(routing_should_forward(rt, &other, routing_depth(rt)), ROUTING_ACCEPT);
    }
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_DROP_DUP);
    child.seqno = 296; /* 40 + 256: the same low byte, a new packet */
    routing_on_packet(rt, &elsewhere, &child, 0, 0);
    CHECK_EQ(routing_should_forward(rt, &child, routing_depth(rt)), ROUTING_ACCEPT);
}

/* A full table keeps its parent and lets a potential parent displace a useless entry, if
 * its signal, where measured, is strong. */
static void test_table_replacement(void)
{
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    uint8_t body[ROUTING_BEACON_FIXED] = {0, 0, 32, 0, 0}; /* cost 32: two perfect hops */
    mhop_header mh = {7, 7, 0, 2};
    routing rt;
    uint8_t i;

    routing_init(&rt, 50);
    routing_on_packet(&rt, &tos, &mh, body, sizeof body); /* node 7 at depth 2: parent */
    CHECK_EQ(routing_parent(&rt), 7);
    CHECK_EQ(routing_depth(&rt), 3);
    for (i = 1; i < ROUTING_MAX_NEIGHBORS; i++) {        /* children at depth 4 fill the table */
        mh.sourceaddr = (uint16_t)(100 + i);
        mh.hopcount = 4;
        le16_put(body, 50);
        /* all heard clearly, but 105 weakly: the one to give up first */
        routing_on_packet_snr(&rt, &tos, &mh, body, sizeof body, (int8_t)(i == 5 ? 10 : 30));
    }
    CHECK_EQ(routing_neighbor_count(&rt), ROUTING_MAX_NEIGHBORS);
    mh.sourceaddr = 200; /* another child: not worth a slot */
    routing_on_packet(&rt, &tos, &mh, body, sizeof body);
    CHECK_EQ(rt.stats.table_replacements, 0);
    mh.sourceaddr = 201; /* a depth-1 node could be a parent: displaces a child */
    mh.hopcount = 1;
    le16_put(body, 0);
    le16_put(body + 2, 16);
    /* ...but not heard under ROUTING_SNR_ADMIT_DB: most such senders are transitional links */
    routing_on_packet_snr(&rt, &tos, &mh, body, sizeof body, ROUTING_SNR_ADMIT_DB - 1);
    CHECK_EQ(rt.stats.table_replacements, 0);
    CHECK_EQ(routing_parent(&rt), 7);
    routing_on_packet_snr(&rt, &tos, &mh, body, sizeof body, ROUTING_SNR_ADMIT_DB);
    CHECK_EQ(rt.stats.table_replacements, 1);
    CHECK_EQ(routing_parent(&rt), 201); /* and, being closer to the root, becomes the parent */
    CHECK_EQ(routing_depth(&rt), 2);
    for (i = 0; i < routing_neighbor_count(&rt); i++) {
        CHECK(routing_neighbor_at(&rt, i)->id != 200);
        CHECK(routing_neighbor_at(&rt, i)->id != 105);
    }
}

#define NO_TRAILER (-1L) /* hear_listing_us: a MintRoute beacon, no generation */

/* A beacon from `src` at `depth` naming `its_parent`, heard by rt, listing rt as heard at
 * `back`; with motebase's trailer carrying route generation `gen` unless NO_TRAILER.
 * Seqnos count up per sender. */
static void hear_listing_us(routing *rt, uint16_t src, uint8_t depth, uint16_t its_parent,
                            uint16_t cost, uint8_t back, long gen)
{
    static uint16_t seq[MAX_NODES];
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    mhop_header mh;
    uint8_t body[ROUTING_BEACON_FIXED + ROUTING_BEACON_ENTRY + ROUTING_BEACON_TRAILER] = {0};
    uint8_t *trailer = body + ROUTING_BEACON_FIXED + ROUTING_BEACON_ENTRY;

    mh.sourceaddr = src;
    mh.originaddr = src;
    mh.seqno = (int16_t)seq[src % MAX_NODES]++;
    mh.hopcount = depth;
    le16_put(body, its_parent);
    le16_put(body + 2, cost);
    body[4] = 1; /* it lists us: the way back is known */
    le16_put(body + ROUTING_BEACON_FIXED, rt->self);
    body[ROUTING_BEACON_FIXED + 2u] = back;
    if (gen == NO_TRAILER) {
        routing_on_packet(rt, &tos, &mh, body, (uint8_t)(sizeof body - ROUTING_BEACON_TRAILER));
        return;
    }
    trailer[0] = 'm';
    trailer[1] = 'b';
    le16_put(trailer + 4, (uint16_t)gen);
    routing_on_packet(rt, &tos, &mh, body, sizeof body);
}

/* A beacon from `src` at `depth` naming `its_parent`, heard by rt. */
static void hear_back_at_cost(routing *rt, uint16_t src, uint8_t depth, uint16_t its_parent,
                              uint16_t cost, uint8_t back)
{
    hear_listing_us(rt, src, depth, its_parent, cost, back, NO_TRAILER);
}

/* A beacon that lists us, heard without a loss. */
static void hear_at_cost(routing *rt, uint16_t src, uint8_t depth, uint16_t its_parent,
                         uint16_t cost)
{
    hear_back_at_cost(rt, src, depth, its_parent, cost, 255u);
}

/* A beacon costing a perfect hop per level. */
static void hear(routing *rt, uint16_t src, uint8_t depth, uint16_t its_parent)
{
    hear_at_cost(rt, src, depth, its_parent, (uint16_t)(depth * 16u));
}

/* A beacon at a perfect hop per level that lists no neighbour: it says nothing of how well
 * its sender hears us. */
static void hear_unlisted(routing *rt, uint16_t src, uint8_t depth, uint16_t its_parent)
{
    static uint16_t seq;
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    mhop_header mh = {src, src, 0, depth};
    uint8_t body[ROUTING_BEACON_FIXED] = {0};

    mh.seqno = (int16_t)seq++;
    le16_put(body, its_parent);
    le16_put(body + 2, (uint16_t)(depth * 16u));
    routing_on_packet(rt, &tos, &mh, body, sizeof body);
}

/* Two neighbours one hop from the root, both heard without a loss; only 2's beacons list
 * us. 1 may not hear us at all: the way back is taken at a quarter of what we hear until
 * its beacon tells, so 2 is the parent, not the lower id. */
static void test_an_unknown_way_back_counts_for_little(void)
{
    routing rt;
    int r;

    routing_init(&rt, 5);
    for (r = 0; r < 10; r++) {
        hear_unlisted(&rt, 1, 1, 0);
        hear(&rt, 2, 1, 0);
        routing_tick(&rt);
    }
    CHECK_EQ(routing_parent(&rt), 2);
    CHECK_EQ(routing_depth(&rt), 2);
}

/*
 * Node 5 routes through 1 (depth 1), and also hears 2 (depth 1, but worse
 * link) -- then a query starts and it sleeps between slots.
 */
static void duty_cycled_node(routing *rt)
{
    int r;

    routing_init(rt, 5);
    for (r = 0; r < 4; r++) {
        hear(rt, 1, 1, 0);
        routing_tick(rt);
    }
    hear(rt, 2, 1, 0);
    CHECK_EQ(routing_parent(rt), 1);
    CHECK_EQ(routing_depth(rt), 2);
    routing_set_duty_cycled(rt, 1);
}

/* Asleep through whole beacon periods, the node keeps its parent; only missed listening
 * windows count, an ack or any packet from the parent clears them. */
static void test_duty_cycled_parent_judged_by_misses(void)
{
    routing rt;
    uint8_t i;

    duty_cycled_node(&rt);
    for (i = 0; i < 4u * ROUTING_PARENT_LOST_PERIODS; i++) {
        routing_tick(&rt); /* nothing heard: it slept */
    }
    CHECK_EQ(routing_parent(&rt), 1);
    for (i = 0; i + 1u < ROUTING_PARENT_MAX_MISSES; i++) {
        routing_parent_missed(&rt, ROUTING_PARENT_MAX_MISSES);
    }
    routing_parent_acked(&rt);
    for (i = 0; i + 1u < ROUTING_PARENT_MAX_MISSES; i++) {
        routing_parent_missed(&rt, ROUTING_PARENT_MAX_MISSES);
    }
    hear(&rt, 1, 1, 0);
    for (i = 0; i + 1u < ROUTING_PARENT_MAX_MISSES; i++) {
        routing_parent_missed(&rt, ROUTING_PARENT_MAX_MISSES);
    }
    CHECK_EQ(routing_parent(&rt), 1);
    CHECK_EQ(routing_searching(&rt), 0);
    routing_parent_missed(&rt, ROUTING_PARENT_MAX_MISSES); /* the last straw */
    CHECK(routing_parent(&rt) != 1);
}

/* After losing its parent a node never takes a neighbour as deep as it was (it may be a
 * descendant advertising the depth it had through us) -- until a period has passed. */
static void test_no_loop_through_a_stale_descendant(void)
{
    routing rt;
    uint8_t i;

    duty_cycled_node(&rt);
    hear(&rt, 7, 3, 6); /* a grandchild, via 6 */
    for (i = 0; i < 4u * ROUTING_PARENT_LOST_PERIODS; i++) {
        routing_tick(&rt); /* 2's entry goes stale while we sleep */
    }
    for (i = 0; i < ROUTING_PARENT_MAX_MISSES; i++) {
        routing_parent_missed(&rt, ROUTING_PARENT_MAX_MISSES);
    }
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE);
    CHECK_EQ(routing_depth(&rt), ROUTING_DEPTH_NONE);
    CHECK_EQ(routing_searching(&rt), 1);
    hear(&rt, 7, 3, 6); /* it has not heard of our loss yet */
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE);
    routing_tick(&rt); /* nor at the period's end: deeper than we were */
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE);
    hear(&rt, 2, 1, 0); /* closer to the root than we were: safe at once */
    CHECK_EQ(routing_parent(&rt), 2);
    CHECK_EQ(routing_depth(&rt), 2);
    CHECK_EQ(routing_searching(&rt), 0);
}

/* With nothing closer, the choice waits for the period's end, among neighbours heard since
 * the loss; a neighbour heard only before the loss is not taken. */
static void test_unrouted_chooses_at_period_end(void)
{
    routing rt;
    uint8_t i;

    duty_cycled_node(&rt);
    hear(&rt, 8, 2, 3); /* a sibling at our depth, heard before the loss */
    for (i = 0; i < ROUTING_PARENT_MAX_MISSES; i++) {
        routing_parent_missed(&rt, ROUTING_PARENT_MAX_MISSES);
    }
    CHECK_EQ(routing_parent(&rt), 2); /* 2 is closer than we were: taken at once */
    for (i = 0; i < ROUTING_PARENT_MAX_MISSES; i++) {
        routing_parent_missed(&rt, ROUTING_PARENT_MAX_MISSES);
    }
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE); /* 1 and 2 both silent */
    routing_tick(&rt);
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE); /* 8 was heard before the loss only */
    hear(&rt, 9, 2, 4);
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE); /* as deep as we were: wait */
    routing_tick(&rt);
    CHECK_EQ(routing_parent(&rt), 9);
    CHECK_EQ(routing_depth(&rt), 3);
}

/* A parent that turns as deep as we are may route through us: count-to-infinity stops. */
static void test_parent_turning_deep_is_dropped(void)
{
    routing rt;

    duty_cycled_node(&rt);
    hear(&rt, 1, 2, 6); /* 1 re-parented to depth 2 = our depth */
    CHECK_EQ(routing_parent(&rt), 2); /* 2 (depth 1) is still closer than we were */
    CHECK_EQ(routing_depth(&rt), 2);
    hear_at_cost(&rt, 2, 5, 7, 0x7FFF); /* deep, and costing more than us: maybe through us */
    CHECK_EQ(routing_parent(&rt), ROUTING_PARENT_NONE);
}

/* A parent that moves two levels deeper for a cheaper path (its cost still below ours,
 * so not through us) is kept, and we follow it down; one whose cost rose past ours may
 * route through us and is dropped. */
static void test_parent_moving_deeper_but_cheaper_is_followed(void)
{
    routing rt;

    duty_cycled_node(&rt);
    hear_at_cost(&rt, 1, 3, 9, 20); /* 1 at depth 3, cost 20: below our 32 */
    CHECK_EQ(routing_parent(&rt), 1);
    CHECK_EQ(routing_depth(&rt), 4);
    hear_at_cost(&rt, 1, 4, 9, 200); /* cost past ours */
    CHECK(routing_parent(&rt) != 1);

    /* Aggregates under way: records are timed by depth, so a parent that turned as
     * deep as we are is left, however cheap (a relay 550 nodes deep that followed
     * missed its parent's interval every other epoch on a 1,000-node grid). */
    duty_cycled_node(&rt);
    routing_keep_steady(&rt, 1);
    hear_at_cost(&rt, 1, 3, 9, 20);
    CHECK(routing_parent(&rt) != 1);
}

/*
 * Under steady aggregates a parent that fails is left even for a deeper path: staying,
 * its subtree loses every epoch's records. The node reconsiders as it plans an epoch,
 * just after a tick: the deeper neighbour, heard in the period before, still counts.
 */
static void test_steady_aggregates_leave_a_failing_parent_deeper(void)
{
    routing rt;
    int r;

    duty_cycled_node(&rt); /* 5 -> 1: depth 2 */
    routing_keep_steady(&rt, 1);
    for (r = 0; r < 8; r++)
        hear_at_cost(&rt, 3, 3, 9, 20); /* deeper, with a cheap way to the root */
    routing_tick(&rt);
    routing_hold_switches(&rt, 1); /* an epoch under way */
    for (r = 0; r < 6; r++)
        routing_parent_took(&rt, 2); /* lossy, not failing */
    routing_hold_switches(&rt, 0); /* the next one is planned */
    CHECK_EQ(routing_parent(&rt), 1);
    routing_hold_switches(&rt, 1);
    for (r = 0; r < 6; r++)
        routing_parent_took(&rt, 0); /* given up */
    CHECK_EQ(routing_parent(&rt), 1); /* mid-epoch: held */
    routing_hold_switches(&rt, 0);
    CHECK_EQ(routing_parent(&rt), 3);
    CHECK_EQ(routing_depth(&rt), 4);
}

/*
 * From a failing parent a node with no children also goes deeper over a link that only
 * looks lossy -- its owner hears us one time in three, as one that sleeps between its
 * slots does -- when it clearly beats the parent's acks. A node with a child does not:
 * its cost jumped with the parent's acks, and a descendant may still advertise less.
 */
static void test_a_leaf_leaves_a_failing_parent_deeper_over_a_lossy_link(void)
{
    routing rt;
    int r, with_child;

    for (with_child = 0; with_child < 2; with_child++) {
        routing_init(&rt, 5);
        for (r = 0; r < 4; r++) {
            hear(&rt, 1, 1, 0); /* the only way closer to the root */
            routing_tick(&rt);
        }
        CHECK_EQ(routing_parent(&rt), 1);
        routing_set_duty_cycled(&rt, 1);
        routing_keep_steady(&rt, 1);
        for (r = 0; r < 8; r++)
            hear_back_at_cost(&rt, 3, 3, 9, 20, 85); /* deeper, cheap, heard lossy */
        if (with_child)
            hear(&rt, 7, 3, 5);
        routing_tick(&rt);
        routing_hold_switches(&rt, 1);
        for (r = 0; r < 6; r++)
            routing_parent_took(&rt, 0); /* given up */
        routing_hold_switches(&rt, 0);
        CHECK_EQ(routing_parent(&rt), with_child ? 1 : 3);
        CHECK_EQ(routing_depth(&rt), with_child ? 2 : 4);
    }
}

/* 1 if following parents from any node ends at the root or at an unrouted node. */
static int no_loops(const net *nw)
{
    int i, hops;
    uint16_t at;

    for (i = 1; i < nw->n; i++) {
        at = (uint16_t)i;
        for (hops = 0; at != 0u && at != ROUTING_PARENT_NONE && hops <= nw->n; hops++) {
            at = routing_parent(&nw->rt[at]);
        }
        if (hops > nw->n) {
            return 0;
        }
    }
    return 1;
}

/*
 * The root's only child loses it while a grandchild, heard over a weak link, still
 * advertises the depth it had through us: without route generations the child took
 * it at once and the three closed a loop (an idle 49-node grid on `sinr`, seed 9,
 * looped for 20 s). The grandchild's generation is no newer than ours, so it is not
 * taken; nobody routes until the root is heard again, then everyone does.
 */
static void test_a_lost_root_closes_no_loop(void)
{
    net nw;
    int r;

    /* the root's child is 3, its grandchild 2 (through 1): 2 beacons before 3 each round */
    net_init(&nw, 4);
    connect(&nw, 0, 3, 1);
    connect(&nw, 3, 1, 1);
    connect(&nw, 1, 2, 1);
    connect(&nw, 3, 2, 1);
    nw.snr[3][2] = 9; /* weak: 2 prefers 1 */
    net_rounds(&nw, 12);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    CHECK_EQ(routing_depth(&nw.rt[2]), 3);
    connect(&nw, 0, 3, 0);
    for (r = 0; r < 12; r++) {
        net_round(&nw);
        CHECK(no_loops(&nw));
        CHECK(routing_parent(&nw.rt[3]) == 0 || routing_parent(&nw.rt[3]) == ROUTING_PARENT_NONE);
    }
    CHECK_EQ(routing_parent(&nw.rt[3]), ROUTING_PARENT_NONE);
    connect(&nw, 0, 3, 1);
    net_rounds(&nw, 6);
    CHECK_EQ(routing_parent(&nw.rt[3]), 0);
    CHECK_EQ(routing_depth(&nw.rt[2]), 3);
}

/*
 * A parent that found a longer way to the root carries a newer generation than ours
 * (it heard the root's news before we did), so it is not routing through us: we follow
 * it down at once instead of leaving our subtree without a route.
 */
static void test_a_parent_with_newer_news_is_followed_down(void)
{
    net nw;
    int r;

    net_init(&nw, 6);
    connect(&nw, 0, 1, 1);
    connect(&nw, 1, 2, 1);
    connect(&nw, 2, 3, 1);
    connect(&nw, 0, 4, 1);
    connect(&nw, 4, 5, 1);
    connect(&nw, 5, 1, 3); /* 5 routes through 4, and hears the root's news as early as 1 */
    net_rounds(&nw, 12);
    CHECK_EQ(routing_parent(&nw.rt[5]), 4);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    CHECK_EQ(routing_depth(&nw.rt[3]), 3);
    connect(&nw, 0, 1, 0);
    for (r = 0; r < 12; r++) {
        net_round(&nw);
        CHECK(no_loops(&nw));
        CHECK(routing_depth(&nw.rt[3]) != ROUTING_DEPTH_NONE); /* never cut off */
    }
    CHECK_EQ(routing_parent(&nw.rt[1]), 5);
    CHECK_EQ(routing_depth(&nw.rt[1]), 3);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    CHECK_EQ(routing_depth(&nw.rt[3]), 5);
}

/* `rt` hears the beacon `buf` (as routing_build_beacon made it): whether it says to tell
 * the sender our generation. */
static uint8_t hear_beacon(routing *rt, const uint8_t *buf, uint8_t len)
{
    tos_header tos = {TOS_BCAST_ADDR, AM_ROUTE_BEACON, TOS_DEFAULT_GROUP, 0};
    mhop_header mh;
    tos.length = len;
    mhop_header_unpack(&mh, buf);
    return routing_on_packet_snr(rt, &tos, &mh, buf + MHOP_HEADER_LEN,
                                 (uint8_t)(len - MHOP_HEADER_LEN), ROUTING_SNR_UNKNOWN);
}

/*
 * A child whose beacons advertise a route generation more than ROUTING_GEN_TELL behind
 * ours has not heard our beacons for that long -- a leaf of a tuple query is awake only
 * around its own sends -- and a neighbour that lost its parent cannot take it. Hearing
 * such a beacon, routing says so, and the node answers at once (core/results.c). Not
 * for a child within ROUTING_GEN_TELL, nor for a neighbour that is not our child.
 */
static void test_a_child_far_behind_on_generations_is_to_be_told(void)
{
    net nw;
    uint8_t child[TOS_DATA_LENGTH], sibling[TOS_DATA_LENGTH], child_len, sibling_len;

    net_init(&nw, 4);
    connect(&nw, 0, 1, 1);
    connect(&nw, 1, 2, 1);
    connect(&nw, 0, 3, 1);
    connect(&nw, 1, 3, 1);
    net_rounds(&nw, 6);
    CHECK_EQ(routing_parent(&nw.rt[2]), 1);
    CHECK_EQ(routing_parent(&nw.rt[3]), 0);
    /* what 2 and 3 advertise now, heard again later: as if they had heard nothing since */
    child_len = routing_build_beacon(&nw.rt[2], child, sizeof child);
    sibling_len = routing_build_beacon(&nw.rt[3], sibling, sizeof sibling);
    CHECK_EQ(hear_beacon(&nw.rt[1], child, child_len), 0);
    net_rounds(&nw, (int)ROUTING_GEN_TELL); /* the root's generation: one more a round */
    CHECK_EQ(hear_beacon(&nw.rt[1], child, child_len), 0);
    net_round(&nw);
    CHECK_EQ(hear_beacon(&nw.rt[1], child, child_len), 1);
    CHECK_EQ(hear_beacon(&nw.rt[1], sibling, sibling_len), 0); /* as far behind, not a child */
}

/* A motebase beacon from `src` at `depth`, `cost`, naming `its_parent`, listing us as heard
 * without a loss, with route generation `gen` in its trailer. */
static void hear_gen(routing *rt, uint16_t src, uint8_t depth, uint16_t its_parent, uint16_t cost,
                     uint16_t gen)
{
    hear_listing_us(rt, src, depth, its_parent, cost, 255u, gen);
}

/*
 * A node whose depth just grew (its parent moved two levels deeper, with newer news of the
 * root) does not take a neighbour closer than its new depth whose generation is older than
 * its own: that may be a descendant still advertising the depth it had through us. One as
 * fresh as we are is taken at once, and the older one once our depth has held for
 * ROUTING_SETTLE_PERIODS (100-node grid, 1 s SELECT on `sinr`: such a move closed a loop
 * that held 3.5 s).
 */
static void test_a_node_that_moved_deeper_takes_no_stale_descendant(void)
{
    routing rt, fresh;
    uint8_t r;

    routing_init(&rt, 5);
    for (r = 0; r < 4u + ROUTING_SETTLE_PERIODS; r++) {
        hear_gen(&rt, 1, 1, 0, 16, 10);
        routing_tick(&rt);
    }
    CHECK_EQ(routing_parent(&rt), 1);
    CHECK_EQ(routing_depth(&rt), 2);
    hear_gen(&rt, 1, 4, 9, 64, 12); /* 1 moved deeper, with newer news: followed */
    CHECK_EQ(routing_parent(&rt), 1);
    CHECK_EQ(routing_depth(&rt), 5);
    fresh = rt;
    for (r = 0; r < 4u; r++)
        hear_gen(&rt, 7, 3, 6, 48, 11); /* a grandchild through 6, as it was: older news */
    CHECK_EQ(routing_parent(&rt), 1);
    for (r = 0; r < 4u; r++)
        hear_gen(&fresh, 7, 3, 6, 48, 12); /* the same, as fresh as we are */
    CHECK_EQ(routing_parent(&fresh), 7);
    for (r = 0; r < ROUTING_SETTLE_PERIODS; r++) {
        hear_gen(&rt, 1, 4, 9, 64, 12);
        routing_tick(&rt);
    }
    hear_gen(&rt, 7, 3, 6, 48, 11);
    CHECK_EQ(routing_parent(&rt), 7);
}

int main(void)
{
    test_root();
    test_beacon_bytes();
    test_deepest_climbs_to_the_root();
    test_chain();
    test_grid();
    test_prefers_better_link();
    test_two_good_hops_beat_one_lossy();
    test_leaves_a_failing_parent_for_a_deeper_cheaper_path();
    test_beacons_tell_the_way_back();
    test_a_beacon_that_leaves_us_out_says_we_are_not_heard();
    test_a_full_table_does_not_claim_to_list_all();
    test_weak_signals_cost_more();
    test_acks_judge_the_parent();
    test_steady_aggregates_leave_a_failing_parent_sideways();
    test_steady_aggregates_keep_a_working_parent();
    test_a_failing_parent_is_left_for_a_clearly_better_lossy_link();
    test_steady_aggregates_leave_a_failing_parent_deeper();
    test_a_leaf_leaves_a_failing_parent_deeper_over_a_lossy_link();
    test_lateral_moves_go_to_lower_ids_only();
    test_parent_loss_reselects();
    test_no_two_node_loop();
    test_link_estimate_from_gaps();
    test_fill_header();
    test_dup_cycle_noroute();
    test_neighbour_resend_outlives_the_ring();
    test_table_replacement();
    test_an_unknown_way_back_counts_for_little();
    test_duty_cycled_parent_judged_by_misses();
    test_no_loop_through_a_stale_descendant();
    test_unrouted_chooses_at_period_end();
    test_parent_turning_deep_is_dropped();
    test_parent_moving_deeper_but_cheaper_is_followed();
    test_a_lost_root_closes_no_loop();
    test_a_parent_with_newer_news_is_followed_down();
    test_a_child_far_behind_on_generations_is_to_be_told();
    test_a_node_that_moved_deeper_takes_no_stale_descendant();
    return check_report("test_net_routing");
}
