/*
 * TinyOS 1.x serial framing (net/serial.h) and its CRC (net/crc16.h).
 * Golden frames were written from wire-format spec §2; their CRCs were taken
 * from an independent implementation (Python binascii.crc_hqx, init 0).
 */
#include <string.h>

#include "check.h"
#include "net/crc16.h"
#include "net/serial.h"

/* Feed bytes; return the last non-NONE event and how many packets came out. */
static serial_rx_event feed(serial_rx *rx, const uint8_t *bytes, size_t n, int *packets)
{
    serial_rx_event last = SERIAL_RX_NONE, ev;
    size_t i;

    *packets = 0;
    for (i = 0; i < n; i++) {
        ev = serial_rx_byte(rx, bytes[i]);
        if (ev != SERIAL_RX_NONE) {
            last = ev;
            (*packets)++;
        }
    }
    return last;
}

static void test_crc(void)
{
    static const uint8_t check[] = "123456789";

    CHECK_EQ(crc16_block(CRC16_INIT, check, 9), 0x31C3);
    CHECK_EQ(crc16_block(CRC16_INIT, check, 0), 0x0000);
    /* byte-at-a-time equals block */
    CHECK_EQ(crc16_update(crc16_block(CRC16_INIT, check, 8), '9'), 0x31C3);
}

/* UART-addressed result: addr 0x007E and group 0x7D both need escaping. */
static const uint8_t pkt_escapes[] = {0x7E, 0x00, 0xF0, 0x7D, 0x02, 0x01, 0x02};
static const uint8_t frame_escapes[] = {0x7E, 0x42, 0x7D, 0x5E, 0x00, 0xF0, 0x7D,
                                        0x5D, 0x02, 0x01, 0x02, 0x29, 0xF6, 0x7E};
/* CRC 0x757D: its low byte is escaped too. */
static const uint8_t pkt_crc_esc[] = {0x01, 0x00, 0x65, 0x7D, 0x01, 0x85};
static const uint8_t frame_crc_esc[] = {0x7E, 0x42, 0x01, 0x00, 0x65, 0x7D, 0x5D,
                                        0x01, 0x85, 0x7D, 0x5D, 0x75, 0x7E};

static void test_tx_golden(void)
{
    uint8_t out[SERIAL_TX_MAX];
    uint16_t n;

    n = serial_frame_packet(pkt_escapes, sizeof pkt_escapes, out, sizeof out);
    CHECK_EQ(n, sizeof frame_escapes);
    CHECK_BYTES(out, frame_escapes, sizeof frame_escapes);

    n = serial_frame_packet(pkt_crc_esc, sizeof pkt_crc_esc, out, sizeof out);
    CHECK_EQ(n, sizeof frame_crc_esc);
    CHECK_BYTES(out, frame_crc_esc, sizeof frame_crc_esc);
}

static void test_tx_frames_only_length_bytes(void)
{
    /* a full 54-byte buffer whose header says 2 data bytes: the frame carries 5 + 2 */
    uint8_t msg[TOS_MSG_MAX];
    uint8_t out[SERIAL_TX_MAX];

    memset(msg, 0x11, sizeof msg);
    memcpy(msg, pkt_escapes, sizeof pkt_escapes);
    CHECK_EQ(serial_frame_packet(msg, sizeof msg, out, sizeof out), sizeof frame_escapes);
    CHECK_BYTES(out, frame_escapes, sizeof frame_escapes);
}

static void test_tx_bounds(void)
{
    uint8_t msg[TOS_MSG_MAX];
    uint8_t out[SERIAL_TX_MAX];

    /* too small a buffer: 0, never a partial frame */
    CHECK_EQ(serial_frame_packet(pkt_escapes, sizeof pkt_escapes, out, sizeof frame_escapes - 1), 0);
    /* header claims more data than given */
    CHECK_EQ(serial_frame_packet(pkt_escapes, 6, out, sizeof out), 0);
    /* length beyond TOS_DATA_LENGTH */
    memset(msg, 0, sizeof msg);
    msg[4] = TOS_DATA_LENGTH + 1;
    CHECK_EQ(serial_frame_packet(msg, sizeof msg, out, sizeof out), 0);
    /* worst case: every byte escaped still fits SERIAL_TX_MAX */
    memset(msg, 0x7E, sizeof msg);
    msg[4] = TOS_DATA_LENGTH;
    CHECK(serial_frame_packet(msg, sizeof msg, out, sizeof out) > 0);
}

