/*
 * Emulator unit tests against the scripted stub mote: radio medium (delivery,
 * collisions, acks, carrier sense; the SINR model's capture, energy carrier
 * sense and interference sums), virtual clock, energy meter, faults, event
 * queue order, determinism.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emu/csrc/emu.h"
#include "emu/csrc/evq.h"
#include "emu/csrc/net_priv.h"
#include "emu/csrc/rng.h"
#include "firmware/net/airtime.h"
#include "stub_mote.h"

static int failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                      \
        }                                                                    \
    } while (0)

static const mote_state *stub(emu_net *net, uint32_t i)
{
    return (const mote_state *)emu_net_mote(net, i);
}

/* Node i sends one frame at `at_ms` to `dest` (0xFFFF: broadcast) with `len` data
 * bytes (0: the stub's default). */
static void plan_send(uint32_t i, uint32_t at_ms, uint16_t dest, uint8_t len)
{
    stub_plans[i].send_at_ms = at_ms;
    stub_plans[i].dest = dest;
    stub_plans[i].data_len = len;
}

static emu_net *make(uint32_t n, int lossless, uint64_t seed)
{
    emu_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.n_nodes = n;
    cfg.platform = EMU_MICA2;
    cfg.seed = seed;
    cfg.lossless = (uint32_t)lossless;
    cfg.uart_capacity = 256;
    cfg.max_faults = 8;
    return emu_net_new(&cfg);
}

/* Symmetric links of probability 1 along a line 0 - 1 - 2 - ... */
static void line_links(emu_net *net, uint32_t n)
{
    uint32_t row[STUB_MAX_NODES + 1], dst[2 * STUB_MAX_NODES];
    float prob[2 * STUB_MAX_NODES];
    uint32_t i, e = 0;
    for (i = 0; i < n; i++) {
        row[i] = e;
        if (i > 0) { dst[e] = i - 1; prob[e++] = 1.0f; }
        if (i + 1 < n) { dst[e] = i + 1; prob[e++] = 1.0f; }
    }
    row[n] = e;
    CHECK(emu_net_set_links(net, row, dst, prob) == 0);
}

/* The firmware's schedule is built on the Mica2's frame time (firmware/net/airtime.h,
 * whose rate and framing the medium takes): its whole-ms figure must cover a full frame
 * the medium times, or slots are too short for the frames they carry. */
static void test_firmware_frame_time_matches_the_medium(void)
{
    uint64_t full = emu_platform_airtime_us(emu_platform_get(EMU_MICA2), TOS_MSG_MAX);
    uint64_t dot = emu_platform_airtime_us(emu_platform_get(EMU_MICA2DOT), TOS_MSG_MAX);
    CHECK(full == dot);
    CHECK(full <= RADIO_FRAME_MS * 1000u && full > (RADIO_FRAME_MS - 1u) * 1000u);
}

static void test_broadcast_reaches_neighbours_only(void)
{
    emu_net *net = make(4, 1, 1);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(1, 100, 0xFFFF, 0);
    line_links(net, 4);
    emu_net_boot(net);
    emu_net_run_until(net, 1000000u);
    CHECK(stub(net, 0)->received == 1 && stub(net, 0)->last_src == 1);
    CHECK(stub(net, 2)->received == 1 && stub(net, 2)->last_src == 1);
    CHECK(stub(net, 3)->received == 0);
    CHECK(stub(net, 1)->send_done == 1 && stub(net, 1)->acked == 0);
    CHECK(emu_net_counters(net, EMU_CNT_SENT)[1] == 1);
    CHECK(emu_net_now_us(net) == 1000000u);
    emu_net_free(net);
}

static void test_hidden_terminals_collide(void)
{
    /* 0 and 2 cannot hear each other, so carrier sense cannot help node 1 */
    emu_net *net = make(3, 0, 7);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(0, 50, 0xFFFF, 0);
    plan_send(2, 50, 0xFFFF, 0);
    line_links(net, 3);
    emu_net_boot(net);
    emu_net_run_until(net, 1000000u);
    CHECK(stub(net, 1)->received == 0);
    CHECK(emu_net_counters(net, EMU_CNT_COLLIDED)[1] == 2);
    emu_net_free(net);
}

