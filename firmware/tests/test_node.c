/* Whole nodes in a tiny network: queries in over the root's UART, results out of it. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/sharing.h"
#include "core/txpath.h"
#include "netsim.h"
#include "ops/agg.h"
#include "qmsg.h"
#include "result/result.h"

static sim s;

#define QR(p) ((p) + TOS_HEADER_LEN + MHOP_HEADER_LEN)

static void send_query(const uint8_t *m) { sim_uart_to_root(&s, m, T_QMSG_LEN, AM_QUERY); }

/* MAX(light) or another plain aggregate over field 0 = light. */
static void agg_query(int qid, int op, int epoch_units)
{
    uint8_t f[40], e[40];
    t_field(f, qid, 1, 1, epoch_units, 0, "light");
    t_agg(e, qid, 1, 1, epoch_units, 0, op, 0, 0xFFFF, 0, 0, 0, 0, 0, 0);
    send_query(f);
    send_query(e);
}

/* Index of the n-th UART AM 240 packet of query qid and type, from `from`; -1 if none. */
static int find_out(int from, int qid, int type)
{
    int i;
    for (i = from; i < s.n_out; i++)
        if (s.out[i][2] == AM_DATA && QR(s.out[i])[0] == qid && QR(s.out[i])[4] == type)
            return i;
    return -1;
}

/* Run until every node runs query qid (a query climbs down one hop per epoch). */
static void wait_installed(int qid)
{
    int i, all = 0;
    while (!all && s.now < 200000) {
        sim_run(&s, s.now + 100);
        for (all = 1, i = 0; i < s.n; i++)
            all = all && mote_query_status(&s.node[i].st, (uint8_t)qid) == QUERY_RUNNING;
    }
    CHECK(all);
}

/* Run until the root has begun epoch `epoch` of query qid: the root starts epoch 1 a
 * few seconds after the query is complete (core/schedule.h, start delay). */
static void wait_epoch(int qid, int epoch)
{
    while (mote_query_epoch(&s.node[0].st, (uint8_t)qid) < epoch && s.now < 400000)
        sim_run(&s, s.now + 10);
    CHECK(mote_query_epoch(&s.node[0].st, (uint8_t)qid) >= epoch);
}

/* First UART record of query qid for epoch `epoch` at or after index `from`. */
static int find_epoch(int from, int qid, int epoch)
{
    int i;
    for (i = find_out(from, qid, 3); i >= 0; i = find_out(i + 1, qid, 3))
        if ((QR(s.out[i])[2] | QR(s.out[i])[3] << 8) == epoch)
            return i;
    return -1;
}

static void chain(void)
{
    sim_init(&s, 3);
    sim_link(&s, 0, 1);
    sim_link(&s, 1, 2);
    s.node[0].sensor[ATTR_LIGHT] = 10;
    s.node[1].sensor[ATTR_LIGHT] = 50;
    s.node[2].sensor[ATTR_LIGHT] = 90;
    sim_run(&s, 20000);
}

static void test_size(void)
{
    printf("sizeof(mote_state) = %u bytes (budget %u)\n", (unsigned)mote_state_size(),
           (unsigned)MOTE_STATE_MAX);
    CHECK(mote_state_size() <= MOTE_STATE_MAX);
}

static void test_tree_and_max_same_epoch(void)
{
    int i, k, prev_epoch = 0;
    mote_stats st1;
    chain();
    CHECK_EQ(mote_parent(&s.node[1].st), 0);
    CHECK_EQ(mote_parent(&s.node[2].st), 1);
    CHECK_EQ(mote_depth(&s.node[2].st), 2);
    agg_query(1, AGG_MAX, 100); /* 1000-ms epochs */
    wait_installed(1);
    wait_epoch(1, 1);
    i = s.n_out;
    sim_run(&s, s.now + 4000);
    i = find_out(i, 1, 3);
    prev_epoch = i >= 0 ? (QR(s.out[i])[2] | QR(s.out[i])[3] << 8) - 1 : 0;
    CHECK(i >= 0);
    for (k = 0; i >= 0; i = find_out(i + 1, 1, 3), k++) {
        const uint8_t *qr = QR(s.out[i]);
        CHECK_EQ(s.out[i][0] | s.out[i][1] << 8, TOS_UART_ADDR);
        CHECK_EQ(qr[QR_DATA + 3] | qr[QR_DATA + 4] << 8, 90); /* MAX over all three */
        CHECK_EQ(qr[QR_DATA + 5] | qr[QR_DATA + 6] << 8, 2);  /* held by node 2 */
        CHECK((qr[2] | qr[3] << 8) == prev_epoch + 1);        /* one record per epoch */
        prev_epoch = qr[2] | qr[3] << 8;
    }
    CHECK(k >= 3);
    /* Same-epoch delivery: a change made just before epoch e starts shows in the root's
     * record for epoch e (two hops away), not one epoch later as in TinyDB 1.x; epoch
     * e - 1, which ends after the change but was sampled before it, still shows 90. */
    sim_run(&s, (s.now / 1000 + 1) * 1000 - 20);
    k = s.n_out;
    i = k - 1;
    while (i >= 0 && !(s.out[i][2] == AM_DATA && QR(s.out[i])[0] == 1))
        i--;
    CHECK(i >= 0);
    prev_epoch = i >= 0 ? QR(s.out[i])[2] | QR(s.out[i])[3] << 8 : 0; /* epoch e - 2 */
    s.node[2].sensor[ATTR_LIGHT] = 400;
    sim_run(&s, s.now + 2020);
    i = find_epoch(k, 1, prev_epoch + 1);
    CHECK(i >= 0);
    if (i >= 0)
        CHECK_EQ(QR(s.out[i])[QR_DATA + 3] | QR(s.out[i])[QR_DATA + 4] << 8, 90);
    i = find_epoch(k, 1, prev_epoch + 2);
    CHECK(i >= 0);
    if (i >= 0)
        CHECK_EQ(QR(s.out[i])[QR_DATA + 3] | QR(s.out[i])[QR_DATA + 4] << 8, 400);
    /* node 2 sleeps between its intervals */
    sim_run(&s, (s.now / 1000 + 1) * 1000 + 300);
    CHECK_EQ(s.node[2].power, 0);
    CHECK(s.node[2].power_changes > 6);
    CHECK_EQ(s.node[0].power, 1); /* the root never sleeps */
    mote_get_stats(&s.node[1].st, &st1);
    CHECK(st1.records_merged >= 4);
    CHECK_EQ(st1.results_forwarded, 0); /* merged, not forwarded */
    CHECK(st1.samples[ATTR_LIGHT] >= 4);
}

