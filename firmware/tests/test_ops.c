/* Operators: arithmetic, selections, every aggregate's update/merge/wire state, groups, snooping. */
#include <string.h>

#include "check.h"
#include "ops/agg.h"
#include "ops/arith.h"
#include "ops/groups.h"
#include "ops/snoop.h"

static int s16(const uint8_t *p) { return (int16_t)(p[0] | p[1] << 8); }
static int u16(const uint8_t *p) { return p[0] | p[1] << 8; }

static qexpr agg(uint8_t op, uint8_t arg0, uint8_t arg1)
{
    qexpr e;
    memset(&e, 0, sizeof e);
    e.kind = agg_is_temporal(op, 0) ? QEXPR_TEMPORAL_AGG : QEXPR_AGG;
    e.op = op;
    e.u.agg.group_field = QUERY_NO_GROUP;
    e.u.agg.arg0 = arg0;
    e.u.agg.arg1 = arg1;
    return e;
}

/* Narrow (TinyDB layout) context of node `self` in `epoch`. */
static agg_ctx nctx(const qexpr *e, uint16_t self, uint16_t epoch)
{
    agg_ctx c;
    c.e = e;
    c.wide = 0;
    c.self = self;
    c.epoch = epoch;
    return c;
}

static void test_arith(void)
{
    CHECK_EQ(arith_apply(FOP_NOOP, 7, 3), 7);
    CHECK_EQ(arith_apply(FOP_TIMES, 300, 200), (int16_t)(60000 - 65536));
    CHECK_EQ(arith_apply(FOP_DIVIDE, -7, 2), -3);
    CHECK_EQ(arith_apply(FOP_DIVIDE, 7, 0), 7);
    CHECK_EQ(arith_apply(FOP_ADD, 32767, 1), -32768);
    CHECK_EQ(arith_apply(FOP_SUBTRACT, 5, 9), -4);
    CHECK_EQ(arith_apply(FOP_MOD, 17, 5), 2);
    CHECK_EQ(arith_apply(FOP_MOD, 17, 0), 17);
    CHECK_EQ(arith_apply(FOP_RSHIFT, 1024, 2), 256);
    CHECK_EQ(arith_apply(FOP_RSHIFT, -5, 1), -3);
    CHECK_EQ(arith_apply(FOP_DIVIDE, -32768, -1), -32768);
}

static void test_selections(void)
{
    const uint8_t abc[4] = {'a', 'b', 'c', 0}, abd[4] = {'a', 'b', 'd', 0};
    CHECK(sel_compare(SEL_EQ, 5, 5) && !sel_compare(SEL_EQ, 5, 6));
    CHECK(sel_compare(SEL_NEQ, 5, 6) && !sel_compare(SEL_NEQ, 5, 5));
    CHECK(sel_compare(SEL_GT, 6, 5) && !sel_compare(SEL_GT, 5, 5));
    CHECK(sel_compare(SEL_GE, 5, 5) && !sel_compare(SEL_GE, 4, 5));
    CHECK(sel_compare(SEL_LT, -1, 0) && !sel_compare(SEL_LT, 0, 0));
    CHECK(sel_compare(SEL_LE, 0, 0) && !sel_compare(SEL_LE, 1, 0));
    CHECK(!sel_compare(6, 1, 1));
    CHECK(sel_string(SEL_EQ, "abc", abc, 4));
    CHECK(!sel_string(SEL_EQ, "abc", abd, 4));
    CHECK(sel_string(SEL_NEQ, "abc", abd, 4));
    /* constant < field -> GT/GE true; constant > field -> LT/LE true (§8.1) */
    CHECK(sel_string(SEL_GT, "abc", abd, 4) && sel_string(SEL_GE, "abc", abd, 4));
    CHECK(sel_string(SEL_LT, "abd", abc, 4) && sel_string(SEL_LE, "abd", abc, 4));
    CHECK(sel_string(SEL_LE, "abc", abc, 4) && !sel_string(SEL_LT, "abc", abc, 4));
}

