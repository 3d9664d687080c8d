/*
 * radio_test_main.c - a tiny AVR image around firmware/avr/cc1000.c for the
 * two-node simavr test (radio_harness.c).
 *
 * Built with -DNODE_ID=n. Node 1 sends a unicast TOS_Msg to node 0 every
 * 100 ms (a send still in flight delays the next; an unacked one is repeated
 * up to MAX_TRIES times, as the core does); with -DBOTH_SEND node 0 also sends to node 1 at the same instants,
 * so the two collide unless CSMA separates them. Every frame carries a
 * sequence number; a receiver counts frames from its peer and the sequence
 * gaps. The counts live in `radio_report`, which the harness reads from SRAM
 * by symbol.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <stdint.h>

#include "../../../firmware/avr/cc1000.h"

#ifndef NODE_ID
#error "build with -DNODE_ID=<n>"
#endif
#define PEER (NODE_ID == 0 ? 1u : 0u)
#define PERIOD_MS 100u
#define MSG_TYPE 0x42u
#define MSG_GROUP 0x7Du
#define DATA_LEN 20u
#define MAX_TRIES 4u /* the core's retransmissions do the same for unacked unicasts */
#ifndef BOTH_SEND
#define BOTH_SEND 0
#endif

uint16_t TOS_LOCAL_ADDRESS = NODE_ID;

typedef struct radio_report {
    uint16_t magic;        /* 0xC1C1 once cc1000_init returned */
    uint16_t sent;         /* cc1000_send accepted */
    uint16_t refused;      /* cc1000_send refused (a send was still in flight) */
    uint16_t done;         /* send_done upcalls */
    uint16_t acked;        /* ... with acked = 1 */
    uint16_t frame_starts;
    uint16_t received;     /* frames of ours from the peer */
    uint16_t gaps;         /* sequence numbers skipped by them */
    uint16_t dups;
    uint16_t foreign;      /* CRC-good frames that were not ours */
    uint16_t floor;
    uint16_t retries;      /* unacked sends repeated (same sequence number) */
    uint16_t lost;         /* sequence numbers given up after MAX_TRIES */
    cc1000_stats st;
} radio_report;

volatile radio_report radio_report_v;
static volatile uint16_t ms;
static uint8_t tries, retry_pending, in_flight;
static uint16_t last_seq = 0xFFFFu;
static uint8_t msg[5u + DATA_LEN];

ISR(TIMER1_COMPA_vect)
{
    ms++;
}

void avr_radio_frame_start(uint8_t *tos_msg, uint8_t len)
{
    (void)tos_msg;
    (void)len;
    radio_report_v.frame_starts++;
}

uint8_t avr_radio_received(const uint8_t *m, uint8_t len)
{
    uint16_t seq;
    uint8_t i;
    if (len != 5u + DATA_LEN || m[2] != MSG_TYPE || m[3] != MSG_GROUP || m[5] != PEER) {
        radio_report_v.foreign++;
        return 0;
    }
    for (i = 8; i < len; i++) {
        if (m[i] != (uint8_t)(i ^ m[6])) {
            radio_report_v.foreign++; /* a CRC-good frame with a wrong payload */
            return 0;
        }
    }
    seq = (uint16_t)(m[6] | (uint16_t)m[7] << 8);
    if (seq == last_seq) {
        radio_report_v.dups++;
    } else {
        if (last_seq != 0xFFFFu && seq != (uint16_t)(last_seq + 1u)) {
            radio_report_v.gaps = (uint16_t)(radio_report_v.gaps + (uint16_t)(seq - last_seq - 1u));
        }
        radio_report_v.received++;
        last_seq = seq;
    }
    return 1;
}

void avr_radio_send_done(uint8_t acked)
{
    radio_report_v.done++;
    in_flight = 0;
    if (acked) {
        radio_report_v.acked++;
    } else if (tries < MAX_TRIES) {
        retry_pending = 1;
    } else {
        radio_report_v.lost++;
    }
}

uint16_t avr_radio_rx_started_ms(void)
{
    return ms;
}

static void send_again(void)
{
    retry_pending = 0;
    tries++;
    radio_report_v.retries++;
    if (cc1000_send(msg, sizeof msg)) {
        in_flight = 1;
    } else {
        radio_report_v.refused++;
    }
}

static void send_next(uint16_t seq)
{
    uint8_t i;
    tries = 1;
    msg[0] = (uint8_t)PEER;
    msg[1] = 0;
    msg[2] = MSG_TYPE;
    msg[3] = MSG_GROUP;
    msg[4] = DATA_LEN;
    msg[5] = NODE_ID;
    msg[6] = (uint8_t)seq;
    msg[7] = (uint8_t)(seq >> 8);
    for (i = 8; i < sizeof msg; i++) {
        msg[i] = (uint8_t)(i ^ msg[6]);
    }
    if (cc1000_send(msg, sizeof msg)) {
        radio_report_v.sent++;
        in_flight = 1;
    } else {
        radio_report_v.refused++;
    }
}

int main(void)
{
    uint16_t next = PERIOD_MS, seq = 0, now;
    uint8_t due = 0;
    cc1000_stats st;
    TCCR1A = 0;
    TCCR1B = (uint8_t)(_BV(WGM12) | _BV(CS11)); /* CTC, clk/8 */
    OCR1A = (uint16_t)(F_CPU / 8u / 1000u - 1u);
    TIMSK |= _BV(OCIE1A);
    cc1000_init();
    radio_report_v.magic = 0xC1C1u;
    sei();
    set_sleep_mode(SLEEP_MODE_IDLE);
    for (;;) {
        cc1000_poll();
        if (retry_pending) {
            send_again();
        }
        cli();
        now = ms;
        sei();
        if ((NODE_ID != 0 || BOTH_SEND) && (int16_t)(now - next) >= 0) {
            next = (uint16_t)(next + PERIOD_MS);
            due++; /* a send still in flight delays the next one, never drops it */
        }
        if (due && !in_flight && !retry_pending) {
            due--;
            send_next(seq++);
        }
        cc1000_get_stats(&st);
        radio_report_v.st = st;
        radio_report_v.floor = cc1000_noise_floor();
        cli();
        sleep_enable();
        sei();
        sleep_cpu(); /* the next SPI byte or ms tick wakes us */
        sleep_disable();
    }
}
