/*
 * The wide (motebase, 32-bit) aggregate layout, 32-bit field arithmetic, and the
 * per-epoch windows of both layouts checked against a reference evaluation.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/processing.h"
#include "netsim.h"
#include "ops/agg.h"
#include "ops/arith.h"
#include "qmsg.h"

static long s32(const uint8_t *p)
{
    unsigned long u = (unsigned long)p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 |
                      (unsigned long)p[3] << 24;
    return u >= 0x80000000ul ? (long)(u - 0x80000000ul) - 0x7FFFFFFFl - 1 : (long)u;
}
static unsigned long u32(const uint8_t *p) { return (unsigned long)s32(p) & 0xFFFFFFFFul; }
static int u16(const uint8_t *p) { return p[0] | p[1] << 8; }

static void put32(uint8_t *p, unsigned long v)
{
    p[0] = (uint8_t)(v & 0xFF);
    p[1] = (uint8_t)(v >> 8 & 0xFF);
    p[2] = (uint8_t)(v >> 16 & 0xFF);
    p[3] = (uint8_t)(v >> 24 & 0xFF);
}

static qexpr agg(uint8_t op, uint8_t arg0, uint8_t arg1)
{
    qexpr e;
    memset(&e, 0, sizeof e);
    e.kind = agg_is_temporal(op, 1) ? QEXPR_TEMPORAL_AGG : QEXPR_AGG;
    e.op = op;
    e.u.agg.group_field = QUERY_NO_GROUP;
    e.u.agg.arg0 = arg0;
    e.u.agg.arg1 = arg1;
    return e;
}

static agg_ctx ctx(const qexpr *e, uint8_t wide, uint16_t self, uint16_t epoch)
{
    agg_ctx c;
    c.e = e;
    c.wide = wide;
    c.self = self;
    c.epoch = epoch;
    return c;
}

static void test_arith32(void)
{
    CHECK_EQ(arith_apply32(FOP_TIMES, 800, 100), 80000); /* narrow wraps: 14464 */
    CHECK_EQ(arith_apply(FOP_TIMES, 800, 100), 14464);
    CHECK_EQ(arith_apply32(FOP_TIMES, 65535, 32767), 2147385345L);
    CHECK_EQ(arith_apply32(FOP_TIMES, 70000, 32767), (long)(70000LL * 32767 - 4294967296LL));
    CHECK_EQ(arith_apply32(FOP_DIVIDE, -7, 2), -3);
    CHECK_EQ(arith_apply32(FOP_DIVIDE, 100000, 0), 100000);
    CHECK_EQ(arith_apply32(FOP_DIVIDE, INT32_MIN, -1), INT32_MIN);
    CHECK_EQ(arith_apply32(FOP_MOD, -17, 5), -2);
    CHECK_EQ(arith_apply32(FOP_MOD, INT32_MIN, -1), 0);
    CHECK_EQ(arith_apply32(FOP_MOD, 17, 0), 17);
    CHECK_EQ(arith_apply32(FOP_ADD, INT32_MAX, 1), INT32_MIN);
    CHECK_EQ(arith_apply32(FOP_SUBTRACT, 5, 70), -65);
    CHECK_EQ(arith_apply32(FOP_RSHIFT, -100001, 4), -6251); /* arithmetic: floor */
    CHECK_EQ(arith_apply32(FOP_RSHIFT, 100000, -1), 100000);
    CHECK_EQ(arith_apply32(FOP_RSHIFT, -5, 40), -1);
    CHECK_EQ(arith_apply32(FOP_NOOP, 123456, 9), 123456);
    CHECK(sel_compare(SEL_GT, 80000, 30000));
    CHECK(!sel_compare(SEL_GT, 14464, 30000));
}