static void test_ack_golden(void)
{
    static const uint8_t ack13[] = {0x7E, 0x40, 0x0D, 0x61, 0xDC, 0x7E};
    static const uint8_t ack7e[] = {0x7E, 0x40, 0x7D, 0x5E, 0x95, 0x92, 0x7E};
    uint8_t out[SERIAL_ACK_MAX];

    CHECK_EQ(serial_frame_ack(13, out, sizeof out), sizeof ack13);
    CHECK_BYTES(out, ack13, sizeof ack13);
    CHECK_EQ(serial_frame_ack(0x7E, out, sizeof out), sizeof ack7e);
    CHECK_BYTES(out, ack7e, sizeof ack7e);
    CHECK_EQ(serial_frame_ack(13, out, 5), 0);
}

static void test_rx_golden(void)
{
    serial_rx rx;
    const uint8_t *p;
    uint8_t len;
    int n;

    serial_rx_init(&rx);
    CHECK_EQ(feed(&rx, frame_escapes, sizeof frame_escapes, &n), SERIAL_RX_PACKET);
    CHECK_EQ(n, 1);
    p = serial_rx_packet(&rx, &len);
    CHECK_EQ(len, sizeof pkt_escapes);
    CHECK_BYTES(p, pkt_escapes, sizeof pkt_escapes);

    CHECK_EQ(feed(&rx, frame_crc_esc, sizeof frame_crc_esc, &n), SERIAL_RX_PACKET);
    p = serial_rx_packet(&rx, &len);
    CHECK_EQ(len, sizeof pkt_crc_esc);
    CHECK_BYTES(p, pkt_crc_esc, sizeof pkt_crc_esc);
    CHECK_EQ(rx.stats.packets, 2);
}

/* Protocol 65 as the Java Packetizer sends it: token 14, broadcast query packet. */
static void test_rx_packet_ack(void)
{
    static const uint8_t frame65[] = {0x7E, 0x41, 0x0E, 0xFF, 0xFF, 0x65, 0x7D, 0x5D,
                                      0x03, 0xAA, 0xBB, 0xCC, 0x45, 0x44, 0x7E};
    static const uint8_t pkt[] = {0xFF, 0xFF, 0x65, 0x7D, 0x03, 0xAA, 0xBB, 0xCC};
    static const uint8_t ack14[] = {0x7E, 0x40, 0x0E};
    serial_rx rx;
    uint8_t out[SERIAL_ACK_MAX];
    const uint8_t *p;
    uint8_t len;
    int n;

    serial_rx_init(&rx);
    CHECK_EQ(feed(&rx, frame65, sizeof frame65, &n), SERIAL_RX_PACKET_ACK);
    CHECK_EQ(n, 1);
    CHECK_EQ(serial_rx_token(&rx), 14);
    p = serial_rx_packet(&rx, &len);
    CHECK_EQ(len, sizeof pkt);
    CHECK_BYTES(p, pkt, sizeof pkt);
    /* the ack echoes the token and decodes as a valid 64 frame */
    CHECK(serial_frame_ack(serial_rx_token(&rx), out, sizeof out) > 0);
    CHECK_BYTES(out, ack14, sizeof ack14);
    CHECK_EQ(crc16_block(CRC16_INIT, &out[1], 2), (uint16_t)(out[3] | out[4] << 8));
}

static void test_rx_round_trip_all_bytes(void)
{
    uint8_t msg[TOS_MSG_MAX];
    uint8_t out[SERIAL_TX_MAX];
    serial_rx rx;
    const uint8_t *p;
    uint8_t len, length;
    uint16_t n;
    int got;
    unsigned i;

    serial_rx_init(&rx);
    for (length = 0; length <= TOS_DATA_LENGTH; length++) {
        for (i = 0; i < TOS_MSG_MAX; i++) {
            msg[i] = (uint8_t)(0x7A + i * 3 + length); /* walks through 0x7D and 0x7E */
        }
        msg[4] = length;
        n = serial_frame_packet(msg, TOS_HEADER_LEN + length, out, sizeof out);
        CHECK(n > 0);
        CHECK_EQ(feed(&rx, out, n, &got), SERIAL_RX_PACKET);
        CHECK_EQ(got, 1);
        p = serial_rx_packet(&rx, &len);
        CHECK_EQ(len, TOS_HEADER_LEN + length);
        CHECK_BYTES(p, msg, TOS_HEADER_LEN + length);
    }
    CHECK_EQ(rx.stats.packets, TOS_DATA_LENGTH + 1);
    CHECK_EQ(rx.stats.bad_crc + rx.stats.too_long + rx.stats.too_short + rx.stats.bad_proto, 0);
}

