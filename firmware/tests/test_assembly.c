/* Query assembly from AM 101 parts (wire-format §6.4) and the catalog lookup. */
#include "check.h"
#include "qmsg.h"
#include "ops/agg.h"
#include "query/assembly.h"
#include "query/catalog.h"

static query_table t;
static uint8_t slot;

static qasm_outcome feed(const uint8_t *m) { return qtable_receive(&t, m, T_QMSG_LEN, &slot); }

static void test_catalog(void)
{
    uint8_t name[8] = {'L', 'i', 'G', 'h', 'T', 0, 0, 0};
    uint8_t full[8] = {'a', 'c', 'c', 'e', 'l', '_', 'x', 0};
    uint8_t unknown[8] = {'h', 'u', 'm', 'i', 'd', 0, 0, 0};
    uint8_t prefix[8] = {'l', 'i', 'g', 'h', 't', 'x', 0, 0};
    CHECK_EQ(catalog_lookup(name), ATTR_LIGHT);
    CHECK_EQ(catalog_lookup(full), ATTR_ACCEL_X);
    CHECK_EQ(catalog_lookup(unknown), CATALOG_NULL_ATTR);
    CHECK_EQ(catalog_lookup(prefix), CATALOG_NULL_ATTR);
    CHECK_EQ(catalog_wire_size(ATTR_NODEID), 2);
    CHECK_EQ(catalog_wire_size(ATTR_DEPTH), 1);
    CHECK_EQ(catalog_wire_size(ATTR_QUAL), 1);
    CHECK_EQ(catalog_wire_size(ATTR_TIMELO), 4);
    CHECK_EQ(catalog_wire_size(CATALOG_NULL_ATTR), 0);
    CHECK_EQ(catalog_get(ATTR_NODEID)->constant, 1);
    CHECK_EQ(catalog_get(ATTR_NODEID)->energy_nj, 0);
    CHECK(catalog_get(ATTR_MAG_X)->energy_nj > catalog_get(ATTR_ACCEL_X)->energy_nj);
    CHECK(catalog_get(ATTR_ACCEL_X)->energy_nj > catalog_get(ATTR_LIGHT)->energy_nj);
}

/* SELECT max(light) WHERE nodeid > 3: field 0 light, field 1 nodeid, expr 0 sel, expr 1 agg. */
static void test_out_of_order_and_duplicates(void)
{
    uint8_t f0[40], f1[40], e0[40], e1[40];
    const query *q;
    qtable_init(&t);
    t_field(f0, 7, 2, 2, 102, 0, "light");
    t_field(f1, 7, 2, 2, 102, 1, "nodeid");
    t_sel(e0, 7, 2, 2, 102, 0, 1, 2, 3, 0, 0);
    t_agg(e1, 7, 2, 2, 102, 1, AGG_MAX, 0, 0xFFFF, 0, 0, 0, 0, 0, 0);
    CHECK_EQ(feed(e1), QASM_STORED);
    CHECK_EQ(feed(e1), QASM_DUPLICATE);
    CHECK_EQ(feed(f1), QASM_STORED);
    CHECK_EQ(feed(e0), QASM_STORED);
    CHECK_EQ(t.slot[slot].status, QUERY_ASSEMBLING);
    CHECK_EQ(feed(f0), QASM_COMPLETED);
    CHECK_EQ(feed(f0), QASM_DUPLICATE);
    q = &t.slot[slot];
    CHECK_EQ(q->status, QUERY_RUNNING);
    CHECK_EQ(q->fields[0], ATTR_LIGHT);
    CHECK_EQ(q->fields[1], ATTR_NODEID);
    CHECK_EQ(q->exprs[0].kind, QEXPR_SEL);
    CHECK_EQ(q->exprs[0].field, 1);
    CHECK_EQ(q->exprs[0].op, 2);
    CHECK_EQ(q->exprs[0].u.value, 3);
    CHECK_EQ(q->exprs[1].kind, QEXPR_AGG);
    CHECK_EQ(q->exprs[1].op, AGG_MAX);
    CHECK_EQ(q->exprs[1].u.agg.group_field, QUERY_NO_GROUP);
    CHECK_EQ(q->has_agg, 1);
    CHECK_EQ(q->epoch_units, 102);
}