static void test_carrier_sense_serialises_neighbours(void)
{
    /* 0 and 1 hear each other: both reach 2? no, only 1 does; 0 and 1 must not overlap */
    emu_net *net = make(3, 0, 3);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(0, 50, 0xFFFF, 0);
    plan_send(1, 50, 0xFFFF, 0);
    line_links(net, 3);
    emu_net_boot(net);
    emu_net_run_until(net, 1000000u);
    CHECK(stub(net, 0)->received == 1);
    CHECK(stub(net, 1)->received == 1);
    CHECK(stub(net, 2)->received == 1);
    CHECK(emu_net_counters(net, EMU_CNT_BACKOFFS)[0] + emu_net_counters(net, EMU_CNT_BACKOFFS)[1] >= 1);
    emu_net_free(net);
}

static void test_unicast_ack(void)
{
    emu_net *net = make(3, 0, 5);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(1, 10, 2, 0);
    plan_send(0, 500, 2, 0); /* 2 is not a neighbour of 0 */
    line_links(net, 3);
    emu_net_boot(net);
    emu_net_run_until(net, 1000000u);
    CHECK(stub(net, 1)->send_done == 1 && stub(net, 1)->acked == 1);
    CHECK(stub(net, 0)->send_done == 1 && stub(net, 0)->acked == 0);
    CHECK(emu_net_counters(net, EMU_CNT_ACKED)[1] == 1);
    emu_net_free(net);
}

static void test_refused_unicast_goes_unacknowledged(void)
{
    emu_net *net = make(3, 0, 5);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(1, 10, 2, 0);
    stub_plans[2].refuse = 1;
    stub_plans[0].refuse = 1; /* a bystander refusing changes nothing */
    line_links(net, 3);
    emu_net_boot(net);
    emu_net_run_until(net, 1000000u);
    CHECK(stub(net, 2)->received == 1); /* heard, not taken */
    CHECK(stub(net, 1)->send_done == 1 && stub(net, 1)->acked == 0);
    CHECK(emu_net_counters(net, EMU_CNT_ACKED)[1] == 0);
    emu_net_free(net);
}

static void test_lossy_link_statistics(void)
{
    /* one link of probability 0.3, 1 sender, many independent nets */
    uint32_t row[3] = {0, 1, 1}, dst[1] = {1}, got = 0, seed;
    float prob[1] = {0.3f};
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(0, 10, 0xFFFF, 0);
    for (seed = 1; seed <= 400; seed++) {
        emu_net *net = make(2, 0, seed);
        CHECK(emu_net_set_links(net, row, dst, prob) == 0);
        emu_net_boot(net);
        emu_net_run_until(net, 100000u);
        got += stub(net, 1)->received;
        emu_net_free(net);
    }
    CHECK(got > 80 && got < 160); /* 120 expected, ~9 sd */
}

static void test_energy_is_phase_time_times_current(void)
{
    const emu_platform *p = emu_platform_get(EMU_MICA2);
    uint64_t air = emu_platform_airtime_us(p, 9);
    emu_net *net = make(2, 1, 1);
    double expect_sleep, expect_listen, expect_tx;
    memset(stub_plans, 0, sizeof stub_plans);
    stub_plans[0].sleep_cpu = 1;
    plan_send(0, 200, 0xFFFF, 0);
    line_links(net, 2);
    emu_net_boot(net);
    emu_net_run_until(net, 2000000u);
    emu_net_settle_energy(net);
    CHECK(air == (8u * (9u + 32u) * 1000000u + 19199u) / 19200u); /* 19.2 kbit/s of data */
    CHECK(emu_net_phase_us(net, EMU_PH_SLEEP)[0] == 2000000u);
    CHECK(emu_net_phase_us(net, EMU_PH_CPU)[0] == 0);
    CHECK(emu_net_phase_us(net, EMU_PH_TX)[0] == air);
    CHECK(emu_net_phase_us(net, EMU_PH_LISTEN)[0] == 2000000u - air);
    expect_sleep = 2.0 * 15e-6 * 3.0;
    expect_tx = (double)air * 1e-6 * 16.5e-3 * 3.0;
    expect_listen = (double)(2000000u - air) * 1e-6 * 7.4e-3 * 3.0;
    CHECK(fabs(emu_net_joules(net, EMU_PH_SLEEP)[0] - expect_sleep) < 1e-12);
    CHECK(fabs(emu_net_joules(net, EMU_PH_TX)[0] - expect_tx) < 1e-12);
    CHECK(fabs(emu_net_joules(net, EMU_PH_LISTEN)[0] - expect_listen) < 1e-12);
    CHECK(emu_net_phase_us(net, EMU_PH_CPU)[1] == 2000000u); /* node 1 never slept */
    emu_net_free(net);
}