static void test_sizes(void)
{
    static const struct {
        uint8_t op, a0, a1, narrow_wire, wide_wire, wide_ram;
    } t[] = {
        {AGG_SUM, 0, 0, 4, 4, 4},
        {AGG_COUNT, 0, 0, 4, 4, 4},
        {AGG_MIN, 0, 0, 4, 6, 6},
        {AGG_MAX, 0, 0, 4, 6, 6},
        {AGG_AVG, 0, 0, 4, 8, 8},
        {AGG_EXPAVG, 14, 0, 3, 8, 8},
        {AGG_WINSUM, 3, 1, 13, 4, 4 + 5 + 2 * 4 + 6},
        {AGG_WINCNT, 3, 1, 13, 4, 4 + 5 + 2 * 4 + 6},
        {AGG_WINMIN, 9, 1, 25, 6, 6 + 5 + 8 * 4 + 6},
        {AGG_WINMAX, 2, 4, 11, 6, 6 + 5 + 6},
        {AGG_WINAVG, 5, 1, 25, 8, AGG_RAM_MAX},
        {AGG_WINAVG, 8, 8, 13, 8, 8 + 5 + 6},
    };
    unsigned i;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        qexpr e = agg(t[i].op, t[i].a0, t[i].a1);
        CHECK_EQ(agg_wire_size(&e, 0), t[i].narrow_wire);
        CHECK_EQ(agg_wire_size(&e, 1), t[i].wide_wire);
        CHECK_EQ(agg_state_size(&e, 1), t[i].wide_ram);
        CHECK(agg_state_size(&e, 0) <= AGG_RAM_MAX && agg_state_size(&e, 1) <= AGG_RAM_MAX);
        CHECK(agg_wire_size(&e, 0) <= AGG_STATE_MAX);
    }
    CHECK(!agg_is_temporal(AGG_EXPAVG, 1));
    CHECK(agg_is_temporal(AGG_WINSUM, 1));
}

/* 100 children of light 800 and the node itself: SUM 80,800, past TinyDB's int16. */
static void test_wide_sum_and_count(void)
{
    uint8_t a[AGG_RAM_MAX], b[AGG_RAM_MAX], want[4];
    qexpr e = agg(AGG_SUM, 0, 0);
    agg_ctx root = ctx(&e, 1, 0, 1), child = ctx(&e, 1, 5, 1), narrow = ctx(&e, 0, 0, 1);
    int i;
    agg_init(a, &root);
    agg_update(a, &root, 800);
    for (i = 0; i < 100; i++) {
        agg_init(b, &child);
        agg_update(b, &child, 800);
        agg_merge(a, &root, b);
    }
    put32(want, 80800);
    CHECK_BYTES(a, want, 4);
    CHECK_EQ(agg_value(a, 1), 80800);
    CHECK(agg_epoch_has_data(a, &root));
    CHECK(!agg_end_epoch(a, &root));
    /* the same in the TinyDB layout wraps, as measured on real motes */
    agg_init(a, &narrow);
    agg_update(a, &narrow, 800);
    for (i = 0; i < 100; i++) {
        agg_init(b, &narrow);
        agg_update(b, &narrow, 800);
        agg_merge(a, &narrow, b);
    }
    CHECK_EQ(agg_value(a, 0), 80800 - 65536);
    /* negative sums too */
    agg_init(a, &root);
    agg_update(a, &root, -30000);
    agg_update(a, &root, -30000);
    CHECK_EQ(s32(a), -60000);
    /* COUNT: count u32, past 2^16 through merged records */
    e = agg(AGG_COUNT, 0, 0);
    agg_init(a, &root);
    agg_update(a, &root, 1234);
    put32(b, 70000);
    agg_merge(a, &root, b);
    agg_merge(a, &root, b);
    put32(want, 140001);
    CHECK_BYTES(a, want, 4);
    CHECK_EQ(agg_wire_size(&e, 1), 4);
}

static void test_wide_avg(void)
{
    uint8_t a[AGG_RAM_MAX], child[8], want[8];
    qexpr e = agg(AGG_AVG, 0, 0);
    agg_ctx c = ctx(&e, 1, 0, 1);
    agg_init(a, &c);
    agg_update(a, &c, 700);
    agg_update(a, &c, -100);
    /* a subtree that read 40,000 values averaging 500: sum 20,000,000, count 40,000 */
    put32(child, 20000000ul);
    put32(child + 4, 40000ul);
    agg_merge(a, &c, child);
    agg_merge(a, &c, child);
    put32(want, 40000600ul);
    put32(want + 4, 80002ul); /* past 2^16 readings */
    CHECK_BYTES(a, want, 8);
    CHECK_EQ(agg_value(a, 1), 40000600L);
    CHECK(!agg_end_epoch(a, &c));
}