static void test_plain_aggregates(void)
{
    uint8_t a[AGG_RAM_MAX], b[AGG_RAM_MAX];
    qexpr e;
    agg_ctx ca, cb;
    /* MIN: init 0x7FFF/self; keeps smaller with its holder */
    e = agg(AGG_MIN, 0, 0);
    ca = nctx(&e, 9, 1);
    cb = nctx(&e, 4, 1);
    CHECK_EQ(agg_state_size(&e, 0), 4);
    CHECK_EQ(agg_wire_size(&e, 0), 4);
    agg_init(a, &ca);
    CHECK_EQ(s16(a), 32767);
    CHECK_EQ(s16(a + 2), 9);
    agg_update(a, &ca, 40);
    agg_init(b, &cb);
    agg_update(b, &cb, 30);
    agg_merge(a, &ca, b);
    CHECK_EQ(s16(a), 30);
    CHECK_EQ(s16(a + 2), 4);
    agg_update(a, &ca, 35);
    CHECK_EQ(s16(a), 30);
    /* MAX */
    e = agg(AGG_MAX, 0, 0);
    ca = nctx(&e, 2, 1);
    cb = nctx(&e, 3, 1);
    agg_init(a, &ca);
    CHECK_EQ(s16(a), -32768);
    agg_update(a, &ca, -5);
    agg_init(b, &cb);
    agg_update(b, &cb, 700);
    agg_merge(a, &ca, b);
    CHECK_EQ(s16(a), 700);
    CHECK_EQ(s16(a + 2), 3);
    CHECK(agg_epoch_has_data(a, &ca));
    CHECK(!agg_end_epoch(a, &ca)); /* not carried over: the slot is initialised again */
    /* SUM: wraps at 16 bits as on the mote */
    e = agg(AGG_SUM, 0, 0);
    ca = nctx(&e, 2, 1);
    cb = nctx(&e, 3, 1);
    agg_init(a, &ca);
    agg_update(a, &ca, 100);
    agg_update(a, &ca, -30);
    agg_init(b, &cb);
    agg_update(b, &cb, 5);
    agg_merge(a, &ca, b);
    CHECK_EQ(s16(a), 75);
    CHECK_EQ(s16(a + 2), 0);
    agg_update(a, &ca, 32767);
    CHECK_EQ(s16(a), 75 + 32767 - 65536);
    CHECK_EQ(agg_value(a, 0), 75 + 32767 - 65536);
    /* COUNT (CNT, id 4) */
    e = agg(AGG_COUNT, 0, 0);
    ca = nctx(&e, 2, 1);
    cb = nctx(&e, 3, 1);
    agg_init(a, &ca);
    agg_update(a, &ca, 999);
    agg_init(b, &cb);
    agg_update(b, &cb, 1);
    agg_update(b, &cb, 1);
    agg_merge(a, &ca, b);
    CHECK_EQ(s16(a), 3);
    /* AVG: sum i16, count u16 */
    e = agg(AGG_AVG, 0, 0);
    ca = nctx(&e, 2, 1);
    cb = nctx(&e, 3, 1);
    agg_init(a, &ca);
    agg_update(a, &ca, 10);
    agg_update(a, &ca, 20);
    agg_init(b, &cb);
    agg_update(b, &cb, 60);
    agg_merge(a, &ca, b);
    CHECK_EQ(s16(a), 90);
    CHECK_EQ(u16(a + 2), 3);
    CHECK(!agg_end_epoch(a, &ca));
}

static void test_expavg(void)
{
    uint8_t a[AGG_RAM_MAX];
    qexpr e = agg(AGG_EXPAVG, 14, 0); /* b = 16 - 14 = 2: value += (v - value) / 4 */
    agg_ctx c = nctx(&e, 1, 1);
    CHECK_EQ(agg_state_size(&e, 0), 3);
    CHECK_EQ(agg_wire_size(&e, 0), 3);
    CHECK(agg_is_temporal(AGG_EXPAVG, 0));
    agg_init(a, &c);
    agg_update(a, &c, 400);
    CHECK_EQ(s16(a), 100);
    agg_update(a, &c, 400);
    CHECK_EQ(s16(a), 175);
    CHECK(agg_end_epoch(a, &c)); /* carries over */
    CHECK_EQ(s16(a), 175);
    c.epoch = 2;
    CHECK(agg_epoch_has_data(a, &c));
}

