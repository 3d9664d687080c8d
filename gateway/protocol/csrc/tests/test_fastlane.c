/*
 * test_fastlane.c - the C walk of `mote decode` on its own (tests/test_protocol_fastlane.py
 * holds it to the Python path over random streams; this runs it under ASan/UBSan too).
 */
#include <string.h>

#include "firmware/tests/check.h"
#include "gateway/protocol/csrc/fastlane.h"

static union {
    unsigned char bytes[1 << 17];
    long long align;
} storage;

/* A packet of 6 bytes: am 240 at [2], a signed 16-bit value at [3], a byte at [5]. The key
 * spec below reads its qrType at [3] and numFields/notNull ending at [5]. */
static const uint8_t packet[6] = {0x00, 0x7E, 240, 0xFE, 0xFF, 0x7D};

static uint16_t crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0;
    size_t i;
    int b;
    for (i = 0; i < n; i++) {
        c ^= (uint32_t)p[i] << 8;
        for (b = 0; b < 8; b++)
            c = (c & 0x8000u ? (c << 1) ^ 0x1021u : c << 1) & 0xFFFFu;
    }
    return (uint16_t)c;
}

/* flag, escaped (protocol 0x42, packet, CRC), flag. */
static size_t frame(uint8_t *out, const uint8_t *pkt, size_t len, int bad_crc)
{
    uint8_t content[64];
    uint16_t c;
    size_t i, n = 0;
    content[0] = 0x42;
    memcpy(content + 1, pkt, len);
    c = (uint16_t)(crc(content, len + 1) ^ (bad_crc ? 1u : 0u));
    content[len + 1] = (uint8_t)c;
    content[len + 2] = (uint8_t)(c >> 8);
    out[n++] = 0x7E;
    for (i = 0; i < len + 3; i++) {
        if (content[i] == 0x7E || content[i] == 0x7D) {
            out[n++] = 0x7D;
            out[n++] = (uint8_t)(content[i] ^ 0x20);
        } else {
            out[n++] = content[i];
        }
    }
    out[n++] = 0x7E;
    return n;
}

int main(int argc, char **argv)
{
    fastlane *fl = (fastlane *)storage.bytes;
    fastlane_keyspec spec = {3, 5, 256};
    /* key: packet[2:5], packet[3], packet[0:5], length 6 LE */
    uint8_t key[11] = {240, 0xFE, 0xFF, 0xFE, 0x00, 0x7E, 240, 0xFE, 0xFF, 6, 0};
    uint16_t offsets[2] = {3, 5};
    uint8_t kinds[2] = {FASTLANE_I16, FASTLANE_HEX8};
    const char *text = "{\"v\": , \"b\": \"\"}";
    uint16_t ends[3] = {6, 14, 16};
    uint8_t data[256];
    char out[256];
    size_t n = 0, out_len = 0, stop;
    uint32_t lines = 0;
    (void)argc;

    CHECK(fastlane_size() <= sizeof(storage.bytes));
    fastlane_init(fl, &spec);
    CHECK_EQ(fastlane_add(fl, key, 11, 2, offsets, kinds, text, ends), 0);
    n += frame(data + n, packet, sizeof(packet), 0);
    n += frame(data + n, packet, sizeof(packet), 0);
    stop = fastlane_walk(fl, data, 1, n, out, sizeof(out), &out_len, &lines);
    CHECK_EQ(stop, n);
    CHECK_EQ(lines, 2);
    CHECK(out_len == 2 * strlen("{\"v\": -2, \"b\": \"7d\"}\n"));
    CHECK(memcmp(out, "{\"v\": -2, \"b\": \"7d\"}\n{\"v\": -2, \"b\": \"7d\"}\n", out_len) == 0);

    /* A bad CRC is left to Python, untouched; so is a line without room. */
    n = frame(data, packet, sizeof(packet), 1);
    out_len = lines = 0;
    CHECK_EQ(fastlane_walk(fl, data, 1, n, out, sizeof(out), &out_len, &lines), 1);
    CHECK_EQ(lines, 0);
    n = frame(data, packet, sizeof(packet), 0);
    CHECK_EQ(fastlane_walk(fl, data, 1, n, out, 10, &out_len, &lines), 1);
    /* A frame whose last byte is an open escape is left too. */
    data[n - 2] = 0x7D;
    CHECK_EQ(fastlane_walk(fl, data, 1, n, out, sizeof(out), &out_len, &lines), 1);
    return check_report(argv[0]);
}
