/* QueryResult encoding (wire-format §7), golden bytes written by hand from the spec tables. */
#include <string.h>

#include "check.h"
#include "net/le16.h"
#include "net/mhop.h"
#include "query/catalog.h"
#include "result/bundle.h"
#include "result/result.h"

static void test_tuple_golden(void)
{
    /* qid 5, epoch 0x0102, fields: nodeid (u16), bogus (NULL), depth (u8), light (u16) */
    static const uint8_t want[42] = {
        0x05, 0x00, 0x02, 0x01, 0x02,       /* qid, result_idx, epoch, qrType 2 */
        0x00, 0x44, 0x33, 0x22, 0x11,       /* timeSyncData: high byte 0, low32 LE */
        0x00, 0x00, 0x00, 0x00,             /* clockCount, lastDiff */
        0x05, 0x04, 0x0D, 0x00, 0x00, 0x00, /* tuple qid, numFields, notNull = 0b1101 */
        0x07, 0x00,                         /* nodeid 7 */
        0x03,                               /* depth 3 */
        0xFF, 0x03,                         /* light 1023 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    query q;
    int32_t values[QUERY_MAX_FIELDS] = {7, 0, 3, 1023};
    uint8_t out[42];
    memset(&q, 0, sizeof q);
    q.qid = 5;
    q.num_fields = 4;
    q.fields[0] = ATTR_NODEID;
    q.fields[1] = CATALOG_NULL_ATTR;
    q.fields[2] = ATTR_DEPTH;
    q.fields[3] = ATTR_LIGHT;
    q.tuple_bytes = 5;
    CHECK_EQ(qr_encode_tuple(out, &q, 0x0102, 0x11223344u, values), 42);
    CHECK_BYTES(out, want, 42);
    CHECK_EQ(qr_tuple_key(out, &q), 1023); /* first sensor field */
}

static void test_tuple_uint32_field(void)
{
    query q;
    int32_t values[QUERY_MAX_FIELDS] = {(int32_t)0xA1B2C3D4u};
    uint8_t out[42];
    static const uint8_t want_values[4] = {0xD4, 0xC3, 0xB2, 0xA1};
    memset(&q, 0, sizeof q);
    q.qid = 1;
    q.num_fields = 1;
    q.fields[0] = ATTR_TIMELO;
    q.tuple_bytes = 4;
    CHECK_EQ(qr_encode_tuple(out, &q, 1, 0, values), 42);
    CHECK_EQ(out[16], 0x01);
    CHECK_BYTES(out + 20, want_values, 4);
    q.tuple_bytes = 23;
    CHECK_EQ(qr_encode_tuple(out, &q, 1, 0, values), 0);
}

static void test_record_golden(void)
{
    static const uint8_t state[4] = {0x2C, 0x01, 0x09, 0x00}; /* MAX 300 held by node 9 */
    static const uint8_t want[42] = {
        0x02, 0x01, 0x0A, 0x00, 0x03, 0x00, 0x10, 0x00, 0x00, 0x00, 0, 0, 0, 0,
        0xFE, 0xFF, /* group -2 */
        0x01,       /* exprIdx */
        0x2C, 0x01, 0x09, 0x00,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint8_t out[42];
    qr_view v;
    CHECK_EQ(qr_encode_record(out, 2, 1, 10, 16, -2, 1, state, 4), 42);
    CHECK_BYTES(out, want, 42);
    CHECK_EQ(qr_encode_record(out, 2, 1, 10, 16, -2, 1, state, 26), 0);
    CHECK_EQ(qr_decode(&v, want, 42), 1);
    CHECK_EQ(v.qid, 2);
    CHECK_EQ(v.type, QR_AGG_RECORD);
    CHECK_EQ(v.epoch, 10);
    CHECK_EQ(v.time_ms, 16);
    CHECK_EQ(v.group, -2);
    CHECK_EQ(v.expr, 1);
    CHECK_BYTES(v.state, state, 4);
    CHECK_EQ(qr_decode(&v, want, 41), 0);
}

static void test_tuple_average(void)
{
    query q;
    int32_t a_vals[QUERY_MAX_FIELDS] = {3, 100}, b_vals[QUERY_MAX_FIELDS] = {3, 200};
    uint8_t a[42], b[42], rec[42];
    static const uint8_t st4[4] = {1, 0, 0, 0};
    memset(&q, 0, sizeof q);
    q.qid = 1;
    q.num_fields = 2;
    q.fields[0] = ATTR_NODEID;
    q.fields[1] = ATTR_LIGHT;
    q.tuple_bytes = 4;
    qr_encode_tuple(a, &q, 1, 0, a_vals);
    qr_encode_tuple(b, &q, 2, 0, b_vals);
    CHECK_EQ(qr_tuple_average(a, 3, b, 1, &q), 1);
    CHECK_EQ(a[22] | a[23] << 8, 125); /* (100*3 + 200*1) / 4 */
    CHECK_EQ(a[20] | a[21] << 8, 3);
    qr_encode_record(rec, 1, 0, 1, 0, 0, 0, st4, 4);
    CHECK_EQ(qr_tuple_average(a, 1, rec, 1, &q), 0);
}

/* Bundle items: golden bytes, the round trip, and what may not travel so. */
static void test_bundle_items(void)
{
    static const uint8_t tuple[42] = {
        0x05, 0x00, 0x02, 0x01, 0x02, 0x00, 0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0,
        0x05, 0x02, 0x03, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x04, /* nodeid 7, light 0x400 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t item[19] = {0x34, 0x12, 15, 0x05, 0x00, 0x02, 0x01, 0x02,
                                     0x05, 0x02, 0x03, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x04,
                                     0xEE};
    uint8_t out[40], back[42], bad[42];
    uint16_t origin = 0;
    memset(out, 0xEE, sizeof out);
    CHECK_EQ(bundle_item_size(tuple, 0), 19 - 1);
    CHECK_EQ(bundle_put(out, 17, tuple, 0x1234, 0), 0); /* no room: nothing written */
    CHECK_EQ(out[0], 0xEE);
    CHECK_EQ(bundle_put(out, sizeof out, tuple, 0x1234, 0), 18);
    CHECK_BYTES(out, item, 19); /* and nothing written past it */
    CHECK_EQ(bundle_get(out, 18, back, &origin, 0), 18);
    CHECK_EQ(origin, 0x1234);
    memcpy(bad, tuple, 42);
    memset(bad + 5, 0, 5); /* the time is not carried */
    CHECK_BYTES(back, bad, 42);
    CHECK_EQ(bundle_get(out, 17, back, &origin, 0), 0); /* truncated */
    CHECK_EQ(bundle_count(out, 18), 1);
    CHECK_EQ(bundle_count(out, 19), 0); /* a stray byte spoils the bundle */
    out[2] = 5 + 5; /* shorter than a tuple header */
    CHECK_EQ(bundle_get(out, 18, back, &origin, 0), 0);
    /* Trailing zero values are left off and come back. */
    memcpy(bad, tuple, 42);
    bad[22] = bad[23] = 0;
    CHECK_EQ(bundle_item_size(bad, 0), 3 + 5 + 6 + 1); /* nodeid's low byte ends it */
    CHECK_EQ(bundle_put(out, sizeof out, bad, 9, 0), 15);
    CHECK_EQ(bundle_get(out, 15, back, &origin, 0), 15);
    memset(bad + 5, 0, 5);
    CHECK_BYTES(back, bad, 42);
    /* Tuples with clockCount or lastDiff set go alone. */
    memcpy(bad, tuple, 42);
    bad[12] = 1;
    CHECK_EQ(bundle_item_size(bad, 0), 0);
}

/* Records travel whole, with their timeSyncData: a MAX and a COUNT of one epoch in one
 * frame, the first's time where the frame is stamped. Never short. */
static void test_bundle_records(void)
{
    const uint8_t max_state[2] = {0x34, 0x12}, count_state[2] = {25, 0};
    uint8_t max[42], count[42], out[42], back[42], n;
    uint16_t origin;

    CHECK_EQ(qr_encode_record(max, 7, 0, 300, 0x01020304u, 0, 0, max_state, 2), 42);
    CHECK_EQ(qr_encode_record(count, 7, 1, 300, 0x01020304u, 0, 1, count_state, 2), 42);
    /* origin, n, qid .. timeSyncData (10), group, expr, state (5) */
    CHECK_EQ(bundle_item_size(max, 0), 3 + 10 + 3 + 2);
    CHECK_EQ(bundle_item_size(count, max), 3 + 10 + 3 + 1); /* COUNT's high zero left off */
    n = bundle_put(out, sizeof out, max, 5, 0);
    CHECK_EQ(n, 18);
    CHECK_EQ(out[3 + QR_OFF_TYPE], QR_AGG_RECORD);
    CHECK_EQ(out[3 + QR_OFF_TIME + 1], 0x04); /* the time's low byte, where tx stamps */
    CHECK_EQ(bundle_put(out + n, (uint8_t)(sizeof out - n), count, 5, max), 17);
    CHECK_EQ(bundle_count(out, 35), 2);
    CHECK_EQ(bundle_get(out, 35, back, &origin, 0), 18);
    CHECK_EQ(origin, 5);
    CHECK_BYTES(back, max, 42);
    CHECK_EQ(bundle_get(out + 18, 17, back, &origin, max), 17);
    CHECK_BYTES(back, count, 42);
    /* A short item cannot follow a record: it would take a tuple header from it. */
    out[18 + 2] = BUNDLE_SHORT + 2u;
    CHECK_EQ(bundle_count(out, 35), 0);
    /* One that says it is shorter than a record header is malformed. */
    out[2] = 10 + 2;
    CHECK_EQ(bundle_get(out, 35, back, &origin, 0), 0);
}

/* Items after the first of the same query and tuple header, of an epoch near the
 * first's, are short: origin, length, epoch step, values. */
static void test_bundle_short_items(void)
{
    static const uint8_t first[42] = {
        0x05, 0x00, 0x02, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x05, 0x02, 0x03, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x04};
    static const uint8_t later[42] = {
        0x05, 0x00, 0x03, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x05, 0x02, 0x03, 0x00, 0x00, 0x00, 0x09, 0x00, 0x10, 0x00}; /* light's 0 left off */
    static const uint8_t short_item[7] = {0x09, 0x00, 0x80 + 3, 0x01, 0x09, 0x00, 0x10};
    uint8_t out[60], back[42], other[42];
    uint16_t origin = 0;
    uint8_t n;
    CHECK_EQ(bundle_item_size(later, first), 7);
    n = bundle_put(out, sizeof out, first, 7, 0);
    CHECK_EQ(n, 18);
    CHECK_EQ(bundle_put(out + n, 6, later, 9, first), 0); /* no room */
    CHECK_EQ(bundle_put(out + n, (uint8_t)(sizeof out - n), later, 9, first), 7);
    CHECK_BYTES(out + n, short_item, 7);
    CHECK_EQ(bundle_get(out + n, 7, back, &origin, first), 7);
    CHECK_EQ(origin, 9);
    CHECK_BYTES(back, later, 42);
    CHECK_EQ(bundle_get(out + n, 7, back, &origin, 0), 0); /* short: needs the first */
    CHECK_EQ(bundle_count(out, (uint8_t)(n + 7)), 2);
    CHECK_EQ(bundle_count(out + n, 7), 0); /* a bundle cannot open with a short item */
    memcpy(out + n + 7, out + n, 7);
    CHECK_EQ(bundle_count(out, (uint8_t)(n + 14)), 3);
    /* Four tuples of two 2-byte fields fill the 42 bytes after the multihop header. */
    memcpy(other, later, 42);
    other[QR_DATA + QR_TUPLE_HEADER + 3] = 0x01;
    CHECK_EQ(n + 3 * bundle_item_size(other, first), MHOP_PAYLOAD_MAX);
    /* An earlier epoch, and one across the wrap of the epoch counter, come back. */
    memcpy(other, later, 42);
    le16_put(&other[QR_OFF_EPOCH], 0x0102 - 127);
    CHECK_EQ(bundle_put(out, sizeof out, other, 9, first), 7);
    CHECK_EQ(out[3], 0x81);
    CHECK_EQ(bundle_get(out, 7, back, &origin, first), 7);
    CHECK_BYTES(back, other, 42);
    memcpy(out, first, 42);
    le16_put(&out[QR_OFF_EPOCH], 0xFFFF);
    le16_put(&other[QR_OFF_EPOCH], 0x0002);
    CHECK_EQ(bundle_item_size(other, out), 7);
    /* Epochs further apart go whole. */
    le16_put(&other[QR_OFF_EPOCH], 0x0102 + 128);
    CHECK_EQ(bundle_item_size(other, first), 3 + 5 + 9);
    /* Another query, or another notNull, goes whole. */
    memcpy(other, later, 42);
    other[QR_OFF_QID] = other[QR_DATA] = 6;
    CHECK_EQ(bundle_item_size(other, first), 3 + 5 + 9);
    memcpy(other, later, 42);
    other[QR_DATA + 2] = 0x01;
    CHECK_EQ(bundle_item_size(other, first), 3 + 5 + 9);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_tuple_golden();
    test_tuple_uint32_field();
    test_record_golden();
    test_tuple_average();
    test_bundle_items();
    test_bundle_records();
    test_bundle_short_items();
    return check_report(argv[0]);
}