/*
 * Run one window state over epochs 1..n with the node's own reading `own[ep]`
 * (NONE: no reading that epoch, e.g. its WHERE failed); returns how many records
 * it reported, their epochs and first values in `at` / `value`.
 */
#define NONE (-99999)

static int run_window(uint8_t *st, const qexpr *e, const long *own, int n, int *at, long *value)
{
    int reports = 0;
    uint16_t ep;
    agg_ctx c = nctx(e, 1, 1);
    agg_init(st, &c);
    for (ep = 1; ep <= n; ep++) {
        c.epoch = ep;
        if (own[ep] != NONE)
            agg_update(st, &c, (int32_t)own[ep]);
        if (agg_epoch_has_data(st, &c)) {
            at[reports] = ep;
            value[reports++] = agg_value(st, 0);
        }
        agg_end_epoch(st, &c);
    }
    return reports;
}

static void test_windows(void)
{
    uint8_t a[AGG_RAM_MAX], b[AGG_RAM_MAX];
    int at[8], n;
    long value[8];
    uint16_t ep;
    qexpr e;
    agg_ctx ca, cb;
    static const long ramp[7] = {0, 1000, 2000, 3000, 4000, 5000, 6000};
    /* epoch 2 and 3 have no reading (WHERE failed): they still age the window */
    static const long gaps[9] = {0, 10, NONE, NONE, 40, 50, NONE, 70, 80};

    /* WINSUM over 3 epochs, reported every epoch: ring of w - s = 2 per-epoch int16 */
    e = agg(AGG_WINSUM, 3, 1);
    CHECK_EQ(agg_wire_size(&e, 0), 9 + 2 * 2);
    CHECK_EQ(agg_state_size(&e, 0), 9 + 2 * 2 + 6);
    n = run_window(a, &e, ramp, 5, at, value);
    CHECK_EQ(n, 5);
    CHECK_EQ(value[0], 1000);
    CHECK_EQ(value[1], 3000);
    CHECK_EQ(value[2], 6000);
    CHECK_EQ(value[3], 9000); /* 16-bit values survive (not A13) */
    CHECK_EQ(value[4], 12000);
    CHECK_EQ(a[4 + 2], 2);                 /* size */
    CHECK_EQ(a[4 + 3], 2);                 /* nvals */
    CHECK_EQ(s16(a + 9 + 2 * a[4]), 4000); /* oldest entry at head: epochs 4, 5 carry over */
    /* the same with gaps: windows are epochs, not readings */
    n = run_window(a, &e, gaps, 8, at, value);
    CHECK_EQ(n, 8); /* every window 3 epochs wide holds a reading here ... */
    CHECK_EQ(at[0], 1);
    CHECK_EQ(value[0], 10);
    CHECK_EQ(at[1], 2);
    CHECK_EQ(value[1], 10); /* 0..2 */
    CHECK_EQ(at[2], 3);
    CHECK_EQ(value[2], 10); /* 1..3 */
    CHECK_EQ(at[3], 4);
    CHECK_EQ(value[3], 40); /* 2..4: epoch 1 has aged out */
    CHECK_EQ(value[4], 90);  /* 3..5 */
    CHECK_EQ(value[5], 90);  /* 4..6 */
    CHECK_EQ(value[6], 120); /* 5..7 */
    CHECK_EQ(value[7], 150); /* 6..8 */
    /* ... but a window of epochs without readings reports nothing */
    e = agg(AGG_WINSUM, 1, 1);
    n = run_window(a, &e, gaps, 8, at, value);
    CHECK_EQ(n, 5);
    CHECK_EQ(at[1], 4);
    CHECK_EQ(at[3], 7);

    /* WINAVG 4 epochs, slide 2: reported at epochs 2, 4, 6, ring of 2 {sum, count} */
    e = agg(AGG_WINAVG, 4, 2);
    CHECK_EQ(agg_wire_size(&e, 0), 9 + 4 * 2);
    n = run_window(a, &e, ramp, 6, at, value);
    CHECK_EQ(n, 3);
    CHECK_EQ(at[0], 2);
    CHECK_EQ(value[0], 3000); /* 1000 + 2000 */
    CHECK_EQ(at[1], 4);
    CHECK_EQ(value[1], 10000); /* epochs 1..4 */
    CHECK_EQ(value[2], 18000); /* epochs 3..6 */
    CHECK_EQ(u16(a + 2), 2);   /* after the restart: epochs 5, 6 open the next window */

    /* w < s: only the last w epochs of each slide count */
    e = agg(AGG_WINSUM, 2, 3);
    CHECK_EQ(agg_wire_size(&e, 0), 9 + 2); /* TinyDB's one unused entry */
    n = run_window(a, &e, ramp, 6, at, value);
    CHECK_EQ(n, 2);
    CHECK_EQ(at[0], 3);
    CHECK_EQ(value[0], 5000); /* epochs 2, 3 */
    CHECK_EQ(at[1], 6);
    CHECK_EQ(value[1], 11000); /* epochs 5, 6 */
    CHECK_EQ(a[4 + 3], 0);     /* nvals: that ring is never pushed */
    /* w < s whose counted epochs have no reading: nothing */
    e = agg(AGG_WINSUM, 1, 3);
    n = run_window(a, &e, gaps, 8, at, value);
    CHECK_EQ(n, 0);

    /* WINMAX merge folds the child's window value into the open window only */
    e = agg(AGG_WINMAX, 2, 1);
    ca = nctx(&e, 1, 1);
    cb = nctx(&e, 2, 1);
    agg_init(a, &ca);
    agg_update(a, &ca, 50);
    agg_init(b, &cb);
    agg_update(b, &cb, 80);
    agg_merge(a, &ca, b);
    CHECK_EQ(s16(a), 80);
    CHECK_EQ(s16(a + 2), 2);
    CHECK_EQ(a[4 + 3], 1);
    CHECK(agg_epoch_has_data(a, &ca));
    CHECK(agg_end_epoch(a, &ca));
    CHECK_EQ(s16(a), 50); /* the next window starts from our own epoch 1 */
    CHECK_EQ(s16(a + 2), 1);
    /* a child's window alone reports; then the state empties and may be released */
    e = agg(AGG_WINSUM, 1, 1);
    ca = nctx(&e, 1, 5);
    agg_init(a, &ca);
    agg_merge(a, &ca, b);
    CHECK(agg_epoch_has_data(a, &ca));
    CHECK(!agg_end_epoch(a, &ca));
    /* WINMIN / WINCNT */
    e = agg(AGG_WINMIN, 2, 1);
    ca = nctx(&e, 1, 1);
    agg_init(a, &ca);
    agg_update(a, &ca, 50);
    agg_update(a, &ca, -7);
    CHECK_EQ(s16(a), -7);
    e = agg(AGG_WINCNT, 3, 1);
    ca = nctx(&e, 1, 1);
    agg_init(a, &ca);
    for (ep = 1; ep <= 4; ep++) {
        ca.epoch = ep;
        agg_update(a, &ca, 123);
        if (agg_epoch_has_data(a, &ca))
            value[0] = s16(a);
        agg_end_epoch(a, &ca);
    }
    CHECK_EQ(value[0], 3);
    /* skipped epochs (an adopted epoch jump): the missed report's window is dropped */
    e = agg(AGG_WINSUM, 4, 2);
    ca = nctx(&e, 1, 1);
    agg_init(a, &ca);
    agg_update(a, &ca, 7);
    ca.epoch = 7; /* 2..6 never happened here */
    agg_update(a, &ca, 5);
    ca.epoch = 8;
    CHECK(agg_epoch_has_data(a, &ca));
    CHECK_EQ(s16(a), 5); /* window 5..8 */
    /* tumbling window w = s = 2: ring of one entry, never pushed */
    e = agg(AGG_WINSUM, 2, 2);
    CHECK_EQ(agg_wire_size(&e, 0), 11);
    /* bounds */
    CHECK_EQ(agg_check(AGG_WINAVG, 5, 1), AGG_OK);
    CHECK_EQ(agg_check(AGG_WINAVG, 6, 1), AGG_WINDOW_TOO_LARGE);
    CHECK_EQ(agg_check(AGG_WINSUM, 9, 1), AGG_OK);
    CHECK_EQ(agg_check(AGG_WINSUM, 10, 1), AGG_WINDOW_TOO_LARGE);
    CHECK_EQ(agg_check(AGG_WINSUM, 200, 200), AGG_OK);
    CHECK_EQ(agg_check(AGG_WINSUM, 0, 1), AGG_WINDOW_TOO_LARGE); /* no epochs */
    CHECK_EQ(agg_check(AGG_WINMAX, 3, 0), AGG_WINDOW_TOO_LARGE); /* never slides */
    CHECK_EQ(agg_check(AGG_EXPAVG, 0, 0), AGG_OK);
    CHECK_EQ(agg_check(12, 2, 1), AGG_UNSUPPORTED);
    e = agg(15, 2, 1);
    CHECK_EQ(agg_state_size(&e, 0), 0);
    CHECK_EQ(agg_wire_size(&e, 1), 0);
}

