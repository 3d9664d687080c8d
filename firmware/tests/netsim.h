/*
 * netsim.h - a tiny in-test network for whole-node tests: a shared virtual
 * clock, one alarm per node, a radio that delivers a packet after RADIO_MS to
 * every listening neighbour in `link` (and to nobody else) and acknowledges a
 * unicast when its addressee heard it, and a UART capture of the root's
 * frames, decoded with the firmware's own serial receiver.
 * Test-only; the real emulator lives in emu/.
 */
#ifndef MOTE_TESTS_NETSIM_H
#define MOTE_TESTS_NETSIM_H

#include <stdint.h>
#include <string.h>

#include "core/mote_state.h"
#include "net/serial.h"

#define SIM_NODES 8
#define SIM_RADIO_MS 5u
#define SIM_MAX_OUT 512

typedef struct sim_node {
    mote_state st;
    mote_hal hal;
    uint32_t alarm;
    int alarm_set;
    int in_flight;        /* packet being "transmitted" */
    uint32_t deliver_at;
    uint8_t pkt[TOS_MSG_MAX];
    uint8_t pkt_len;
    int16_t sensor[CATALOG_COUNT];
    uint8_t power;
    uint32_t power_changes;
    uint32_t radio_ms; /* this node's frames on the air, if not the sim's radio_ms */
} sim_node;

typedef struct sim {
    sim_node node[SIM_NODES];
    int n;
    uint8_t link[SIM_NODES][SIM_NODES];
    uint8_t drop[SIM_NODES][SIM_NODES]; /* frames from i that j will miss, next first */
    uint32_t now;
    uint16_t rng;
    serial_rx uart;       /* decodes what the root writes to the UART */
    uint8_t out[SIM_MAX_OUT][TOS_MSG_MAX]; /* UART packets, in order */
    uint8_t out_len[SIM_MAX_OUT];
    int n_out;
    uint32_t sent_on_air;
    uint32_t bundles_on_air; /* AM_BUNDLE frames among them */
    uint32_t requests_on_air; /* AM_QUERY_REQUEST frames among them */
    uint32_t beacons_from[SIM_NODES]; /* AM_ROUTE_BEACON frames among them, by sender */
    uint8_t abandon[SIM_NODES]; /* this many of node i's next `abandon_am` sends find the
                                   channel busy: nobody hears them (HAL_SEND_ABANDONED) */
    uint8_t abandon_am;
    uint32_t radio_ms;       /* a frame's time on the air (SIM_RADIO_MS) */
} sim;

static sim *g_sim;

static sim_node *sim_of(void *ctx) { return (sim_node *)ctx; }
static uint32_t h_now(void *ctx) { (void)ctx; return g_sim->now; }
static void h_alarm(void *ctx, uint32_t at) { sim_of(ctx)->alarm = at; sim_of(ctx)->alarm_set = 1; }
static uint8_t h_send(void *ctx, const uint8_t *m, uint8_t len)
{
    sim_node *n = sim_of(ctx);
    if (n->in_flight)
        return 0;
    memcpy(n->pkt, m, len);
    n->pkt_len = len;
    n->in_flight = 1;
    n->deliver_at = g_sim->now + (n->radio_ms ? n->radio_ms : g_sim->radio_ms);
    g_sim->sent_on_air++;
    g_sim->bundles_on_air += m[2] == AM_BUNDLE;
    g_sim->requests_on_air += m[2] == AM_QUERY_REQUEST;
    g_sim->beacons_from[n - g_sim->node] += m[2] == AM_ROUTE_BEACON;
    return 1;
}
static void h_uart(void *ctx, const uint8_t *b, uint16_t len)
{
    uint16_t i;
    (void)ctx;
    for (i = 0; i < len; i++) {
        serial_rx_event ev = serial_rx_byte(&g_sim->uart, b[i]);
        if (ev != SERIAL_RX_NONE && g_sim->n_out < SIM_MAX_OUT) {
            uint8_t n;
            const uint8_t *p = serial_rx_packet(&g_sim->uart, &n);
            memcpy(g_sim->out[g_sim->n_out], p, n);
            g_sim->out_len[g_sim->n_out++] = n;
        }
    }
}
static int16_t h_sensor(void *ctx, uint8_t attr) { return sim_of(ctx)->sensor[attr]; }
static void h_power(void *ctx, uint8_t part, uint8_t on)
{
    if (part == MOTE_PWR_RADIO) {
        sim_of(ctx)->power = on;
        sim_of(ctx)->power_changes++;
    }
}
static void h_leds(void *ctx, uint8_t bits) { (void)ctx; (void)bits; }
static uint16_t h_rand(void *ctx)
{
    (void)ctx;
    g_sim->rng = (uint16_t)(g_sim->rng * 25173u + 13849u);
    return g_sim->rng;
}

