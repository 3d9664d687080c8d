/* TOS_Msg and TOS_MHopMsg headers (net/mhop.h): golden bytes from wire-format spec §1, §4.1. */
#include "check.h"
#include "net/mhop.h"

static void test_tos_header(void)
{
    /* root -> UART, AM 240, default group, 49 data bytes */
    static const uint8_t golden[TOS_HEADER_LEN] = {0x7E, 0x00, 0xF0, 0x7D, 0x31};
    tos_header h = {TOS_UART_ADDR, AM_DATA, TOS_DEFAULT_GROUP, TOS_DATA_LENGTH};
    tos_header back;
    uint8_t out[TOS_HEADER_LEN];

    tos_header_pack(&h, out);
    CHECK_BYTES(out, golden, sizeof golden);
    tos_header_unpack(&back, golden);
    CHECK_EQ(back.addr, 0x007E);
    CHECK_EQ(back.type, 240);
    CHECK_EQ(back.group, 0x7D);
    CHECK_EQ(back.length, 49);

    h.addr = 0x1234;
    tos_header_pack(&h, out);
    CHECK_EQ(out[0], 0x34);
    CHECK_EQ(out[1], 0x12);
}

static void test_tos_msg_parse(void)
{
    uint8_t msg[TOS_MSG_MAX] = {0xFF, 0xFF, 101, 0x7D, 3, 1, 2, 3};
    tos_header h = {0, 0, 0, 0};

    CHECK_EQ(tos_msg_parse(&h, msg, 8), 1);
    CHECK_EQ(h.addr, TOS_BCAST_ADDR);
    CHECK_EQ(h.type, AM_QUERY);
    CHECK_EQ(h.length, 3);
    CHECK_EQ(tos_msg_parse(&h, msg, 7), 0);   /* truncated data */
    CHECK_EQ(tos_msg_parse(&h, msg, 4), 0);   /* truncated header */
    msg[4] = 50;                               /* longer than TOS_DATA_LENGTH */
    CHECK_EQ(tos_msg_parse(&h, msg, sizeof msg), 0);
    CHECK_EQ(h.length, 3);                     /* untouched on rejection */
}

static void test_mhop_header(void)
{
    /* source 5, origin 0x0102, seqno -2, hopcount 3 */
    static const uint8_t golden[MHOP_HEADER_LEN] = {0x05, 0x00, 0x02, 0x01, 0xFE, 0xFF, 0x03};
    mhop_header h = {5, 0x0102, -2, 3};
    mhop_header back;
    uint8_t out[MHOP_HEADER_LEN];

    mhop_header_pack(&h, out);
    CHECK_BYTES(out, golden, sizeof golden);
    mhop_header_unpack(&back, golden);
    CHECK_EQ(back.sourceaddr, 5);
    CHECK_EQ(back.originaddr, 0x0102);
    CHECK_EQ(back.seqno, -2);
    CHECK_EQ(back.hopcount, 3);

    h.seqno = -32768;
    mhop_header_pack(&h, out);
    CHECK_EQ(out[4], 0x00);
    CHECK_EQ(out[5], 0x80);
    mhop_header_unpack(&back, out);
    CHECK_EQ(back.seqno, -32768);
    h.seqno = 32767;
    mhop_header_pack(&h, out);
    mhop_header_unpack(&back, out);
    CHECK_EQ(back.seqno, 32767);
}

static void test_sizes(void)
{
    CHECK_EQ(TOS_MSG_MAX, 54);
    CHECK_EQ(MHOP_PAYLOAD_MAX, 42); /* sizeof(QueryResult) */
}

int main(void)
{
    test_tos_header();
    test_tos_msg_parse();
    test_mhop_header();
    test_sizes();
    return check_report("test_net_mhop");
}