static void test_groups(void)
{
    group_table g;
    uint8_t tab[1 + 2 * GROUPS_SLOT_BYTES]; /* at an odd offset: byte-addressed */
    uint8_t *t = tab + 1, fresh, i;
    groups_reset(&g, t, 2);
    CHECK_EQ(groups_claim(&g, t, 5, &fresh), 0);
    CHECK_EQ(fresh, 1);
    CHECK_EQ(groups_claim(&g, t, 5, &fresh), 0);
    CHECK_EQ(fresh, 0);
    CHECK_EQ(groups_claim(&g, t, -3, &fresh), 1);
    CHECK_EQ(groups_no(t, 1), -3);
    CHECK_EQ(t[4], 0xFD); /* little-endian int16 */
    groups_set_live(t, 0, 1);
    groups_set_live(t, 1, 0x8001u);
    CHECK_EQ(groups_live(t, 1), 0x8001u);
    CHECK_EQ(groups_has_room(&g, t, 9), 0);
    CHECK_EQ(groups_has_room(&g, t, -3), 1); /* it has its slot */
    CHECK_EQ(groups_claim(&g, t, 9, &fresh), GROUPS_NONE);
    groups_set_live(t, 1, 0); /* an empty slot is reused */
    CHECK_EQ(groups_has_room(&g, t, 9), 1);
    CHECK_EQ(groups_find(&g, t, 9), GROUPS_NONE); /* asking claims nothing */
    i = groups_claim(&g, t, 9, &fresh);
    CHECK_EQ(i, 1);
    CHECK_EQ(groups_find(&g, t, -3), GROUPS_NONE);
    CHECK_EQ(groups_find(&g, t, 9), 1);
}