static void test_wide_min_max_ids(void)
{
    uint8_t a[AGG_RAM_MAX], child[6];
    static const uint8_t init_min[6] = {0xFF, 0xFF, 0xFF, 0x7F, 0x40, 0x9C}; /* INT32_MAX, 40000 */
    static const uint8_t want_min[6] = {0xA0, 0x15, 0xFF, 0xFF, 0x2C, 0x01}; /* -60000, 300 */
    static const uint8_t want_max[6] = {0xA0, 0x86, 0x01, 0x00, 0x40, 0x9C}; /* 100000, 40000 */
    qexpr e = agg(AGG_MIN, 0, 0);
    agg_ctx c = ctx(&e, 1, 40000, 1); /* ids are uint16: 40000 is not negative */
    agg_init(a, &c);
    CHECK_BYTES(a, init_min, 6);
    agg_update(a, &c, -50000);
    CHECK_EQ(s32(a), -50000);
    CHECK_EQ(u16(a + 4), 40000);
    put32(child, (unsigned long)(-60000L) & 0xFFFFFFFFul);
    child[4] = 0x2C;
    child[5] = 0x01;
    agg_merge(a, &c, child);
    CHECK_BYTES(a, want_min, 6);
    put32(child, 10);
    agg_merge(a, &c, child); /* larger: kept */
    CHECK_BYTES(a, want_min, 6);
    e = agg(AGG_MAX, 0, 0);
    agg_init(a, &c);
    CHECK_EQ(s32(a), INT32_MIN);
    put32(child, 99999);
    agg_merge(a, &c, child);
    agg_update(a, &c, 100000);
    CHECK_BYTES(a, want_max, 6);
    CHECK_EQ(agg_wire_size(&e, 1), 6);
}

/* Wide EXPAVG sends the epoch's own {sum, count}; the gateway smooths. */
static void test_wide_expavg(void)
{
    uint8_t a[AGG_RAM_MAX], child[8], want[8];
    qexpr e = agg(AGG_EXPAVG, 14, 0);
    agg_ctx c = ctx(&e, 1, 1, 1);
    agg_init(a, &c);
    agg_update(a, &c, 400);
    put32(child, 33000);
    put32(child + 4, 2);
    agg_merge(a, &c, child);
    put32(want, 33400);
    put32(want + 4, 3);
    CHECK_BYTES(a, want, 8);
    CHECK(agg_epoch_has_data(a, &c));
    CHECK(!agg_end_epoch(a, &c)); /* per epoch, like AVG */
}

/* ---- windows against a reference: two nodes, readings with gaps ---- */

#define EPOCHS 14
#define ABSENT (-999999L)

typedef struct expect {
    int n;
    long sum, min, max;
    int min_id, max_id;
} expect;

/* What the window reported at epoch `end` must hold: readings of epochs end-w+1 .. end. */
static expect reference(const long own[2][EPOCHS + 1], int w, int end)
{
    expect x;
    int node, ep;
    memset(&x, 0, sizeof x);
    for (node = 0; node < 2; node++)
        for (ep = end - w + 1; ep <= end; ep++) {
            long v;
            if (ep < 1 || own[node][ep] == ABSENT)
                continue;
            v = own[node][ep];
            if (x.n == 0 || v < x.min) {
                x.min = v;
                x.min_id = node + 1;
            }
            if (x.n == 0 || v > x.max) {
                x.max = v;
                x.max_id = node + 1;
            }
            x.sum += v;
            x.n++;
        }
    return x;
}

static long value_of(const uint8_t *p, uint8_t wide) { return wide ? s32(p) : (int16_t)u16(p); }

