/*
 * fastlane.h - serial frames of tuple results to JSON lines, in one pass over the bytes.
 *
 * The Python tuple lane (protocol/tuple_lane.py) flattens each shape of tuple result
 * (AM type, length, qrType, numFields, notNull) from the construct layouts into a list
 * of little-endian leaves and a JSON template, and checks the first packet of the shape
 * against the full decoder. This walk does the per-frame work of that lane in C: split
 * at the flags, unescape, check the CRC, find the shape by its key, fill the template.
 * It knows no layout: protocol/fastlane.py registers the lane's shapes (leaf offsets,
 * kinds, the template cut at its holes).
 *
 * The walk stops, without consuming it, at the first frame it does not finish: any
 * framing error, a frame that is not a packet (ack, unknown protocol), a shape not
 * registered, no room for a line. Python decodes that one frame the slow way (and may
 * register its shape), then walks on: every outcome and count stays the Python one.
 *
 * fastlane_split is the same walk for Deframer.feed (protocol/framing.py), with no shapes:
 * it takes every frame the Python deframer would hand back as a good 0x42 packet and
 * copies its packet (the content without protocol byte and CRC) out, and stops at any
 * other frame -- a 0x41 or ack frame, a framing error -- which Python counts and decodes
 * exactly as it would have. The lane's shapes play no part; only its CRC table and MTU.
 *
 * Fixed pools, no allocation: FASTLANE_SHAPES shapes of FASTLANE_HOLES holes each.
 */
#ifndef MOTEBASE_FASTLANE_H
#define MOTEBASE_FASTLANE_H

#include <stddef.h>
#include <stdint.h>

#define FASTLANE_SHAPES 16
#define FASTLANE_HOLES 64
#define FASTLANE_TEXT 2048
#define FASTLANE_KEY 16
#define FASTLANE_FRAME 512 /* unescaped bytes a frame may have here; larger: Python's */

/* What a hole prints: a little-endian integer at the leaf's offset, or one byte as %02x. */
enum fastlane_kind {
    FASTLANE_U8 = 0,
    FASTLANE_I8 = 1,
    FASTLANE_U16 = 2,
    FASTLANE_I16 = 3,
    FASTLANE_U32 = 4,
    FASTLANE_I32 = 5,
    FASTLANE_HEX8 = 6
};

/* Where the shape key's bytes sit in a packet (protocol/tuple_lane.py, TupleLane._shape). */
typedef struct fastlane_keyspec {
    uint16_t qr_type_at;   /* qrType */
    uint16_t not_null_end; /* numFields and notNull end here */
    uint16_t mtu;          /* the deframer's MTU */
} fastlane_keyspec;

typedef struct fastlane fastlane;

/* A lane for `spec`, in caller-provided storage of fastlane_size() bytes. */
size_t fastlane_size(void);
void fastlane_init(fastlane *fl, const fastlane_keyspec *spec);

/*
 * Registers a shape: its key (key_len bytes), n holes (offset and kind each) and the
 * template's n + 1 literal pieces, concatenated in `text` with piece i ending at
 * ends[i]. Returns 0, or -1 if a pool is full or the shape does not fit.
 */
int fastlane_add(fastlane *fl, const uint8_t *key, uint8_t key_len, uint16_t n,
                 const uint16_t *offsets, const uint8_t *kinds, const char *text,
                 const uint16_t *ends);

/*
 * Walks data[start, end): data[start] follows a flag and data[end - 1] is a flag. Each
 * frame finished appends its line and '\n' to out (at *out_len, below cap) and counts in
 * *lines. Returns where it stopped: end, or the start of the frame left to Python.
 */
size_t fastlane_walk(const fastlane *fl, const uint8_t *data, size_t start, size_t end,
                     char *out, size_t cap, size_t *out_len, uint32_t *lines);

/*
 * Walks data[start, end) as fastlane_walk does, for frames that are good 0x42 packets:
 * each one's packet is appended to out (at *out_len, below cap), the new *out_len to
 * ends[*count] (below max_packets) and *count counts it. Packet i is out[ends[i - 1],
 * ends[i]), starting from the *out_len of the call. Returns where it stopped: end, or the
 * start of a frame that is not a good 0x42 packet or does not fit, left to Python.
 */
size_t fastlane_split(const fastlane *fl, const uint8_t *data, size_t start, size_t end,
                      uint8_t *out, size_t cap, size_t *out_len, uint32_t *ends,
                      uint32_t max_packets, uint32_t *count);

#endif /* MOTEBASE_FASTLANE_H */
