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
    e.kind = agg_is_temporal(op) ? QEXPR_TEMPORAL_AGG : QEXPR_AGG;
    e.op = op;
    e.u.agg.group_field = QUERY_NO_GROUP;
    e.u.agg.arg0 = arg0;
    e.u.agg.arg1 = arg1;
    return e;
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
    uint8_t a[AGG_STATE_MAX], b[AGG_STATE_MAX];
    qexpr e;
    /* MIN: init 0x7FFF/self; keeps smaller with its holder */
    e = agg(AGG_MIN, 0, 0);
    CHECK_EQ(agg_state_size(&e), 4);
    agg_init(a, &e, 9, 1);
    CHECK_EQ(s16(a), 32767);
    CHECK_EQ(s16(a + 2), 9);
    agg_update(a, &e, 40, 9);
    agg_init(b, &e, 4, 1);
    agg_update(b, &e, 30, 4);
    agg_merge(a, &e, b);
    CHECK_EQ(s16(a), 30);
    CHECK_EQ(s16(a + 2), 4);
    agg_update(a, &e, 35, 9);
    CHECK_EQ(s16(a), 30);
    /* MAX */
    e = agg(AGG_MAX, 0, 0);
    agg_init(a, &e, 2, 1);
    CHECK_EQ(s16(a), -32768);
    agg_update(a, &e, -5, 2);
    agg_init(b, &e, 3, 1);
    agg_update(b, &e, 700, 3);
    agg_merge(a, &e, b);
    CHECK_EQ(s16(a), 700);
    CHECK_EQ(s16(a + 2), 3);
    CHECK(agg_epoch_has_data(a, &e, 1));
    agg_end_epoch(a, &e, 2);
    CHECK_EQ(s16(a), -32768);
    /* SUM */
    e = agg(AGG_SUM, 0, 0);
    agg_init(a, &e, 2, 1);
    agg_update(a, &e, 100, 2);
    agg_update(a, &e, -30, 2);
    agg_init(b, &e, 3, 1);
    agg_update(b, &e, 5, 3);
    agg_merge(a, &e, b);
    CHECK_EQ(s16(a), 75);
    CHECK_EQ(s16(a + 2), 0);
    /* COUNT (CNT, id 4) */
    e = agg(AGG_COUNT, 0, 0);
    agg_init(a, &e, 2, 1);
    agg_update(a, &e, 999, 2);
    agg_init(b, &e, 3, 1);
    agg_update(b, &e, 1, 3);
    agg_update(b, &e, 1, 3);
    agg_merge(a, &e, b);
    CHECK_EQ(s16(a), 3);
    /* AVG: sum i16, count u16 */
    e = agg(AGG_AVG, 0, 0);
    agg_init(a, &e, 2, 1);
    agg_update(a, &e, 10, 2);
    agg_update(a, &e, 20, 2);
    agg_init(b, &e, 3, 1);
    agg_update(b, &e, 60, 3);
    agg_merge(a, &e, b);
    CHECK_EQ(s16(a), 90);
    CHECK_EQ(u16(a + 2), 3);
    agg_end_epoch(a, &e, 2);
    CHECK_EQ(s16(a), 0);
    CHECK_EQ(u16(a + 2), 0);
}

static void test_expavg(void)
{
    uint8_t a[AGG_STATE_MAX];
    qexpr e = agg(AGG_EXPAVG, 14, 0); /* b = 16 - 14 = 2: value += (v - value) / 4 */
    CHECK_EQ(agg_state_size(&e), 3);
    agg_init(a, &e, 1, 1);
    agg_update(a, &e, 400, 1);
    CHECK_EQ(s16(a), 100);
    agg_update(a, &e, 400, 1);
    CHECK_EQ(s16(a), 175);
    agg_end_epoch(a, &e, 1); /* carries over */
    CHECK_EQ(s16(a), 175);
    CHECK(agg_epoch_has_data(a, &e, 2));
}

