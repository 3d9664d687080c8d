#include "serial.h"

#include <string.h>

#include "crc16.h"

/* Receiver states; the escape flag is kept apart so a token can be escaped too. */
enum {
    RX_NOSYNC = 0, /* waiting for a flag */
    RX_PROTO,      /* after a flag: next byte is the protocol (or another flag) */
    RX_TOKEN,      /* protocol 65: next byte is the ack token */
    RX_INFO        /* packet and CRC bytes */
};

/* Smallest acceptable content after proto/token: a TOS header and the CRC. */
#define RX_MIN_INFO (TOS_HEADER_LEN + 2u)

void serial_rx_init(serial_rx *rx)
{
    memset(rx, 0, sizeof(*rx));
    rx->state = RX_NOSYNC;
}

/* A flag ended the frame being received: decide whether it is a packet. */
static serial_rx_event rx_end_frame(serial_rx *rx)
{
    uint16_t received;

    if (rx->escaped) {
        rx->stats.bad_escape++;
        return SERIAL_RX_NONE;
    }
    if (rx->state == RX_PROTO) {
        return SERIAL_RX_NONE; /* back-to-back flags: an empty frame is just sync */
    }
    if (rx->state == RX_TOKEN || rx->count < RX_MIN_INFO) {
        rx->stats.too_short++;
        return SERIAL_RX_NONE;
    }
    received = (uint16_t)(rx->buf[rx->count - 2] | (uint16_t)rx->buf[rx->count - 1] << 8);
    if (received != rx->crc) {
        rx->stats.bad_crc++;
        return SERIAL_RX_NONE;
    }
    rx->stats.packets++;
    return rx->proto == SERIAL_PROTO_PACKET_ACK ? SERIAL_RX_PACKET_ACK : SERIAL_RX_PACKET;
}

static void rx_info_byte(serial_rx *rx, uint8_t byte)
{
    if (rx->count >= SERIAL_RX_MTU) {
        rx->stats.too_long++;
        rx->state = RX_NOSYNC;
        return;
    }
    /* The CRC trails the data by two bytes: the last two are the CRC itself. */
    if (rx->count >= 2) {
        rx->crc = crc16_update(rx->crc, rx->buf[rx->count - 2]);
    }
    rx->buf[rx->count++] = byte;
}

serial_rx_event serial_rx_byte(serial_rx *rx, uint8_t byte)
{
    serial_rx_event ev;

    if (rx->state == RX_NOSYNC) {
        if (byte == SERIAL_SYNC) {
            rx->state = RX_PROTO;
            rx->escaped = 0;
        }
        return SERIAL_RX_NONE;
    }
    if (byte == SERIAL_SYNC) {
        ev = rx_end_frame(rx);
        rx->state = RX_PROTO; /* the closing flag opens the next frame */
        rx->escaped = 0;
        return ev;
    }
    if (rx->escaped) {
        rx->escaped = 0;
        byte ^= SERIAL_ESC_XOR;
    } else if (byte == SERIAL_ESC) {
        rx->escaped = 1;
        return SERIAL_RX_NONE;
    }

    switch (rx->state) {
    case RX_PROTO:
        rx->proto = byte;
        rx->count = 0;
        rx->crc = crc16_update(CRC16_INIT, byte);
        if (byte == SERIAL_PROTO_PACKET_ACK) {
            rx->state = RX_TOKEN;
        } else if (byte == SERIAL_PROTO_PACKET_NOACK) {
            rx->state = RX_INFO;
        } else {
            rx->stats.bad_proto++;
            rx->state = RX_NOSYNC;
        }
        break;
    case RX_TOKEN:
        rx->token = byte;
        rx->crc = crc16_update(rx->crc, byte);
        rx->state = RX_INFO;
        break;
    default:
        rx_info_byte(rx, byte);
        break;
    }
    return SERIAL_RX_NONE;
}

const uint8_t *serial_rx_packet(const serial_rx *rx, uint8_t *len)
{
    *len = rx->count >= 2 ? (uint8_t)(rx->count - 2) : 0;
    return rx->buf;
}

uint8_t serial_rx_token(const serial_rx *rx)
{
    return rx->token;
}

/* Bounded, escaping frame writer. */
typedef struct frame_writer {
    uint8_t *out;
    uint16_t cap;
    uint16_t n;
    uint8_t overflow;
} frame_writer;

static void put_raw(frame_writer *w, uint8_t byte)
{
    if (w->n >= w->cap) {
        w->overflow = 1;
        return;
    }
    w->out[w->n++] = byte;
}

static void put_escaped(frame_writer *w, uint8_t byte)
{
    if (byte == SERIAL_SYNC || byte == SERIAL_ESC) {
        put_raw(w, SERIAL_ESC);
        put_raw(w, (uint8_t)(byte ^ SERIAL_ESC_XOR));
    } else {
        put_raw(w, byte);
    }
}

/* Flag, proto, body (with running CRC), CRC little-endian, flag. */
static uint16_t write_frame(uint8_t proto, const uint8_t *body, uint16_t body_len, uint8_t *out,
                            uint16_t cap)
{
    frame_writer w = {0, 0, 0, 0};
    uint16_t crc = crc16_update(CRC16_INIT, proto);
    uint16_t i;

    w.out = out;
    w.cap = cap;
    put_raw(&w, SERIAL_SYNC);
    put_escaped(&w, proto);
    for (i = 0; i < body_len; i++) {
        crc = crc16_update(crc, body[i]);
        put_escaped(&w, body[i]);
    }
    put_escaped(&w, (uint8_t)(crc & 0xFFu));
    put_escaped(&w, (uint8_t)(crc >> 8));
    put_raw(&w, SERIAL_SYNC);
    return w.overflow ? 0 : w.n;
}

uint16_t serial_frame_packet(const uint8_t *msg, uint16_t msg_len, uint8_t *out, uint16_t cap)
{
    tos_header h;

    if (!tos_msg_parse(&h, msg, msg_len)) {
        return 0;
    }
    return write_frame(SERIAL_PROTO_PACKET_NOACK, msg, (uint16_t)(TOS_HEADER_LEN + h.length), out,
                       cap);
}

uint16_t serial_frame_ack(uint8_t token, uint8_t *out, uint16_t cap)
{
    return write_frame(SERIAL_PROTO_ACK, &token, 1, out, cap);
}