/*
 * A record goes again while its parent can still merge it: four sends lost in a row
 * (a burst of interference) no longer cost the leaf's count, at 4-s epochs where the
 * interval leaves time for more (core/txpath.c, record_may_retry).
 */
static void test_record_resent_while_the_parent_listens(void)
{
    int i, e, records = 0;
    chain();
    agg_query(2, AGG_COUNT, 400);
    wait_installed(2);
    wait_epoch(2, 2);
    for (e = 0; e < 3; e++) {
        int at;
        /* at an epoch's start, before the leaf's interval: its next four sends are lost */
        sim_run(&s, (s.now / 4000 + 1) * 4000 + 10);
        s.drop[2][1] = 4;
        at = s.n_out;
        sim_run(&s, s.now + 8000);
        CHECK_EQ(s.drop[2][1], 0);
        for (i = find_out(at, 2, 3); i >= 0; i = find_out(i + 1, 2, 3), records++)
            CHECK_EQ(QR(s.out[i])[QR_DATA + 3] | QR(s.out[i])[QR_DATA + 4] << 8, 3);
    }
    CHECK(records >= 6);
}

static void test_tuples_and_lazy_sampling(void)
{
    uint8_t f0[40], f1[40], e0[40];
    int i, from1 = 0, from2 = 0;
    mote_stats st1, st2;
    chain();
    /* SELECT light, nodeid WHERE nodeid > 1: node 1 fails the selection before light */
    t_field(f0, 4, 2, 1, 100, 0, "light");
    t_field(f1, 4, 2, 1, 100, 1, "nodeid");
    t_sel(e0, 4, 2, 1, 100, 0, 1, 2, 1, 0, 0);
    send_query(e0);
    send_query(f1);
    send_query(f0);
    wait_epoch(4, 1);
    sim_run(&s, s.now + 5000);
    for (i = find_out(0, 4, 2); i >= 0; i = find_out(i + 1, 4, 2)) {
        const uint8_t *qr = QR(s.out[i]);
        int origin = s.out[i][5 + 2] | s.out[i][5 + 3] << 8;
        static const uint8_t tuple2[10] = {4, 2, 3, 0, 0, 0, 90, 0, 2, 0};
        if (origin == 2) {
            from2++;
            CHECK_BYTES(qr + QR_DATA, tuple2, 10);
        } else {
            from1++;
        }
    }
    CHECK(from2 >= 3);
    CHECK_EQ(from1, 0);
    mote_get_stats(&s.node[1].st, &st1);
    mote_get_stats(&s.node[2].st, &st2);
    CHECK_EQ(st1.samples[ATTR_LIGHT], 0); /* spared by the failed selection */
    CHECK(st1.samples[ATTR_NODEID] >= 3);
    CHECK(st2.samples[ATTR_LIGHT] >= 3);
    CHECK(st1.results_forwarded >= 3);
    /* NO INTERLEAVE: every field sampled at epoch start */
    {
        uint8_t cmd[20] = {0xFF, 0xFF, 1, 0, 0, 0, 'n', 'o', 'i', 'n', 't', 'e', 'r', 'l', 'e', 'a', 'v', 'e', 0, 1};
        sim_uart_to_root(&s, cmd, 20, AM_COMMAND);
        sim_run(&s, s.now + 3000);
        mote_get_stats(&s.node[1].st, &st1);
        CHECK(st1.samples[ATTR_LIGHT] >= 1);
        CHECK(st1.commands_executed >= 1);
    }
}