static void test_snoop(void)
{
    uint8_t mine[4] = {100, 0, 1, 0}, big[4] = {200, 0, 2, 0}, small[4] = {50, 0, 3, 0};
    /* wide: value i32, id u16; 70000 > 65536 + 100 must not compare as 4464 */
    uint8_t wmine[6] = {0x70, 0x11, 0x01, 0, 1, 0}, wbig[6] = {0x00, 0, 0x02, 0, 2, 0};
    uint8_t wneg[6] = {0xFF, 0xFF, 0xFF, 0xFF, 3, 0};
    CHECK(snoop_dominates(AGG_MAX, 0, mine, big));
    CHECK(!snoop_dominates(AGG_MAX, 0, mine, small));
    CHECK(snoop_dominates(AGG_MAX, 0, mine, mine));
    CHECK(snoop_dominates(AGG_MIN, 0, mine, small));
    CHECK(!snoop_dominates(AGG_MIN, 0, mine, big));
    CHECK(!snoop_dominates(AGG_SUM, 0, mine, big));
    CHECK(snoop_dominates(AGG_MAX, 1, wmine, wbig)); /* 131072 >= 70000 */
    CHECK(!snoop_dominates(AGG_MAX, 0, wmine, wbig)); /* narrow reads 0x1170 vs 0 */
    CHECK(snoop_dominates(AGG_MIN, 1, wmine, wneg));
    CHECK(!snoop_dominates(AGG_MAX, 1, wmine, wneg));
}

int main(int argc, char **argv)
{
    (void)argc;
    test_arith();
    test_selections();
    test_plain_aggregates();
    test_expavg();
    test_windows();
    test_groups();
    test_snoop();
    return check_report(argv[0]);
}