static void test_battery_depletion_kills(void)
{
    emu_config cfg;
    emu_net *net;
    memset(&cfg, 0, sizeof cfg);
    memset(stub_plans, 0, sizeof stub_plans);
    cfg.n_nodes = 2;
    cfg.platform = EMU_MICA2;
    cfg.uart_capacity = 16;
    cfg.battery_j = 0.05; /* CPU + radio ~ 46 mW: dead after ~1.1 s */
    net = make(2, 1, 1);
    emu_net_free(net);
    net = emu_net_new(&cfg);
    line_links(net, 2);
    emu_net_boot(net);
    CHECK(emu_net_schedule_fault(net, 1, 0, 1) == -1); /* max_faults = 0 */
    emu_net_run_until(net, 5000000u);
    emu_net_settle_energy(net);
    /* node 0, the basestation, is powered by its MIB510 board (energy.h) */
    CHECK(emu_net_alive(net)[0] == 1 && emu_net_alive(net)[1] == 0);
    emu_net_free(net);
}

static void test_kill_and_revive(void)
{
    emu_net *net = make(2, 1, 1);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(0, 300, 0xFFFF, 0);
    line_links(net, 2);
    emu_net_boot(net);
    CHECK(emu_net_schedule_fault(net, 1, 100000u, 0) == 0);
    CHECK(emu_net_schedule_fault(net, 1, 500000u, 1) == 0);
    emu_net_run_until(net, 1000000u);
    CHECK(stub(net, 1)->received == 0); /* dead while 0 sent */
    CHECK(stub(net, 1)->boots == 2);
    CHECK(emu_net_alive(net)[1] == 1);
    emu_net_free(net);
}

static void test_uart_round_trip(void)
{
    static const uint8_t bytes[] = {0x7e, 0x42, 0x7d, 0x5e, 0x7e};
    uint8_t out[16];
    emu_net *net = make(1, 1, 1);
    memset(stub_plans, 0, sizeof stub_plans);
    emu_net_boot(net);
    emu_net_uart_write(net, bytes, sizeof bytes);
    CHECK(emu_net_uart_read(net, out, sizeof out) == sizeof bytes);
    CHECK(memcmp(out, bytes, sizeof bytes) == 0);
    CHECK(emu_net_uart_read(net, out, sizeof out) == 0);
    emu_net_free(net);
}

static void test_routing_reads_every_node(void)
{
    uint16_t parent[3];
    uint8_t depth[3];
    emu_net *net = make(3, 1, 1);
    memset(stub_plans, 0, sizeof stub_plans);
    emu_net_boot(net);
    emu_net_routing(net, parent, depth);
    CHECK(parent[0] == 0x007E && parent[1] == 0 && parent[2] == 1);
    CHECK(depth[0] == 0 && depth[1] == 1 && depth[2] == 2);
    emu_net_free(net);
}

static void test_evq_orders_by_time_then_slot(void)
{
    evq q;
    emu_rng rng;
    uint64_t last = 0, t;
    uint32_t i, slot, last_slot = 0, popped = 0;
    CHECK(evq_init(&q, 1000) == 0);
    emu_rng_seed(&rng, 42, 0);
    for (i = 0; i < 5000; i++) {
        slot = emu_rng_below(&rng, 1000);
        if (emu_rng_below(&rng, 4) == 0)
            evq_cancel(&q, slot);
        else
            evq_schedule(&q, slot, emu_rng_below(&rng, 100000));
    }
    while (q.count) {
        slot = evq_pop(&q, &t);
        CHECK(t > last || (t == last && (popped == 0 || slot > last_slot)));
        CHECK(!evq_is_armed(&q, slot));
        last = t;
        last_slot = slot;
        popped++;
    }
    CHECK(popped > 0 && popped <= 1000);
    evq_schedule(&q, 2, last + 5u);
    evq_schedule(&q, 1, last + 5u);
    evq_schedule(&q, 2, last + 5u); /* re-arming does not change the order of a tie */
    CHECK(evq_pop(&q, &t) == 1);
    CHECK(evq_pop(&q, &t) == 2);
    CHECK(t == last + 5u);
    evq_free(&q);
}

