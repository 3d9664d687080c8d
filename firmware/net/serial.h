/*
 * serial.h - TinyOS 1.x UART framing, mote side (FramerM + FramerAckM).
 *
 * Frame on the wire:
 *   0x7E | proto | [token] | packet ... | crc lo | crc hi | 0x7E
 * with 0x7E and 0x7D inside the frame (CRC bytes included) sent as
 * 0x7D, byte ^ 0x20. The CRC (crc16.h) covers proto, token and packet, on the
 * unescaped bytes. A closing 0x7E also opens the next frame.
 *
 * Receive: a state machine fed one byte at a time (O(1) per byte, the CRC runs
 * two bytes behind the data so no second pass is needed). Accepted protocols:
 *   66 PACKET_NOACK  proto | packet
 *   65 PACKET_ACK    proto | token | packet; the mote must answer with a
 *                    protocol-64 frame echoing the token (serial_frame_ack).
 * Any other protocol byte puts the receiver back into "no sync" until the next
 * 0x7E. Frames whose packet + CRC exceed SERIAL_RX_MTU, with a bad CRC, or
 * too short to hold a TOS header are dropped and counted; sync is kept.
 *
 * Transmit: every packet leaves as protocol 66, TOS header + `length` data
 * bytes (no radio CRC field), framed into a caller buffer; no allocation.
 */
#ifndef MOTE_NET_SERIAL_H
#define MOTE_NET_SERIAL_H

#include <stdint.h>

#include "mhop.h"

#define SERIAL_SYNC 0x7Eu
#define SERIAL_ESC 0x7Du
#define SERIAL_ESC_XOR 0x20u

#define SERIAL_PROTO_ACK 64u
#define SERIAL_PROTO_PACKET_ACK 65u
#define SERIAL_PROTO_PACKET_NOACK 66u
#define SERIAL_PROTO_UNKNOWN 255u

/* Longest packet + CRC a frame may carry: a full TOS_Msg (5 + 49) and 2 CRC bytes. */
#define SERIAL_RX_MTU (TOS_MSG_MAX + 2u)
/* Worst-case encoded sizes: 2 flags, proto, every other byte escaped. */
#define SERIAL_TX_MAX (2u + 1u + 2u * (TOS_MSG_MAX + 2u)) /* 115 */
#define SERIAL_ACK_MAX (2u + 1u + 2u * 3u)               /* 9 */

/* What one received byte completed. */
typedef enum serial_rx_event {
    SERIAL_RX_NONE = 0,       /* nothing yet */
    SERIAL_RX_PACKET = 1,     /* a protocol-66 packet is ready */
    SERIAL_RX_PACKET_ACK = 2  /* a protocol-65 packet is ready; send serial_frame_ack(token) */
} serial_rx_event;

typedef struct serial_rx_stats {
    uint32_t packets;     /* frames delivered (65 and 66) */
    uint32_t bad_crc;     /* dropped: CRC mismatch */
    uint32_t too_long;    /* dropped: packet + CRC longer than SERIAL_RX_MTU */
    uint32_t too_short;   /* dropped: fewer bytes than a TOS header + CRC */
    uint32_t bad_proto;   /* protocol byte other than 65/66: resync */
    uint32_t bad_escape;  /* dropped: flag right after an escape byte */
} serial_rx_stats;

typedef struct serial_rx {
    serial_rx_stats stats;
    /* private */
    uint16_t crc;         /* over proto, token and buf[0 .. count-3] */
    uint8_t state;
    uint8_t escaped;      /* previous byte was SERIAL_ESC */
    uint8_t proto;
    uint8_t token;
    uint8_t count;        /* unescaped bytes in buf (packet + CRC) */
    uint8_t buf[SERIAL_RX_MTU];
} serial_rx;

void serial_rx_init(serial_rx *rx);

/*
 * Feed one byte from the UART. On SERIAL_RX_PACKET / SERIAL_RX_PACKET_ACK the
 * packet (TOS header + data, CRC stripped) is at serial_rx_packet() and the
 * ack token at serial_rx_token(), both valid until the next serial_rx_byte().
 */
serial_rx_event serial_rx_byte(serial_rx *rx, uint8_t byte);
const uint8_t *serial_rx_packet(const serial_rx *rx, uint8_t *len);
uint8_t serial_rx_token(const serial_rx *rx);

/*
 * Frame the TOS packet `msg` (msg_len bytes available: header + data) as
 * protocol 66: header and exactly `length` data bytes. Returns the frame size
 * written to out, or 0 if the packet is malformed (see tos_msg_parse) or out
 * (cap bytes) is too small; SERIAL_TX_MAX always suffices.
 */
uint16_t serial_frame_packet(const uint8_t *msg, uint16_t msg_len, uint8_t *out, uint16_t cap);

/* The protocol-64 frame acknowledging `token`; returns its size or 0 if cap is too small. */
uint16_t serial_frame_ack(uint8_t token, uint8_t *out, uint16_t cap);

#endif /* MOTE_NET_SERIAL_H */