static void check_window(uint8_t op, int w, int s, uint8_t wide, const long own[2][EPOCHS + 1])
{
    uint8_t parent[AGG_RAM_MAX], child[AGG_RAM_MAX], record[AGG_STATE_MAX];
    qexpr e = agg(op, (uint8_t)w, (uint8_t)s);
    agg_ctx cp = ctx(&e, wide, 1, 1), cc = ctx(&e, wide, 2, 1);
    uint8_t vw = wide ? 4 : 2, size = agg_wire_size(&e, wide);
    int ep, reports = 0, fails = check_failures;
    agg_init(parent, &cp);
    agg_init(child, &cc);
    for (ep = 1; ep <= EPOCHS; ep++) {
        expect x = reference(own, w, ep);
        uint8_t child_reports, reported;
        cp.epoch = cc.epoch = (uint16_t)ep;
        if (own[0][ep] != ABSENT)
            agg_update(parent, &cp, (int32_t)own[0][ep]);
        if (own[1][ep] != ABSENT)
            agg_update(child, &cc, (int32_t)own[1][ep]);
        child_reports = agg_epoch_has_data(child, &cc);
        if (child_reports) {
            memset(record, 0xEE, sizeof record);
            memcpy(record, child, agg_wire_size(&e, wide));
            agg_merge(parent, &cp, record);
        }
        agg_end_epoch(child, &cc);
        reported = agg_epoch_has_data(parent, &cp);
        CHECK_EQ(reported, ep % s == 0 && x.n > 0);
        if (reported) {
            reports++;
            switch (op) {
            case AGG_WINSUM:
                CHECK_EQ(value_of(parent, wide), x.sum);
                break;
            case AGG_WINCNT:
                CHECK_EQ(value_of(parent, wide), x.n);
                break;
            case AGG_WINMIN:
                CHECK_EQ(value_of(parent, wide), x.min);
                CHECK_EQ(u16(parent + vw), x.min_id);
                break;
            case AGG_WINMAX:
                CHECK_EQ(value_of(parent, wide), x.max);
                CHECK_EQ(u16(parent + vw), x.max_id);
                break;
            default: /* WINAVG: sum, count */
                CHECK_EQ(value_of(parent, wide), x.sum);
                CHECK_EQ(wide ? (long)u32(parent + 4) : (long)u16(parent + 2), x.n);
                break;
            }
            if (!wide) { /* TinyDB's meta: reported with epochsLeft 0, ring size w - s or 1 */
                CHECK_EQ(parent[8], 0);
                CHECK_EQ(parent[6], w > s ? w - s : 1);
            }
        }
        agg_end_epoch(parent, &cp);
    }
    CHECK(reports > 0);
    CHECK(size > 0);
    if (check_failures != fails)
        fprintf(stderr, "  ... in op %d (%d, %d) %s\n", op, w, s, wide ? "wide" : "narrow");
}

static void test_windows_against_reference(void)
{
    /* parent and child: wide values far past int16, epochs without readings (a WHERE that
     * failed), a stretch where nobody reads (epochs 8..10) */
    static const long wide_own[2][EPOCHS + 1] = {
        {0, 40001, ABSENT, 50003, 60005, ABSENT, -70007, 80009, ABSENT, ABSENT, ABSENT, 90011,
         ABSENT, 100013, 110015},
        {0, ABSENT, 45002, 55004, ABSENT, 65006, ABSENT, -75008, ABSENT, ABSENT, ABSENT, ABSENT,
         95012, ABSENT, 115016},
    };
    static const long narrow_own[2][EPOCHS + 1] = {
        {0, 401, ABSENT, 503, 605, ABSENT, -707, 809, ABSENT, ABSENT, ABSENT, 911, ABSENT, 1013,
         1115},
        {0, ABSENT, 452, 554, ABSENT, 656, ABSENT, -758, ABSENT, ABSENT, ABSENT, ABSENT, 962,
         ABSENT, 1116},
    };
    static const uint8_t ops[5] = {AGG_WINSUM, AGG_WINCNT, AGG_WINMIN, AGG_WINMAX, AGG_WINAVG};
    static const int ws[][2] = {{1, 1}, {3, 1}, {4, 2}, {5, 1}, {2, 3}, {3, 3}, {1, 4}, {6, 4}};
    unsigned i, k;
    uint8_t wide;
    for (wide = 0; wide <= 1; wide++)
        for (i = 0; i < 5; i++)
            for (k = 0; k < sizeof ws / sizeof ws[0]; k++)
                if (agg_check(ops[i], (uint8_t)ws[k][0], (uint8_t)ws[k][1]) == AGG_OK)
                    check_window(ops[i], ws[k][0], ws[k][1], wide, wide ? wide_own : narrow_own);
}