static void test_evq_moves_its_base_for_far_deadlines(void)
{
    evq q;
    uint64_t t, far;
    CHECK(evq_init(&q, EVQ_MAX_SLOTS) == 0);
    far = q.span_us + 100u; /* beyond the key span counted from 0, within it from 400 */
    evq_schedule(&q, 7, 400);
    CHECK(evq_pop(&q, &t) == 7 && t == 400);
    evq_schedule(&q, 9, 900);
    CHECK(evq_schedule(&q, 8, far) == 0);
    CHECK(evq_schedule(&q, 5, 901) == 0);
    CHECK(evq_schedule(&q, 6, 400 + 2u * q.span_us) == -1);
    CHECK(!evq_is_armed(&q, 6));
    CHECK(evq_pop(&q, &t) == 9 && t == 900);
    CHECK(evq_pop(&q, &t) == 5 && t == 901);
    CHECK(evq_pop(&q, &t) == 8 && t == far);
    evq_free(&q);
    CHECK(evq_init(&q, EVQ_MAX_SLOTS + 1u) == -1);
}

static void test_evq_agrees_with_a_sorted_reference(void)
{
    /* random arming, re-arming, cancelling and popping of deadlines from microseconds
     * to minutes away against a plain array searched for its (time, slot) minimum */
    static uint64_t due[64];
    static const uint64_t reach[4] = {3000u, 100000u, 3000000u, 600000000u};
    evq q;
    emu_rng rng;
    uint64_t now = 0, t;
    uint32_t i, s, best;
    CHECK(evq_init(&q, 64) == 0);
    emu_rng_seed(&rng, 9, 0);
    for (s = 0; s < 64; s++)
        due[s] = UINT64_MAX;
    for (i = 0; i < 200000u; i++) {
        s = emu_rng_below(&rng, 64);
        if (emu_rng_below(&rng, 8) == 0) {
            evq_cancel(&q, s);
            due[s] = UINT64_MAX;
        } else if (emu_rng_below(&rng, 2) == 0) {
            t = now + emu_rng_below(&rng, (uint32_t)reach[emu_rng_below(&rng, 4)]);
            CHECK(evq_schedule(&q, s, t) == 0);
            due[s] = t;
        } else if (q.count) {
            for (best = 0, s = 1; s < 64; s++)
                if (due[s] < due[best])
                    best = s;
            CHECK(evq_next_time(&q) == due[best]);
            CHECK(evq_pop(&q, &now) == best && now == due[best]);
            due[best] = UINT64_MAX;
        }
    }
    evq_free(&q);
}

static void test_same_seed_same_run(void)
{
    uint32_t run, counts[2][3];
    for (run = 0; run < 2; run++) {
        emu_net *net = make(3, 0, 99);
        memset(stub_plans, 0, sizeof stub_plans);
        plan_send(0, 20, 0xFFFF, 0);
        plan_send(1, 20, 2, 0);
        plan_send(2, 20, 0xFFFF, 0);
        line_links(net, 3);
        emu_net_boot(net);
        emu_net_run_until(net, 1000000u);
        counts[run][0] = emu_net_counters(net, EMU_CNT_RECEIVED)[1];
        counts[run][1] = emu_net_counters(net, EMU_CNT_BACKOFFS)[1];
        counts[run][2] = (uint32_t)emu_net_events(net);
        emu_net_free(net);
    }
    CHECK(memcmp(counts[0], counts[1], sizeof counts[0]) == 0);
}

/* SINR model: the links are the finite entries of dbm[src][dst]; noise -105 dBm everywhere. */
#define NO_LINK (-1000.0f)
#define NOISE_DBM (-105.0f)
#define LOCK_DB 6.0 /* RadioParams defaults */
#define CCA_DB 3.0