static void test_windows(void)
{
    uint8_t a[AGG_STATE_MAX], b[AGG_STATE_MAX];
    uint16_t ep;
    int reported[6], n = 0;
    /* WINSUM over 3 epochs, reported every epoch: ring of w - s = 2 int16 values */
    qexpr e = agg(AGG_WINSUM, 3, 1);
    CHECK_EQ(agg_state_size(&e), 9 + 2 * 2);
    agg_init(a, &e, 1, 1);
    CHECK_EQ(a[6], 2); /* size */
    for (ep = 1; ep <= 5; ep++) {
        agg_update(a, &e, (int16_t)(1000 * ep), 1); /* 16-bit values survive (not A13) */
        if (agg_epoch_has_data(a, &e, ep))
            reported[n++] = s16(a);
        agg_end_epoch(a, &e, 1);
    }
    CHECK_EQ(n, 5);
    CHECK_EQ(reported[0], 1000);
    CHECK_EQ(reported[1], 3000);
    CHECK_EQ(reported[2], 6000);
    CHECK_EQ(reported[3], 9000);
    CHECK_EQ(reported[4], 12000);
    CHECK_EQ(a[7], 2); /* nvals */
    CHECK_EQ(s16(a + 9 + 2 * a[4]), 4000); /* oldest ring entry at head */

    /* WINAVG 4 epochs, slide 2: reported at epochs 2 and 4, ring of 2 {sum,count} */
    e = agg(AGG_WINAVG, 4, 2);
    CHECK_EQ(agg_state_size(&e), 9 + 4 * 2);
    agg_init(a, &e, 1, 1);
    n = 0;
    for (ep = 1; ep <= 4; ep++) {
        agg_update(a, &e, (int16_t)(10 * ep), 1);
        if (agg_epoch_has_data(a, &e, ep)) {
            reported[n++] = s16(a);
            reported[n++] = u16(a + 2);
        }
        agg_end_epoch(a, &e, 1);
    }
    CHECK_EQ(n, 4);
    CHECK_EQ(reported[0], 30); /* 10 + 20 */
    CHECK_EQ(reported[1], 2);
    CHECK_EQ(reported[2], 100); /* 10 + 20 + 30 + 40: window of 4 */
    CHECK_EQ(reported[3], 4);

    /* WINMAX merge folds the child's window value only */
    e = agg(AGG_WINMAX, 2, 1);
    agg_init(a, &e, 1, 1);
    agg_update(a, &e, 50, 1);
    agg_init(b, &e, 2, 1);
    agg_update(b, &e, 80, 2);
    agg_merge(a, &e, b);
    CHECK_EQ(s16(a), 80);
    CHECK_EQ(s16(a + 2), 2);
    CHECK_EQ(a[7], 1);
    /* WINMIN / WINCNT */
    e = agg(AGG_WINMIN, 2, 1);
    agg_init(a, &e, 1, 1);
    agg_update(a, &e, 50, 1);
    agg_update(a, &e, -7, 1);
    CHECK_EQ(s16(a), -7);
    e = agg(AGG_WINCNT, 3, 1);
    agg_init(a, &e, 1, 1);
    for (ep = 1; ep <= 4; ep++) {
        agg_update(a, &e, 123, 1);
        if (agg_epoch_has_data(a, &e, ep))
            reported[0] = s16(a);
        agg_end_epoch(a, &e, 1);
    }
    CHECK_EQ(reported[0], 3);
    /* tumbling window w = s = 2: ring of one entry, never pushed */
    e = agg(AGG_WINSUM, 2, 2);
    CHECK_EQ(agg_state_size(&e), 11);
    /* bounds */
    CHECK_EQ(agg_check(AGG_WINAVG, 5, 1), AGG_OK);
    CHECK_EQ(agg_check(AGG_WINAVG, 6, 1), AGG_WINDOW_TOO_LARGE);
    CHECK_EQ(agg_check(AGG_WINSUM, 9, 1), AGG_OK);
    CHECK_EQ(agg_check(AGG_WINSUM, 10, 1), AGG_WINDOW_TOO_LARGE);
    CHECK_EQ(agg_check(12, 2, 1), AGG_UNSUPPORTED);
    e = agg(15, 2, 1);
    CHECK_EQ(agg_state_size(&e), 0);
}

static void test_groups(void)
{
    group_table g;
    uint8_t fresh, i;
    groups_reset(&g, 2);
    CHECK_EQ(groups_claim(&g, 5, &fresh), 0);
    CHECK_EQ(fresh, 1);
    CHECK_EQ(groups_claim(&g, 5, &fresh), 0);
    CHECK_EQ(fresh, 0);
    CHECK_EQ(groups_claim(&g, -3, &fresh), 1);
    g.live[0] = 1;
    g.live[1] = 1;
    CHECK_EQ(groups_claim(&g, 9, &fresh), GROUPS_NONE);
    g.live[1] = 0; /* an empty slot is reused */
    i = groups_claim(&g, 9, &fresh);
    CHECK_EQ(i, 1);
    CHECK_EQ(groups_find(&g, -3), GROUPS_NONE);
    CHECK_EQ(groups_find(&g, 9), 1);
}

static void test_snoop(void)
{
    uint8_t mine[4] = {100, 0, 1, 0}, big[4] = {200, 0, 2, 0}, small[4] = {50, 0, 3, 0};
    CHECK(snoop_dominates(AGG_MAX, mine, big));
    CHECK(!snoop_dominates(AGG_MAX, mine, small));
    CHECK(snoop_dominates(AGG_MAX, mine, mine));
    CHECK(snoop_dominates(AGG_MIN, mine, small));
    CHECK(!snoop_dominates(AGG_MIN, mine, big));
    CHECK(!snoop_dominates(AGG_SUM, mine, big));
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