static void test_snooping_siblings(void)
{
    mote_stats a, b;
    int i, seen = 0;
    sim_init(&s, 3);
    sim_link(&s, 0, 1);
    sim_link(&s, 0, 2);
    sim_link(&s, 1, 2);
    s.node[0].sensor[ATTR_LIGHT] = 10;
    s.node[1].sensor[ATTR_LIGHT] = 50;
    s.node[2].sensor[ATTR_LIGHT] = 90;
    sim_run(&s, 20000);
    CHECK_EQ(mote_parent(&s.node[1].st), 0);
    CHECK_EQ(mote_parent(&s.node[2].st), 0);
    agg_query(2, AGG_MAX, 100);
    wait_installed(2);
    wait_epoch(2, 1);
    i = s.n_out;
    sim_run(&s, s.now + 20000);
    mote_get_stats(&s.node[1].st, &a);
    mote_get_stats(&s.node[2].st, &b);
    CHECK(a.records_suppressed >= 1); /* node 1's 50 is dominated by its sibling's 90 */
    CHECK_EQ(b.records_suppressed, 0);
    for (i = find_out(i, 2, 3); i >= 0; i = find_out(i + 1, 2, 3), seen++)
        CHECK_EQ(QR(s.out[i])[QR_DATA + 3] | QR(s.out[i])[QR_DATA + 4] << 8, 90);
    CHECK(seen >= 15);
    /* `snoop enabled=0` (paper §6.3.2's comparison): node 1 sends its record every epoch,
     * and the answer stays 90 */
    {
        uint8_t cmd[13] = {0xFF, 0xFF, 2, 0, 0, 0, 's', 'n', 'o', 'o', 'p', 0, 0};
        uint32_t suppressed;
        sim_uart_to_root(&s, cmd, 13, AM_COMMAND);
        sim_run(&s, s.now + 2000);
        mote_get_stats(&s.node[1].st, &a);
        suppressed = a.records_suppressed;
        CHECK(a.commands_executed >= 1);
        i = s.n_out;
        seen = 0;
        sim_run(&s, s.now + 20000);
        mote_get_stats(&s.node[1].st, &a);
        CHECK_EQ(a.records_suppressed, suppressed);
        for (i = find_out(i, 2, 3); i >= 0; i = find_out(i + 1, 2, 3), seen++)
            CHECK_EQ(QR(s.out[i])[QR_DATA + 3] | QR(s.out[i])[QR_DATA + 4] << 8, 90);
        CHECK(seen >= 15);
    }
}