static void power_links(emu_net *net, uint32_t n, float dbm[][4])
{
    uint32_t row[5], dst[16], s, d, e = 0;
    float prob[16], rx[16], noise[4];
    for (s = 0; s < n; s++) {
        row[s] = e;
        noise[s] = NOISE_DBM;
        for (d = 0; d < n; d++) {
            if (dbm[s][d] <= NO_LINK)
                continue;
            dst[e] = d;
            prob[e] = (float)emu_radio_prr((double)(dbm[s][d] - NOISE_DBM), 54);
            rx[e++] = dbm[s][d];
        }
    }
    row[n] = e;
    CHECK(emu_net_set_links(net, row, dst, prob) == 0);
    CHECK(emu_net_set_link_powers(net, rx, noise, LOCK_DB, CCA_DB) == 0);
}

/* 0 and 2 cannot hear each other; 2 sends into 0's long frame at node 1 (frames of
 * 49 data bytes last 35.8 ms, initial backoffs at most 13.3 ms: 0 is first, they overlap). */
static emu_net *overlap_at_1(float dbm[][4], uint32_t seed)
{
    emu_net *net = make(3, 0, seed);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(0, 50, 0xFFFF, 49);
    plan_send(2, 64, 0xFFFF, 49);
    power_links(net, 3, dbm);
    emu_net_boot(net);
    emu_net_run_until(net, 1000000u);
    return net;
}

static void test_sinr_prr_curve_is_sharp(void)
{
    /* a full TinyDB frame: ~0 below 7.5 dB, ~1 above 11 dB, a ~2 dB window between */
    CHECK(emu_radio_prr(7.5, 54) < 0.01);
    CHECK(emu_radio_prr(8.3, 54) > 0.05 && emu_radio_prr(8.3, 54) < 0.2);
    CHECK(emu_radio_prr(10.3, 54) > 0.85 && emu_radio_prr(10.3, 54) < 0.95);
    CHECK(emu_radio_prr(11.0, 54) > 0.97);
    CHECK(emu_radio_prr(9.0, 10) > emu_radio_prr(9.0, 54)); /* shorter frames survive more */
    CHECK(emu_radio_prr(-3.0, 54) == 0.0 || emu_radio_prr(-3.0, 54) < 1e-100);
}

static void test_sinr_capture_strong_frame_survives(void)
{
    /* at 1: 0 at -60 dBm (45 dB SNR), 2 at -95 dBm (10 dB: fine alone, see below) */
    static float dbm[4][4] = {
        {NO_LINK, -60.0f, NO_LINK}, {-60.0f, NO_LINK, -95.0f}, {NO_LINK, -95.0f, NO_LINK}};
    uint32_t seed, got_weak_alone = 0;
    for (seed = 1; seed <= 20; seed++) {
        emu_net *net = overlap_at_1(dbm, seed);
        CHECK(stub(net, 1)->received == 1 && stub(net, 1)->last_src == 0);
        CHECK(emu_net_counters(net, EMU_CNT_COLLIDED)[1] == 1); /* the weak one */
        CHECK(emu_net_counters(net, EMU_CNT_LOST)[1] == 0);
        emu_net_free(net);
    }
    for (seed = 1; seed <= 20; seed++) {
        emu_net *net = make(3, 0, seed);
        memset(stub_plans, 0, sizeof stub_plans);
        plan_send(2, 64, 0xFFFF, 49);
        power_links(net, 3, dbm);
        emu_net_boot(net);
        emu_net_run_until(net, 1000000u);
        got_weak_alone += stub(net, 1)->received;
        emu_net_free(net);
    }
    CHECK(got_weak_alone >= 14); /* PRR 0.84 at 10 dB */
}

static void test_sinr_equal_overlap_kills_both(void)
{
    static float dbm[4][4] = {
        {NO_LINK, -80.0f, NO_LINK}, {-80.0f, NO_LINK, -80.0f}, {NO_LINK, -80.0f, NO_LINK}};
    uint32_t seed;
    for (seed = 1; seed <= 20; seed++) {
        emu_net *net = overlap_at_1(dbm, seed);
        CHECK(stub(net, 1)->received == 0);
        CHECK(emu_net_counters(net, EMU_CNT_COLLIDED)[1] == 2);
        emu_net_free(net);
    }
}