/* A window reports nothing, and frees its slot, once its epochs hold no readings. */
static void test_window_goes_quiet(void)
{
    uint8_t a[AGG_RAM_MAX];
    qexpr e = agg(AGG_WINAVG, 3, 1);
    agg_ctx c = ctx(&e, 1, 1, 1);
    uint16_t ep;
    agg_init(a, &c);
    agg_update(a, &c, 100000);
    for (ep = 1; ep <= 5; ep++) {
        c.epoch = ep;
        CHECK_EQ(agg_epoch_has_data(a, &c), ep <= 3);
        CHECK_EQ(agg_end_epoch(a, &c), ep <= 2);
    }
}

/* ---- whole nodes: a chain 0-1-2 in the wide layout ---- */

static sim s;

#define QR(p) ((p) + TOS_HEADER_LEN + MHOP_HEADER_LEN)


/* Run until every node runs query qid. */
static int installed(int qid)
{
    int i, all = 0;
    while (!all && s.now < 200000) {
        sim_run(&s, s.now + 100);
        for (all = 1, i = 0; i < s.n; i++)
            all = all && mote_query_status(&s.node[i].st, (uint8_t)qid) == QUERY_RUNNING;
    }
    return all;
}

/* Send SELECT SUM(light * 100) WHERE light * 100 > 30000 as query qid; `wide` adds
 * motebase's trailer with its flag, as the gateway does for a motebase root. */
static void send_sum_query(int qid, int wide)
{
    uint8_t f[49], sel[49], sum[49];
    uint8_t *parts[3];
    int i;
    memset(f, 0, sizeof f);
    memset(sel, 0, sizeof sel);
    memset(sum, 0, sizeof sum);
    t_field(f, qid, 1, 2, 100, 0, "light");
    t_sel(sel, qid, 1, 2, 100, 0, 0, SEL_GT, 30000, FOP_TIMES, 100);
    t_agg(sum, qid, 1, 2, 100, 1, AGG_SUM, 0, 0xFFFF, 0, 0, 0, 0, FOP_TIMES, 100);
    parts[0] = f;
    parts[1] = sel;
    parts[2] = sum;
    for (i = 0; i < 3; i++) {
        if (wide)
            t_trailer(parts[i], 0x01, 0);
        sim_uart_to_root(&s, parts[i], wide ? T_QMSG_TRAILED_LEN : T_QMSG_LEN, AM_QUERY);
    }
}

/*
 * 800 * 100 wraps to 14464 in TinyDB's int16 and fails the selection; in 32 bits it
 * passes and the sum of the three nodes reaches 210,000.
 */
static void test_wide_nodes(void)
{
    int i, n, found = 0;
    sim_init(&s, 3);
    sim_link(&s, 0, 1);
    sim_link(&s, 1, 2);
    s.node[0].sensor[ATTR_LIGHT] = 800;
    s.node[1].sensor[ATTR_LIGHT] = 700;
    s.node[2].sensor[ATTR_LIGHT] = 600;
    sim_run(&s, 20000);
    send_sum_query(5, 0);
    CHECK(installed(5));
    sim_run(&s, s.now + 9000);
    for (i = 0; i < s.n_out; i++) /* narrow: the selection never holds, nothing to report */
        CHECK(!(s.out[i][2] == AM_DATA && QR(s.out[i])[0] == 5));
    send_sum_query(6, 1);
    CHECK(installed(6));
    n = s.n_out;
    sim_run(&s, s.now + 10000);
    for (i = n; i < s.n_out; i++) {
        const uint8_t *qr = QR(s.out[i]);
        int k;
        if (!(s.out[i][2] == AM_DATA && qr[0] == 6 && qr[4] == QR_AGG_RECORD))
            continue;
        found++;
        CHECK_EQ(u16(qr + QR_OFF_GROUP), 0);
        CHECK_EQ(qr[QR_OFF_EXPR], 1);
        CHECK_EQ(s32(qr + QR_OFF_STATE), 210000);
        for (k = QR_OFF_STATE + 4; k < (int)QR_LEN; k++)
            CHECK_EQ(qr[k], 0);
    }
    CHECK(found >= 4);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_arith32();
    test_sizes();
    test_wide_sum_and_count();
    test_wide_avg();
    test_wide_min_max_ids();
    test_wide_expavg();
    test_windows_against_reference();
    test_window_goes_quiet();
    test_wide_nodes();
    return check_report(argv[0]);
}