static void test_commands_status_and_delete(void)
{
    uint8_t unknown[12] = {0xFF, 0xFF, 2, 0, 0, 0, 'b', 'o', 'g', 'u', 's', 0};
    uint8_t qlen[11] = {0xFF, 0xFF, 3, 0, 0, 0, 'q', 'l', 'e', 'n', 0};
    uint8_t status[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint8_t del[40];
    mote_stats st2;
    int i, k;
    chain();
    agg_query(3, AGG_SUM, 100);
    sim_run(&s, s.now + 3000);
    sim_uart_to_root(&s, unknown, 12, AM_COMMAND);
    sim_uart_to_root(&s, unknown, 12, AM_COMMAND); /* same seqNo: not new, not rebroadcast */
    qlen[10] = 0;
    sim_uart_to_root(&s, qlen, 11, AM_COMMAND); /* qlen 0 is a bad parameter */
    sim_run(&s, s.now + 3000);
    mote_get_stats(&s.node[2].st, &st2);
    CHECK_EQ(st2.commands_unknown, 2);
    k = s.n_out;
    sim_uart_to_root(&s, status, 10, AM_STATUS);
    CHECK_EQ(s.n_out, k + 1);
    CHECK_EQ(s.out[k][2], AM_STATUS);
    CHECK_EQ(s.out[k][4], 49);
    CHECK_EQ(s.out[k][5], 0);  /* fromBase 0 */
    CHECK_EQ(s.out[k][6], 1);  /* one query */
    CHECK_EQ(s.out[k][7], 3);  /* qid 3 */
    /* the motebase extension past TinyDB's 10 bytes (core/commands.h): no busy id yet */
    CHECK_BYTES(s.out[k] + 5 + 10, "mb\x01\x03\x00", 5);
    t_header(del, 3, 0, 0, 0, 0, 0, 0);
    del[3] = 1;
    del[19] = 3;
    send_query(del);
    CHECK_EQ(mote_query_status(&s.node[0].st, 3), QUERY_DRAINING);
    /* Stopped, the query is busy until its last results are in (core/stops.h). */
    k = s.n_out;
    sim_uart_to_root(&s, status, 10, AM_STATUS);
    CHECK_EQ(s.out[k][6], 0);                /* no query runs */
    CHECK_EQ(s.out[k][5 + 14], 1);           /* one busy id */
    CHECK_EQ(s.out[k][5 + 15], 3);           /* qid 3 */
    sim_run(&s, s.now + 6000);
    for (i = 0; i < 3; i++)
        CHECK_EQ(mote_query_status(&s.node[i].st, 3), 0);
}

/*
 * A chain 0-1-...-7 running SELECT nodeid every 200 ms: node 1 relays six
 * tuples an epoch, far more than its 12-ms slot holds (two 5-ms packets).
 * Every node's tuple of every epoch must still reach the UART, once: relays
 * keep sending past their slot while the parent is heard.
 */
static void test_deep_chain_relays_every_tuple(void)
{
    enum { CHAIN = SIM_NODES, EPOCHS = 12, UNITS = 20 };
    uint8_t f[40];
    int seen[CHAIN][EPOCHS], i, e, first = 0, base, sleeps = 0;
    mote_stats st;
    sim_init(&s, CHAIN);
    for (i = 1; i < CHAIN; i++)
        sim_link(&s, i - 1, i);
    sim_run(&s, 40000);
    CHECK_EQ(mote_depth(&s.node[CHAIN - 1].st), CHAIN - 1);
    t_field(f, 6, 1, 0, UNITS, 0, "nodeid");
    send_query(f);
    wait_installed(6);
    wait_epoch(6, 2);
    /* Deeper nodes work ahead (core/schedule.h): at 4 intervals of 50 ms the leaf's
     * tuples of epoch 3 are out before the root is done with epoch 2. Every output since
     * the query went out counts, from epoch 1 on: the start base covers the whole chain. */
    base = 1;
    memset(seen, 0, sizeof seen);
    for (e = 0; e < EPOCHS * UNITS * 10; e++) {
        sim_run(&s, s.now + 1);
        sleeps += s.node[CHAIN - 1].power == 0;
    }
    sim_run(&s, s.now + 2 * UNITS * 10); /* the last epochs' tuples still climbing */
    for (i = find_out(first, 6, 2); i >= 0; i = find_out(i + 1, 6, 2)) {
        const uint8_t *qr = QR(s.out[i]);
        int origin = s.out[i][5 + 2] | s.out[i][5 + 3] << 8, epoch = qr[2] | qr[3] << 8;
        CHECK_EQ(qr[QR_DATA + 6] | qr[QR_DATA + 7] << 8, origin); /* the nodeid field */
        if (origin < CHAIN && epoch >= base && epoch < base + EPOCHS)
            seen[origin][epoch - base]++;
    }
    for (e = 0; e < EPOCHS - 2; e++)
        for (i = 0; i < CHAIN; i++) /* the root reports its own tuple too */
            if (seen[i][e] != 1) {
                printf("node %d epoch %d: %d tuples\n", i, base + e, seen[i][e]);
                CHECK_EQ(seen[i][e], 1);
            }
    for (i = 1; i < CHAIN; i++) {
        mote_get_stats(&s.node[i].st, &st);
        CHECK_EQ(st.queue_dropped, 0);
        CHECK_EQ(st.results_unacked, 0);
    }
    mote_get_stats(&s.node[1].st, &st);
    CHECK(st.results_forwarded >= (uint32_t)(EPOCHS - 2) * (CHAIN - 2));
    /* The leaf still sleeps: 49 % of the time at these 200-ms epochs, where one send
     * and its wait for the parent (net/airtime.h: 50 + 36 ms) are almost half an epoch. */
    CHECK(sleeps > EPOCHS * UNITS * 10 * 2 / 5);
}

enum { RELAY_LEAVES = SIM_NODES - 2, RELAY_EPOCHS = 8, RELAY_UNITS = 100 };

/* The root, a relay (node 1) whose frames take `radio_ms`, and six leaves below it, running
 * SELECT nodeid as query `qid` every second from its first epoch on. */
static void relay_with_leaves(uint32_t radio_ms, int qid)
{
    uint8_t f[40];
    int i;
    sim_init(&s, RELAY_LEAVES + 2);
    s.node[1].radio_ms = radio_ms;
    sim_link(&s, 0, 1);
    for (i = 2; i < RELAY_LEAVES + 2; i++)
        sim_link(&s, 1, i);
    sim_run(&s, 40000);
    CHECK_EQ(mote_depth(&s.node[RELAY_LEAVES + 1].st), 2);
    t_field(f, qid, 1, 0, RELAY_UNITS, 0, "nodeid");
    send_query(f);
    wait_installed(qid);
}

/* Every node's tuple of epochs 1..RELAY_EPOCHS reached the UART as its own AM 240, once. */
static void check_each_tuple_once(int qid)
{
    int seen[RELAY_LEAVES + 2][RELAY_EPOCHS], i, e;
    memset(seen, 0, sizeof seen);
    for (i = find_out(0, qid, 2); i >= 0; i = find_out(i + 1, qid, 2)) {
        const uint8_t *qr = QR(s.out[i]);
        int origin = s.out[i][5 + 2] | s.out[i][5 + 3] << 8, epoch = qr[2] | qr[3] << 8;
        CHECK_EQ(s.out_len[i], TOS_MSG_MAX);
        CHECK_EQ(qr[QR_DATA + 6] | qr[QR_DATA + 7] << 8, origin);
        if (origin < RELAY_LEAVES + 2 && epoch >= 1 && epoch <= RELAY_EPOCHS)
            seen[origin][epoch - 1]++;
    }
    for (e = 0; e < RELAY_EPOCHS; e++)
        for (i = 0; i < RELAY_LEAVES + 2; i++)
            if (seen[i][e] != 1) {
                printf("node %d epoch %d: %d tuples\n", i, e + 1, seen[i][e]);
                CHECK_EQ(seen[i][e], 1);
            }
}

/*
 * A relay with six children and a slow uplink: their tuples meet in its queue and go on in
 * bundles (result/bundle.h), yet the root writes each as its own AM 240, once. The relay's
 * sends take long (a busy channel): 5 a second, for 7 tuples an epoch. One by one they
 * would back up and overflow its queue.
 */
static void test_relay_bundles_tuples(void)
{
    relay_with_leaves(200, 7);
    wait_epoch(7, 1);
    sim_run(&s, s.now + (RELAY_EPOCHS + 2) * RELAY_UNITS * 10);
    check_each_tuple_once(7);
    CHECK(s.bundles_on_air >= RELAY_EPOCHS);
}

/* Tuples in a node's result queue: an entry packed with several counts each (txpath.c). */
static int queued_tuples(const radioq *q)
{
    int i, n = 0;
    for (i = 0; i < q->count; i++) {
        const radioq_entry *e = &q->slot[q->order[i]];
        n += e->packed ? e->packed : 1;
    }
    return n;
}

/*
 * The same relay and children, the relay's uplink lost for four frames at once: a
 * backlog builds up, more tuples than its queue has places, four to a place
 * (core/txpath.c, pack_tuple). Nothing is refused for want of room, dropped or given
 * up, and every tuple reaches the UART once.
 */
static void test_relay_packs_a_backlog(void)
{
    int i, t, peak = 0;
    mote_stats st;
    relay_with_leaves(100, 8);
    wait_epoch(8, 2);
    s.drop[1][0] = 4;
    for (t = 0; t < (RELAY_EPOCHS + 1) * RELAY_UNITS * 10; t++) {
        int n = queued_tuples(&s.node[1].st.rq);
        sim_run(&s, s.now + 1);
        peak = n > peak ? n : peak;
    }
    CHECK(peak > (int)RADIOQ_MAX_LEN);
    check_each_tuple_once(8);
    for (i = 1; i < RELAY_LEAVES + 2; i++) {
        mote_get_stats(&s.node[i].st, &st);
        CHECK_EQ(st.queue_dropped, 0);
        CHECK_EQ(st.results_unacked, 0);
    }
}

/*
 * The same relay and children, its frames 300 ms on the air and two of them lost every
 * second: seven tuples a second come in, fewer go out, and its queue never empties
 * through eight beacon periods. Its beacons, the only news of its cost, still go, as
 * tuples hold them back no more (core/mote.c, settle): in six of the periods here (in
 * the other two a frame filled the gate). Held back, none went, and on a 100-node grid
 * past capacity loops closed on the costs they left stale.
 */
static void test_a_relay_full_of_tuples_still_beacons(void)
{
    uint32_t beacons, end;
    int empty = 0;
    relay_with_leaves(300, 9);
    wait_epoch(9, 2);
    beacons = s.beacons_from[1];
    end = s.now + 8u * BEACON_PERIOD_MS;
    while (s.now < end) {
        if (s.now % 1000u == 0)
            s.drop[1][0] = 2;
        sim_run(&s, s.now + 1);
        empty += !tx_results_pending(&s.node[1].st);
    }
    CHECK_EQ(empty, 0);
    CHECK(s.beacons_from[1] - beacons >= 6);
}

static uint32_t read_stamp(const uint8_t *field)
{
    return (uint32_t)(field[1] | field[2] << 8) | (uint32_t)(field[3] | field[4] << 8) << 16;
}

/* The start symbol restamps query parts and results, and nothing else. */
static void test_time_stamped_at_start_symbol(void)
{
    uint8_t pkt[TOS_MSG_MAX], before[TOS_MSG_MAX];
    tos_header h = {0, AM_DATA, TOS_DEFAULT_GROUP, MHOP_HEADER_LEN + QR_LEN};
    sim_init(&s, 1);
    s.now = 70000;
    memset(pkt, 0xAB, sizeof pkt);
    tos_header_pack(&h, pkt);
    mote_on_frame_start(&s.node[0].st, pkt, (uint8_t)(TOS_HEADER_LEN + h.length));
    CHECK_EQ(pkt[TOS_HEADER_LEN + MHOP_HEADER_LEN + QR_OFF_TIME], 0);
    CHECK_EQ(read_stamp(pkt + TOS_HEADER_LEN + MHOP_HEADER_LEN + QR_OFF_TIME),
             mote_logical_time(&s.node[0].st));
    h.type = AM_QUERY;
    h.length = T_QMSG_LEN;
    tos_header_pack(&h, pkt);
    mote_on_frame_start(&s.node[0].st, pkt, (uint8_t)(TOS_HEADER_LEN + h.length));
    CHECK_EQ(read_stamp(pkt + TOS_HEADER_LEN + QMSG_TIME), mote_logical_time(&s.node[0].st));
    /* a beacon has no stamp; a frame too short for one is left alone */
    h.type = AM_ROUTE_BEACON;
    tos_header_pack(&h, pkt);
    memcpy(before, pkt, sizeof pkt);
    mote_on_frame_start(&s.node[0].st, pkt, (uint8_t)(TOS_HEADER_LEN + h.length));
    CHECK(memcmp(before, pkt, sizeof pkt) == 0);
    h.type = AM_DATA;
    h.length = MHOP_HEADER_LEN + QR_OFF_TIME + 4u;
    tos_header_pack(&h, pkt);
    memcpy(before, pkt, sizeof pkt);
    mote_on_frame_start(&s.node[0].st, pkt, (uint8_t)(TOS_HEADER_LEN + h.length));
    CHECK(memcmp(before, pkt, sizeof pkt) == 0);
}

static uint32_t g_rx_started;
static uint32_t h_rx_started(void *ctx)
{
    (void)ctx;
    return g_rx_started;
}

/* A result overheard from the parent, delivered at the frame's end: node 2 compares
 * the parent's stamp with its own time at the start symbol. An airtime of 30 ms is not
 * skew; a stamp 40 ms ahead of the start symbol is. */
static void overhear_parent_result(uint32_t stamp)
{
    uint8_t pkt[TOS_MSG_MAX];
    tos_header h = {MOTE_ROOT_ID, AM_DATA, TOS_DEFAULT_GROUP, MHOP_HEADER_LEN + QR_LEN};
    mhop_header mh = {1, 1, 7, 1};
    memset(pkt, 0, sizeof pkt);
    tos_header_pack(&h, pkt);
    mhop_header_pack(&mh, pkt + TOS_HEADER_LEN);
    QR(pkt)[0] = 1;
    QR(pkt)[2] = 1;
    QR(pkt)[4] = QR_TUPLE;
    QR(pkt)[QR_OFF_TIME + 1] = (uint8_t)(stamp & 0xFFu);
    QR(pkt)[QR_OFF_TIME + 2] = (uint8_t)(stamp >> 8 & 0xFFu);
    QR(pkt)[QR_OFF_TIME + 3] = (uint8_t)(stamp >> 16 & 0xFFu);
    QR(pkt)[QR_OFF_TIME + 4] = (uint8_t)(stamp >> 24);
    mote_on_radio_rx(&s.node[2].st, pkt, (uint8_t)(TOS_HEADER_LEN + h.length));
}

static void test_time_adopted_against_the_start_symbol(void)
{
    uint32_t t;
    chain();
    CHECK_EQ(mote_parent(&s.node[2].st), 1);
    s.node[2].hal.rx_started_ms = h_rx_started;
    t = mote_logical_time(&s.node[2].st);
    g_rx_started = s.now - 30u;
    overhear_parent_result(t - 30u);
    CHECK_EQ(mote_logical_time(&s.node[2].st), t);
    overhear_parent_result(t - 30u + 40u);
    CHECK_EQ(mote_logical_time(&s.node[2].st), t + 40u);
}

/*
 * A query phase reached late: the AVR image handles a frame before it looks at its
 * alarm, so a frame may come in just after a phase fell due. Re-arming then must
 * keep the alarm due. It used to go to the far "nothing due" sentinel, and the root,
 * with no other deadline, never began another epoch (CI, tests/avr).
 */
static void test_late_phase_keeps_the_alarm_due(void)
{
    static const uint8_t junk[TOS_HEADER_LEN] = {0xFF, 0xFF, 0xEE, TOS_DEFAULT_GROUP, 0};
    uint8_t f[40];
    int epoch;
    chain();
    t_field(f, 7, 1, 0, 20, 0, "nodeid");
    send_query(f);
    wait_epoch(7, 2);
    epoch = mote_query_epoch(&s.node[0].st, 7);
    /* Past the root's next phase by 20 ms, its alarm not yet taken. */
    CHECK(s.node[0].alarm_set);
    s.now = s.node[0].alarm + 20u;
    mote_on_radio_rx(&s.node[0].st, junk, sizeof junk);
    CHECK(s.node[0].alarm_set);
    CHECK((int32_t)(s.now - s.node[0].alarm) >= 0);
    sim_run(&s, s.now + 1000);
    CHECK(mote_query_epoch(&s.node[0].st, 7) >= epoch + 4);
}

/*
 * A relay that comes closer to the root while COUNT runs takes its subtree along within
 * an epoch a level. Node 2 loses its parent 1 and takes the root (depth 2 -> 1); its child 3 still
 * sends from depth 3, an interval before 2 now listens, and waits for 2 in an interval
 * where 2 no longer speaks. For one epoch 2 wakes where 3 sends (runs.c, children_slot)
 * and answers 3's record with a beacon (results.c). Without, 3 kept its stale depth until
 * it gave its parent up, its records reaching 2 only by their retries (on a crowded
 * channel, a relay and its subtree left out: a 1,000-node grid on `sinr`).
 */
static void test_children_follow_a_relay_that_comes_closer(void)
{
    int e, i, at, counted = 0;
    sim_init(&s, 5);
    sim_link(&s, 0, 1);
    sim_link(&s, 1, 2);
    sim_link(&s, 2, 3);
    sim_link(&s, 3, 4);
    sim_run(&s, 20000);
    CHECK_EQ(mote_depth(&s.node[4].st), 4);
    agg_query(3, AGG_COUNT, 800); /* 8-s epochs: 1-s intervals */
    wait_installed(3);
    wait_epoch(3, 2);
    s.link[1][2] = s.link[2][1] = 0;
    sim_link(&s, 0, 2);
    while (mote_parent(&s.node[2].st) != 0 && s.now < 400000)
        sim_run(&s, s.now + 10);
    CHECK_EQ(mote_depth(&s.node[2].st), 1);
    sim_run(&s, (s.now / 8000 + 2) * 8000); /* the end of the next epoch: 3 followed */
    CHECK_EQ(mote_depth(&s.node[3].st), 2);
    sim_run(&s, s.now + 8000); /* and an epoch later its child, woken for the same way */
    CHECK_EQ(mote_depth(&s.node[4].st), 3);
    at = s.n_out;
    sim_run(&s, s.now + 40000);
    for (e = 0, i = find_out(at, 3, 3); i >= 0; i = find_out(i + 1, 3, 3), e++)
        counted += (QR(s.out[i])[QR_DATA + 3] | QR(s.out[i])[QR_DATA + 4] << 8) == 5;
    CHECK(e >= 4);
    CHECK_EQ(counted, e);
}

/*
 * A mote that missed a RATE (flooded once, unacknowledged) is told again by its parent,
 * which hears its tuples run ahead of its own epoch (querymsg.c, qmsg_tell_rate): the
 * mote's epochs fall back in step with the others'.
 */
static void test_a_missed_rate_is_told_again(void)
{
    uint8_t f[40], rate[40];
    int ahead;
    chain();
    t_field(f, 8, 1, 0, 100, 0, "nodeid"); /* SELECT nodeid, 1-s epochs */
    send_query(f);
    wait_installed(8);
    wait_epoch(8, 2);
    memset(rate, 0, sizeof rate);
    rate[QMSG_QID] = 8;
    rate[QMSG_FWD_NODE] = 0x7E;
    rate[QMSG_MSG_TYPE] = QMSG_RATE;
    rate[QMSG_EPOCH] = 200; /* 2 s */
    s.link[1][2] = 0; /* node 2 hears nothing of node 1 while the RATE floods */
    sim_uart_to_root(&s, rate, T_QMSG_LEN, AM_QUERY);
    sim_run(&s, s.now + 2500);
    s.link[1][2] = 1;
    ahead = mote_query_epoch(&s.node[2].st, 8) - mote_query_epoch(&s.node[1].st, 8);
    CHECK(ahead >= 1); /* it missed it, and runs at 1 s */
    sim_run(&s, s.now + 20000);
    ahead = mote_query_epoch(&s.node[2].st, 8) - mote_query_epoch(&s.node[1].st, 8);
    CHECK(ahead >= -1 && ahead <= 1);
}

/* Whether node `i` runs query qid. */
static int runs(int i, int qid)
{
    return mote_query_status(&s.node[i].st, (uint8_t)qid) == QUERY_RUNNING;
}

/*
 * A query part whose forward the MAC gave up on, the channel busy, goes again: the
 * child gets every part from the flood, well before it would have asked for the
 * missing one (QREQ_GAP_MS after the last part), and asks for nothing.
 */
static void test_an_abandoned_query_part_goes_again(void)
{
    uint32_t start;
    chain();
    s.abandon_am = AM_QUERY;
    s.abandon[0] = 1;
    start = s.now;
    agg_query(9, AGG_MAX, 200);
    sim_run(&s, start + QREQ_GAP_MS);
    CHECK_EQ(s.abandon[0], 0); /* one forward was given up... */
    CHECK(runs(1, 9) && runs(2, 9)); /* ...and went again (550 ms, as without it) */
    sim_run(&s, start + 3u * QREQ_GAP_MS);
    CHECK_EQ(s.requests_on_air, 0);
}

/*
 * Two motes missing the same part: the one that asks second overhears the first's
 * request and waits for the answer, a broadcast it hears too. One request goes on the
 * air, not two.
 */
static void test_an_overheard_request_holds_ours(void)
{
    uint32_t start;
    sim_init(&s, 3);
    sim_link(&s, 0, 1);
    sim_link(&s, 0, 2);
    sim_link(&s, 1, 2);
    sim_run(&s, 20000);
    s.drop[0][1] = 1; /* 1 misses the root's first part */
    s.drop[0][2] = 2; /* 2 misses both: it gets the second from 1's forward, a bit later */
    start = s.now;
    agg_query(10, AGG_MAX, 200);
    sim_run(&s, start + 4u * QREQ_GAP_MS);
    CHECK(runs(1, 10) && runs(2, 10));
    CHECK_EQ(s.requests_on_air, 1);
}

/*
 * `slots enabled=0|1` (core/runs.c, unslotted): COUNT over a tree of depth 3 whose levels
 * hold 1, 2, 3 and 2 nodes. Slotted, every epoch counts all 8 from epoch 1 on. Unslotted,
 * a record climbs one level an epoch and the root merges its children's of the same
 * epoch, so epoch k counts the nodes of depth <= k: 3, 6, then 8 from epoch 3 = the depth.
 */
enum { SLOT_TREE = 8, SLOT_EPOCHS = 6 };

static void slot_tree_counts(int slotted, int qid, int *count)
{
    uint8_t cmd[13] = {0xFF, 0xFF, 1, 0, 0, 0, 's', 'l', 'o', 't', 's', 0, 0};
    static const int edge[][2] = {{0, 1}, {1, 2}, {2, 3}, {0, 4}, {1, 5}, {2, 6}, {4, 7}};
    mote_stats st;
    int i, e, awake = 1;
    sim_init(&s, SLOT_TREE);
    for (i = 0; i < (int)(sizeof edge / sizeof edge[0]); i++)
        sim_link(&s, edge[i][0], edge[i][1]);
    sim_run(&s, 20000);
    CHECK_EQ(mote_depth(&s.node[6].st), 3);
    cmd[12] = (uint8_t)slotted;
    sim_uart_to_root(&s, cmd, sizeof cmd, AM_COMMAND);
    sim_run(&s, s.now + 3000);
    for (i = 0; i < SLOT_TREE; i++) {
        mote_get_stats(&s.node[i].st, &st);
        CHECK_EQ(st.commands_executed, 1);
    }
    agg_query(qid, AGG_COUNT, 400); /* 4-s epochs: 1-s intervals */
    wait_installed(qid);
    while (mote_query_epoch(&s.node[0].st, (uint8_t)qid) <= SLOT_EPOCHS && s.now < 400000) {
        sim_run(&s, s.now + 10);
        awake = awake && s.node[3].power;
    }
    for (e = 1; e <= SLOT_EPOCHS; e++) {
        i = find_epoch(0, qid, e);
        CHECK(i >= 0);
        count[e - 1] = i >= 0 ? QR(s.out[i])[QR_DATA + 3] | QR(s.out[i])[QR_DATA + 4] << 8 : -1;
        CHECK(i < 0 || find_epoch(i + 1, qid, e) < 0); /* one record an epoch */
    }
    for (i = 1; i < SLOT_TREE; i++) {
        mote_get_stats(&s.node[i].st, &st);
        CHECK_EQ(st.records_late, 0);
        CHECK_EQ(st.results_forwarded, 0); /* every record merged, none passed on */
    }
    CHECK_EQ(awake, !slotted); /* a leaf sleeps between its intervals only when slotted */
}

static void test_slots_switch_pipelines_count(void)
{
    static const int unslotted[SLOT_EPOCHS] = {3, 6, 8, 8, 8, 8};
    int count[SLOT_EPOCHS], e;
    slot_tree_counts(1, 9, count);
    for (e = 0; e < SLOT_EPOCHS; e++)
        CHECK_EQ(count[e], SLOT_TREE);
    slot_tree_counts(0, 10, count);
    for (e = 0; e < SLOT_EPOCHS; e++)
        CHECK_EQ(count[e], unslotted[e]);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_size();
    test_tree_and_max_same_epoch();
    test_record_resent_while_the_parent_listens();
    test_tuples_and_lazy_sampling();
    test_snooping_siblings();
    test_commands_status_and_delete();
    test_deep_chain_relays_every_tuple();
    test_relay_bundles_tuples();
    test_relay_packs_a_backlog();
    test_a_relay_full_of_tuples_still_beacons();
    test_time_stamped_at_start_symbol();
    test_time_adopted_against_the_start_symbol();
    test_late_phase_keeps_the_alarm_due();
    test_children_follow_a_relay_that_comes_closer();
    test_a_missed_rate_is_told_again();
    test_an_abandoned_query_part_goes_again();
    test_an_overheard_request_holds_ours();
    test_slots_switch_pipelines_count();
    return check_report(argv[0]);
}