static void test_sinr_later_stronger_frame_does_not_take_over(void)
{
    /* 1 locks on 0's frame (15 dB); 2's at -60 dBm then ruins it and is not received */
    static float dbm[4][4] = {
        {NO_LINK, -90.0f, NO_LINK}, {-90.0f, NO_LINK, -60.0f}, {NO_LINK, -60.0f, NO_LINK}};
    emu_net *net = overlap_at_1(dbm, 3);
    CHECK(stub(net, 1)->received == 0);
    CHECK(emu_net_counters(net, EMU_CNT_COLLIDED)[1] == 2);
    emu_net_free(net);
}

static void test_sinr_energy_carrier_sense_reaches_beyond_reception(void)
{
    /* 0 and 2 both reach 1 well. Between them: -100 dBm (5 dB SNR, above the 3 dB
     * carrier-sense threshold, no reception) makes them take turns; at -103 dBm (2 dB)
     * they do not sense each other and collide at 1. */
    float dbm[4][4] = {
        {NO_LINK, -70.0f, -100.0f}, {-70.0f, NO_LINK, -70.0f}, {-100.0f, -70.0f, NO_LINK}};
    uint32_t seed;
    for (seed = 1; seed <= 10; seed++) {
        emu_net *net = make(3, 0, seed);
        memset(stub_plans, 0, sizeof stub_plans);
        plan_send(0, 50, 0xFFFF, 49);
        plan_send(2, 50, 0xFFFF, 49);
        dbm[0][2] = dbm[2][0] = seed % 2 ? -100.0f : -103.0f;
        power_links(net, 3, dbm);
        emu_net_boot(net);
        emu_net_run_until(net, 1000000u);
        CHECK(stub(net, 0)->received == 0 && stub(net, 2)->received == 0);
        if (seed % 2) {
            CHECK(stub(net, 1)->received == 2);
            CHECK(emu_net_counters(net, EMU_CNT_BACKOFFS)[0] +
                      emu_net_counters(net, EMU_CNT_BACKOFFS)[2] >= 1);
        } else {
            CHECK(stub(net, 1)->received == 0);
            CHECK(emu_net_counters(net, EMU_CNT_COLLIDED)[1] == 2);
            CHECK(emu_net_counters(net, EMU_CNT_BACKOFFS)[0] +
                      emu_net_counters(net, EMU_CNT_BACKOFFS)[2] == 0);
        }
        emu_net_free(net);
    }
}

static void test_sinr_ack_follows_the_reverse_link(void)
{
    /* 1 -> 2 unicast at -70 dBm; the way back is -70 dBm (acked) or -104 dBm (1 dB: not) */
    float dbm[4][4] = {{NO_LINK, NO_LINK, NO_LINK}, {NO_LINK, NO_LINK, -70.0f},
                       {NO_LINK, -70.0f, NO_LINK}};
    int weak;
    for (weak = 0; weak < 2; weak++) {
        emu_net *net = make(3, 0, 5);
        memset(stub_plans, 0, sizeof stub_plans);
        plan_send(1, 10, 2, 0);
        dbm[2][1] = weak ? -104.0f : -70.0f;
        power_links(net, 3, dbm);
        emu_net_boot(net);
        emu_net_run_until(net, 1000000u);
        CHECK(stub(net, 2)->received == 1);
        CHECK(stub(net, 1)->send_done == 1 && stub(net, 1)->acked == !weak);
        emu_net_free(net);
    }
}