static void sim_init(sim *s, int n)
{
    int i;
    memset(s, 0, sizeof *s);
    g_sim = s;
    s->n = n;
    s->rng = 1;
    s->radio_ms = SIM_RADIO_MS;
    serial_rx_init(&s->uart);
    for (i = 0; i < n; i++) {
        sim_node *d = &s->node[i];
        d->hal.ctx = d;
        d->hal.now_ms = h_now;
        d->hal.set_alarm = h_alarm;
        d->hal.radio_send = h_send;
        d->hal.uart_send = h_uart;
        d->hal.sensor_read = h_sensor;
        d->hal.power = h_power;
        d->hal.leds = h_leds;
        d->hal.rand16 = h_rand;
    }
    for (i = 0; i < n; i++)
        mote_init(&s->node[i].st, (uint16_t)i, &s->node[i].hal);
}

static void sim_link(sim *s, int a, int b)
{
    s->link[a][b] = 1;
    s->link[b][a] = 1;
}

/* Advance to `until`, 1 ms at a time: deliveries first, then alarms. */
static void sim_run(sim *s, uint32_t until)
{
    int i, j;
    while (s->now < until) {
        s->now++;
        for (i = 0; i < s->n; i++) {
            sim_node *d = &s->node[i];
            if (d->in_flight && d->deliver_at <= s->now) {
                uint16_t addr = (uint16_t)(d->pkt[0] | d->pkt[1] << 8);
                uint8_t acked = 0;
                d->in_flight = 0;
                if (s->abandon[i] && d->pkt[2] == s->abandon_am) {
                    s->abandon[i]--;
                    mote_on_send_done(&d->st, HAL_SEND_ABANDONED);
                    continue;
                }
                for (j = 0; j < s->n; j++)
                    if (s->link[i][j] && s->drop[i][j])
                        s->drop[i][j]--;
                    else if (s->link[i][j] && s->node[j].power) { /* a sleeping radio hears nothing */
                        acked = (uint8_t)(acked || addr == (uint16_t)j);
                        mote_on_radio_rx(&s->node[j].st, d->pkt, d->pkt_len);
                    }
                mote_on_send_done(&d->st, acked ? HAL_SEND_ACKED : HAL_SEND_UNACKED);
            }
        }
        for (i = 0; i < s->n; i++) {
            sim_node *d = &s->node[i];
            if (d->alarm_set && (int32_t)(s->now - d->alarm) >= 0) {
                d->alarm_set = 0;
                mote_on_alarm(&d->st);
            }
        }
    }
}

/* Hand a TOS packet (header + data) to the root's UART as a protocol-66 frame. */
static void sim_uart_to_root(sim *s, const uint8_t *data, uint8_t len, uint8_t am)
{
    uint8_t pkt[TOS_MSG_MAX], frame[SERIAL_TX_MAX];
    uint16_t n;
    pkt[0] = 0xFF;
    pkt[1] = 0xFF;
    pkt[2] = am;
    pkt[3] = 0x7D;
    pkt[4] = len;
    memcpy(pkt + 5, data, len);
    n = serial_frame_packet(pkt, (uint16_t)(5 + len), frame, sizeof frame);
    mote_on_uart_rx(&s->node[0].st, frame, n);
}

#endif /* MOTE_TESTS_NETSIM_H */