static void test_rx_corruption_and_resync(void)
{
    uint8_t stream[256];
    uint8_t bad[sizeof frame_escapes];
    serial_rx rx;
    size_t n = 0;
    int got;

    /* line noise, a frame with a flipped data bit, an unknown protocol, then a good frame */
    static const uint8_t noise[] = {0x00, 0x13, 0x7D, 0x55, 0xFF};
    static const uint8_t unknown_proto[] = {0x7E, 0x43, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
    memcpy(bad, frame_escapes, sizeof bad);
    bad[9] ^= 0x04;
    memcpy(stream + n, noise, sizeof noise);
    n += sizeof noise;
    memcpy(stream + n, bad, sizeof bad);
    n += sizeof bad;
    memcpy(stream + n, unknown_proto, sizeof unknown_proto);
    n += sizeof unknown_proto;
    memcpy(stream + n, frame_escapes, sizeof frame_escapes);
    n += sizeof frame_escapes;

    serial_rx_init(&rx);
    CHECK_EQ(feed(&rx, stream, n, &got), SERIAL_RX_PACKET);
    CHECK_EQ(got, 1);
    CHECK_EQ(rx.stats.bad_crc, 1);
    CHECK_EQ(rx.stats.bad_proto, 1);
    CHECK_EQ(rx.stats.packets, 1);
}

static void test_rx_short_and_escape_errors(void)
{
    static const uint8_t short_frame[] = {0x7E, 0x42, 0x01, 0x02, 0x03, 0x7E};
    static const uint8_t token_only[] = {0x7E, 0x41, 0x09, 0x7E};
    static const uint8_t flags[] = {0x7E, 0x7E, 0x7E};
    static const uint8_t esc_flag[] = {0x7E, 0x42, 0x01, 0x02, 0x7D, 0x7E};
    serial_rx rx;
    int got;

    serial_rx_init(&rx);
    feed(&rx, short_frame, sizeof short_frame, &got);
    feed(&rx, token_only, sizeof token_only, &got);
    feed(&rx, flags, sizeof flags, &got);
    feed(&rx, esc_flag, sizeof esc_flag, &got);
    CHECK_EQ(got, 0);
    CHECK_EQ(rx.stats.too_short, 2);
    CHECK_EQ(rx.stats.bad_escape, 1);
    CHECK_EQ(rx.stats.packets, 0);
    /* still in sync: the closing flag of the last frame opens the next */
    CHECK_EQ(feed(&rx, frame_escapes + 1, sizeof frame_escapes - 1, &got), SERIAL_RX_PACKET);
}

static void test_rx_too_long(void)
{
    uint8_t frame[2 + 1 + SERIAL_RX_MTU + 1];
    serial_rx rx;
    size_t i;
    int got;

    /* one byte over the MTU between the flags: dropped, and the next frame still decodes */
    frame[0] = 0x7E;
    frame[1] = 0x42;
    for (i = 2; i < sizeof frame - 1; i++) {
        frame[i] = 0x10;
    }
    frame[sizeof frame - 1] = 0x7E;
    serial_rx_init(&rx);
    feed(&rx, frame, sizeof frame, &got);
    CHECK_EQ(got, 0);
    CHECK_EQ(rx.stats.too_long, 1);
    CHECK_EQ(feed(&rx, frame_escapes + 1, sizeof frame_escapes - 1, &got), SERIAL_RX_PACKET);
    CHECK_EQ(rx.stats.packets, 1);
}

/* Arbitrary bytes (flag-heavy, escape-heavy): never more than a TOS_Msg out, never stuck. */
static void test_rx_garbage(void)
{
    serial_rx rx;
    uint32_t lcg = 12345u;
    const uint8_t *p;
    uint8_t byte, len;
    long i;
    int bad = 0, got;

    serial_rx_init(&rx);
    for (i = 0; i < 200000L; i++) {
        lcg = lcg * 1103515245u + 12345u;
        byte = (uint8_t)(lcg >> 16);
        if ((lcg >> 8 & 0x1Fu) == 0) {
            byte = SERIAL_SYNC;
        } else if ((lcg >> 8 & 0x1Fu) == 1) {
            byte = SERIAL_ESC;
        }
        if (serial_rx_byte(&rx, byte) != SERIAL_RX_NONE) {
            p = serial_rx_packet(&rx, &len);
            bad += len < TOS_HEADER_LEN || len > TOS_MSG_MAX || p == NULL;
        }
    }
    CHECK_EQ(bad, 0);
    /* and a clean frame right after still decodes */
    CHECK_EQ(feed(&rx, frame_escapes, sizeof frame_escapes, &got), SERIAL_RX_PACKET);
}

int main(void)
{
    test_crc();
    test_tx_golden();
    test_tx_frames_only_length_bytes();
    test_tx_bounds();
    test_ack_golden();
    test_rx_golden();
    test_rx_packet_ack();
    test_rx_round_trip_all_bytes();
    test_rx_corruption_and_resync();
    test_rx_short_and_escape_errors();
    test_rx_too_long();
    test_rx_garbage();
    return check_report("test_net_serial");
}