static void test_sinr_interference_sum_resets_to_zero(void)
{
    /* three hidden senders overlap at 3 with powers whose mW sum does not cancel exactly
     * in floating point; once the air is quiet the sum is exactly 0 again */
    static float dbm[4][4] = {{NO_LINK, NO_LINK, NO_LINK, -61.3f},
                                    {NO_LINK, NO_LINK, NO_LINK, -77.7f},
                                    {NO_LINK, NO_LINK, NO_LINK, -90.1f},
                                    {NO_LINK, NO_LINK, NO_LINK, NO_LINK}};
    double a = pow(10.0, -6.13), b = pow(10.0, -7.77), c = pow(10.0, -9.01);
    uint32_t i;
    emu_net *net = make(4, 0, 11);
    CHECK(((a + b + c) - a) - b - c != 0.0); /* the drift the reset removes */
    memset(stub_plans, 0, sizeof stub_plans);
    for (i = 0; i < 3; i++)
        plan_send(i, 50 + 3 * i, 0xFFFF, 49);
    power_links(net, 4, dbm);
    emu_net_boot(net);
    emu_net_run_until(net, 60000u);
    CHECK(net->medium.rx[3].on_air >= 2 && net->medium.rx[3].energy_mw > 0.0);
    emu_net_run_until(net, 1000000u);
    CHECK(net->medium.rx[3].on_air == 0);
    CHECK(net->medium.rx[3].energy_mw == 0.0);
    CHECK(stub(net, 3)->received == 1 && stub(net, 3)->last_src == 0); /* captured */
    emu_net_free(net);
}

static void test_sinr_dying_sender_leaves_the_air(void)
{
    static float dbm[4][4] = {
        {NO_LINK, -70.0f, NO_LINK}, {-70.0f, NO_LINK, -70.0f}, {NO_LINK, -70.0f, NO_LINK}};
    emu_net *net = make(3, 0, 2);
    memset(stub_plans, 0, sizeof stub_plans);
    plan_send(0, 50, 0xFFFF, 49);
    plan_send(2, 200, 0xFFFF, 0);
    power_links(net, 3, dbm);
    emu_net_boot(net);
    CHECK(emu_net_schedule_fault(net, 0, 58000u, 0) == 0); /* mid-frame */
    emu_net_run_until(net, 1000000u);
    CHECK(net->medium.rx[1].on_air == 0 && net->medium.rx[1].energy_mw == 0.0);
    CHECK(emu_net_counters(net, EMU_CNT_LOST)[1] == 1);
    CHECK(stub(net, 1)->received == 1 && stub(net, 1)->last_src == 2); /* not stuck locked */
    emu_net_free(net);
}

static void test_sinr_rejected_in_lossless_mode_or_with_thresholds_inverted(void)
{
    uint32_t row[3] = {0, 1, 2}, dst[2] = {1, 0};
    float prob[2] = {1.0f, 1.0f}, rx[2] = {-70.0f, -70.0f}, noise[2] = {-105.0f, -105.0f};
    emu_net *net = make(2, 1, 1);
    CHECK(emu_net_set_links(net, row, dst, prob) == 0);
    CHECK(emu_net_set_link_powers(net, rx, noise, LOCK_DB, CCA_DB) == -1);
    emu_net_free(net);
    net = make(2, 0, 1);
    CHECK(emu_net_set_links(net, row, dst, prob) == 0);
    /* a receiver could then be locked on a frame it does not sense, and send into it */
    CHECK(emu_net_set_link_powers(net, rx, noise, CCA_DB - 1.0, CCA_DB) == -1);
    CHECK(emu_net_set_link_powers(net, rx, noise, LOCK_DB, CCA_DB) == 0);
    emu_net_free(net);
}

int main(void)
{
    test_firmware_frame_time_matches_the_medium();
    test_broadcast_reaches_neighbours_only();
    test_hidden_terminals_collide();
    test_carrier_sense_serialises_neighbours();
    test_unicast_ack();
    test_refused_unicast_goes_unacknowledged();
    test_lossy_link_statistics();
    test_energy_is_phase_time_times_current();
    test_battery_depletion_kills();
    test_kill_and_revive();
    test_uart_round_trip();
    test_routing_reads_every_node();
    test_evq_orders_by_time_then_slot();
    test_evq_moves_its_base_for_far_deadlines();
    test_evq_agrees_with_a_sorted_reference();
    test_same_seed_same_run();
    test_sinr_prr_curve_is_sharp();
    test_sinr_capture_strong_frame_survives();
    test_sinr_equal_overlap_kills_both();
    test_sinr_later_stronger_frame_does_not_take_over();
    test_sinr_energy_carrier_sense_reaches_beyond_reception();
    test_sinr_ack_follows_the_reverse_link();
    test_sinr_interference_sum_resets_to_zero();
    test_sinr_dying_sender_leaves_the_air();
    test_sinr_rejected_in_lossless_mode_or_with_thresholds_inverted();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures != 0;
}