static void test_completion_rules(void)
{
    uint8_t f0[40], b[40], n[40], ev[40];
    qtable_init(&t);
    /* FOR clause announced: complete only with a non-zero numEpochs part. */
    t_field(f0, 1, 1, 0, 50, 0, "temp");
    f0[7] = 0x04;
    CHECK_EQ(feed(f0), QASM_STORED);
    t_header(n, 1, 1, 0, 0x04, 50, 4, 0);
    t_put16(n + 19, 0);
    CHECK_EQ(feed(n), QASM_REJECTED);
    t_put16(n + 19, 10);
    CHECK_EQ(feed(n), QASM_COMPLETED);
    CHECK_EQ(t.slot[slot].num_epochs, 10);
    /* Output to a command buffer (bufferType 3) waits for the BUFFER part. */
    t_field(f0, 2, 1, 0, 50, 0, "temp");
    f0[7] = 3 << 3;
    CHECK_EQ(feed(f0), QASM_STORED);
    t_header(b, 2, 1, 0, 3 << 3, 50, 2, 0);
    CHECK_EQ(feed(b), QASM_COMPLETED);
    /* Event announced: waits for the EVENT part. */
    t_field(f0, 3, 1, 0, 50, 0, "temp");
    f0[7] = 0x02;
    CHECK_EQ(feed(f0), QASM_STORED);
    t_header(ev, 3, 1, 0, 0x02, 50, 3, 0);
    CHECK_EQ(feed(ev), QASM_COMPLETED);
}

static void test_malformed_parts_leave_others_intact(void)
{
    uint8_t m[40], good[40];
    qtable_init(&t);
    t_field(good, 9, 2, 1, 100, 0, "light");
    CHECK_EQ(feed(good), QASM_STORED);
    CHECK_EQ(qtable_receive(&t, good, 39, &slot), QASM_REJECTED); /* truncated */
    t_field(m, 9, 2, 1, 100, 2, "temp"); /* idx >= numFields */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_field(m, 9, 3, 1, 100, 1, "temp"); /* disagrees with the held counts */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_field(m, 10, 17, 1, 100, 0, "temp"); /* more than 16 fields */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_sel(m, 9, 2, 1, 100, 0, 5, 0, 1, 0, 0); /* field index out of range */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_sel(m, 9, 2, 1, 100, 0, 0, 6, 1, 0, 0); /* comparison op 6 */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_sel(m, 9, 2, 1, 100, 0, 0, 0, 1, 7, 0); /* arithmetic op 7 */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_agg(m, 9, 2, 1, 100, 0, AGG_WINSUM, 0, 0xFFFF, 0, 0, 20, 1, 0, 0); /* window too big */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_agg(m, 9, 2, 1, 100, 0, AGG_WINSUM, 0, 0xFFFF, 0, 0, 0, 1, 0, 0); /* window of no epochs */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_agg(m, 9, 2, 1, 100, 0, AGG_WINAVG, 0, 0xFFFF, 0, 0, 3, 0, 0, 0); /* never slides */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_agg(m, 9, 2, 1, 100, 0, AGG_SUM, 0, 4, 0, 0, 0, 0, 0, 0); /* grouping field */
    CHECK_EQ(feed(m), QASM_REJECTED);
    t_field(m, 9, 2, 1, 0, 1, "temp"); /* epoch 0 */
    CHECK_EQ(feed(m), QASM_REJECTED);
    m[3] = 9; /* unknown msgType */
    CHECK_EQ(feed(m), QASM_REJECTED);
    /* none of that touched query 9 */
    slot = qtable_find(&t, 9);
    CHECK(slot < QUERY_SLOTS);
    CHECK_EQ(t.slot[slot].fields_missing, 0x2);
    CHECK_EQ(t.slot[slot].exprs_missing, 0x1);
    t_field(m, 9, 2, 1, 100, 1, "temp");
    CHECK_EQ(feed(m), QASM_STORED);
    t_sel(m, 9, 2, 1, 100, 0, 1, 4, 500, 2, 10);
    CHECK_EQ(feed(m), QASM_COMPLETED);
    CHECK_EQ(t.slot[slot].exprs[0].field_op, 2);
    CHECK_EQ(t.slot[slot].exprs[0].field_const, 10);
    CHECK_EQ(t.slot[slot].tuple_bytes, 4);
}

static void test_concurrent_queries_and_slots(void)
{
    uint8_t m[40];
    int q;
    qtable_init(&t);
    for (q = 1; q <= 4; q++) {
        t_field(m, q, 2, 0, 100, 0, "light");
        CHECK_EQ(feed(m), QASM_STORED); /* four under construction at once */
    }
    t_field(m, 5, 1, 0, 100, 0, "light");
    CHECK_EQ(feed(m), QASM_NO_SLOT);
    for (q = 4; q >= 1; q--) {
        t_field(m, q, 2, 0, 100, 1, "nodeid");
        CHECK_EQ(feed(m), QASM_COMPLETED);
        CHECK_EQ(t.slot[slot].qid, q);
    }
    /* unknown attribute: a NULL field, no bytes in the tuple */
    t_field(m, 1, 2, 0, 100, 1, "bogus");
    CHECK_EQ(feed(m), QASM_DUPLICATE);
}

static void test_del_rate_and_tuple_limit(void)
{
    uint8_t m[40];
    int i;
    qtable_init(&t);
    t_field(m, 3, 1, 0, 100, 0, "light");
    CHECK_EQ(feed(m), QASM_COMPLETED);
    t_header(m, 3, 1, 0, 0, 250, 0, 0);
    m[3] = QMSG_RATE;
    CHECK_EQ(feed(m), QASM_RATE_CHANGED);
    CHECK_EQ(t.slot[slot].epoch_units, 250);
    CHECK_EQ(feed(m), QASM_DUPLICATE);
    m[0] = 4;
    CHECK_EQ(feed(m), QASM_UNKNOWN_QID);
    t_header(m, 3, 0, 0, 0, 0, 0, 0);
    m[3] = QMSG_DEL;
    m[19] = 3;
    CHECK_EQ(feed(m), QASM_DELETED);
    CHECK_EQ(t.slot[slot].status, QUERY_DRAINING);
    CHECK_EQ(feed(m), QASM_DUPLICATE);
    /* DEL of a query still being assembled frees it at once */
    t_field(m, 6, 2, 0, 100, 0, "light");
    CHECK_EQ(feed(m), QASM_STORED);
    t_header(m, 6, 0, 0, 0, 0, 0, 0);
    m[3] = QMSG_DEL;
    CHECK_EQ(feed(m), QASM_DELETED);
    CHECK_EQ(qtable_find(&t, 6), QUERY_SLOTS);
    /* 12 uint16 fields = 24 value bytes: a tuple cannot carry them (A11) */
    for (i = 0; i < 12; i++) {
        t_field(m, 8, 12, 0, 100, i, "light");
        CHECK_EQ(feed(m), i < 11 ? QASM_STORED : QASM_REJECTED);
    }
    CHECK_EQ(qtable_find(&t, 8), QUERY_SLOTS);
    /* DROP TABLE is ignored */
    t_header(m, 0, 0, 0, 0, 0, 0, 0);
    m[3] = QMSG_DROP_TABLE;
    CHECK_EQ(feed(m), QASM_IGNORED);
}

static void test_string_and_temporal_parts(void)
{
    uint8_t m[40];
    const qexpr *x;
    qtable_init(&t);
    t_strsel(m, 2, 1, 2, 100, 0, 0, 1, "abc");
    CHECK_EQ(feed(m), QASM_STORED);
    t_agg(m, 2, 1, 2, 100, 1, AGG_WINAVG, 0, 0, 6, 2, 4, 2, 3, 10);
    CHECK_EQ(feed(m), QASM_STORED);
    t_field(m, 2, 1, 2, 100, 0, "light");
    CHECK_EQ(feed(m), QASM_COMPLETED);
    x = &t.slot[slot].exprs[0];
    CHECK_EQ(x->kind, QEXPR_STRING_SEL);
    CHECK_EQ(x->op, 1);
    CHECK(x->u.str[0] == 'a' && x->u.str[2] == 'c' && x->u.str[3] == 0);
    x = &t.slot[slot].exprs[1];
    CHECK_EQ(x->kind, QEXPR_TEMPORAL_AGG);
    CHECK_EQ(x->u.agg.group_field, 0);
    CHECK_EQ(x->u.agg.group_op, 6);
    CHECK_EQ(x->u.agg.group_const, 2);
    CHECK_EQ(x->u.agg.arg0, 4);
    CHECK_EQ(x->u.agg.arg1, 2);
    CHECK_EQ(x->field_op, 3);
    CHECK_EQ(x->field_const, 10);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_catalog();
    test_out_of_order_and_duplicates();
    test_completion_rules();
    test_malformed_parts_leave_others_intact();
    test_concurrent_queries_and_slots();
    test_del_rate_and_tuple_limit();
    test_string_and_temporal_parts();
    return check_report(argv[0]);
}
