/*
 * firmware_fuzz.c - libFuzzer harness for the firmware's receive paths.
 *
 * One input drives a small network (2-5 nodes, root 0, chain or star) through a
 * fake HAL: a shared logical clock, one alarm per node, a radio that delivers
 * each sent frame to the listening neighbours after SIM_AIR_MS (with
 * fuzz-chosen losses) and a UART. The input is a configuration byte and then a
 * sequence of operations, so the fuzzer reaches the state machines (assembly,
 * running queries, routing, sharing, stops) and not just one packet's parser:
 *
 *   byte 0: config  bits 0-1 nodes-2, bit 2 star (else chain), bit 3 radio
 *           without selective acks, bit 4 start the clock 10 s before it wraps
 *   then ops, op byte: kind = op & 7, node = (op >> 3) % nodes
 *     0 RADIO    len, len bytes: a TOS_Msg heard by `node` (any AM type)
 *     1 UART     len, len bytes: raw serial bytes into `node`'s UART
 *     2 UARTPKT  len, len bytes: a TOS_Msg framed (protocol 66, or 65 if op bit 7)
 *                by the firmware's own framer, so the fuzzer need not find CRCs
 *     3 RUN      2 bytes LE: let the network run that many milliseconds
 *     4 LOSS     1 byte: drop pattern of the radio (bit i: drop the i-th delivery
 *                of every 8)
 *     5 SENSOR   attr, 2 bytes LE: a sensor value of `node`
 *     6 STEP     the network runs to its next event
 *     7 LONGRUN  1 byte: run that many seconds
 *
 * Every input starts from freshly initialised nodes: nothing carries over.
 * Besides the sanitizers, the HAL aborts where the core breaks its side of the
 * HAL contract: a frame handed to the radio that is not a well-formed TOS_Msg of
 * exactly its stated length, an oversized UART write, a bad sensor id.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined (tests/fuzz/run_firmware.sh);
 * without FUZZ_LIBFUZZER it links with replay_main.c so ctest replays the seed
 * corpus under gcc's sanitizers too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mote.h"
#include "net/mhop.h"
#include "net/serial.h"
#include "query/catalog.h"

#define SIM_MAX_NODES 5
#define SIM_AIR_MS 5u        /* send to delivery */
#define SIM_START_MS 1u      /* send to start symbol */
/* Bounds per input so one slow input cannot stall the fuzzer: deliveries and
 * alarms cost microseconds, time itself nothing. */
#define SIM_MAX_EVENTS 1000u
#define SIM_MAX_RUN_MS (5u * 60u * 1000u)

typedef struct fz_node {
    mote_hal hal;
    mote_state *st;
    uint32_t alarm;
    uint8_t alarm_set;
    uint8_t in_flight;
    uint8_t started;  /* mote_on_frame_start done for the frame in flight */
    uint8_t radio_on;
    uint32_t start_at, deliver_at;
    uint8_t pkt[TOS_MSG_MAX];
    uint8_t pkt_len;
    int16_t sensor[CATALOG_COUNT];
} fz_node;

typedef struct fz_net {
    fz_node node[SIM_MAX_NODES];
    unsigned n;
    uint8_t link[SIM_MAX_NODES][SIM_MAX_NODES];
    uint32_t now;
    uint16_t rng;
    uint8_t loss;      /* drop pattern, bit per delivery mod 8 */
    uint8_t loss_i;
    uint32_t events;
    uint32_t run_ms;   /* total time run in this input */
} fz_net;

static fz_net net;
/* mote_state is opaque: room for the largest node, aligned for any member. */
static union {
    long double ld; /* C99 has no max_align_t */
    void *p;
    uint64_t u;
    uint8_t bytes[MOTE_STATE_MAX];
} states[SIM_MAX_NODES];

static fz_node *node_of(void *ctx) { return (fz_node *)ctx; }

static uint32_t h_now(void *ctx)
{
    (void)ctx;
    return net.now;
}

static void h_alarm(void *ctx, uint32_t at)
{
    node_of(ctx)->alarm = at;
    node_of(ctx)->alarm_set = 1;
}

static uint8_t h_send(void *ctx, const uint8_t *m, uint8_t len)
{
    fz_node *d = node_of(ctx);
    tos_header h;
    /* The core's side of the contract: a whole TOS_Msg, exactly as long as it says. */
    if (len > TOS_MSG_MAX || !tos_msg_parse(&h, m, len) || len != TOS_HEADER_LEN + h.length)
        abort();
    if (d->in_flight)
        return 0;
    memcpy(d->pkt, m, len);
    d->pkt_len = len;
    d->in_flight = 1;
    d->started = 0;
    d->start_at = net.now + SIM_START_MS;
    d->deliver_at = net.now + SIM_AIR_MS;
    return 1;
}

static void h_uart(void *ctx, const uint8_t *b, uint16_t len)
{
    (void)ctx;
    if (len > SERIAL_TX_MAX)
        abort();
    /* Touch every byte so ASan sees a bad buffer. */
    volatile uint8_t sink = 0;
    uint16_t i;
    for (i = 0; i < len; i++)
        sink ^= b[i];
    (void)sink;
}

static int16_t h_sensor(void *ctx, uint8_t attr)
{
    if (attr >= CATALOG_COUNT)
        abort();
    return node_of(ctx)->sensor[attr];
}

static void h_power(void *ctx, uint8_t part, uint8_t on)
{
    if (part == MOTE_PWR_RADIO)
        node_of(ctx)->radio_on = on;
}

static void h_leds(void *ctx, uint8_t bits)
{
    (void)ctx;
    (void)bits;
}

static uint16_t h_rand(void *ctx)
{
    (void)ctx;
    net.rng = (uint16_t)(net.rng * 25173u + 13849u);
    return net.rng;
}

static void h_observe(void *ctx, const mote_observation *obs)
{
    volatile int32_t sink = 0;
    uint8_t i;
    (void)ctx;
    if (obs->kind == MOTE_OBS_SAMPLED) {
        if (obs->n_fields > MOTE_OBS_MAX_VALUES)
            abort();
        for (i = 0; i < obs->n_fields; i++)
            sink ^= obs->values[i];
    }
    (void)sink;
}

static uint32_t h_rx_started(void *ctx)
{
    (void)ctx;
    return net.now - (SIM_AIR_MS - SIM_START_MS);
}

static void net_init(uint8_t config)
{
    unsigned i;
    memset(&net, 0, sizeof net);
    memset(states, 0, sizeof states);
    net.n = 2u + (config & 3u);
    net.rng = 1;
    net.now = (config & 0x10u) ? 0xFFFFFFFFu - 10000u : 0u;
    for (i = 1; i < net.n; i++) {
        unsigned peer = (config & 4u) ? 0u : i - 1u;
        net.link[i][peer] = net.link[peer][i] = 1;
    }
    for (i = 0; i < net.n; i++) {
        fz_node *d = &net.node[i];
        d->st = (mote_state *)(void *)states[i].bytes;
        d->hal.ctx = d;
        d->hal.now_ms = h_now;
        d->hal.set_alarm = h_alarm;
        d->hal.radio_send = h_send;
        d->hal.uart_send = h_uart;
        d->hal.sensor_read = h_sensor;
        d->hal.power = h_power;
        d->hal.selective_acks = (config & 8u) ? 0u : 1u;
        d->hal.leds = h_leds;
        d->hal.rand16 = h_rand;
        d->hal.observe = h_observe;
        d->hal.rx_started_ms = h_rx_started;
    }
    for (i = 0; i < net.n; i++)
        mote_init(net.node[i].st, (uint16_t)i, &net.node[i].hal);
}

static uint8_t lost(void)
{
    uint8_t drop = (uint8_t)((net.loss >> (net.loss_i & 7u)) & 1u);
    net.loss_i++;
    return drop;
}

static void deliver(unsigned i)
{
    fz_node *d = &net.node[i];
    uint8_t pkt[TOS_MSG_MAX], len = d->pkt_len, acked = 0;
    uint16_t addr = (uint16_t)(d->pkt[0] | d->pkt[1] << 8);
    unsigned j;
    /* A receiver may send (into its own buffer): keep this frame apart. */
    memcpy(pkt, d->pkt, len);
    d->in_flight = 0;
    for (j = 0; j < net.n; j++) {
        fz_node *r = &net.node[j];
        uint8_t taken;
        if (!net.link[i][j] || !r->radio_on || lost())
            continue;
        taken = mote_on_radio_rx(r->st, pkt, len);
        if (addr == j && (taken || !r->hal.selective_acks))
            acked = 1;
    }
    mote_on_send_done(d->st, acked);
}

static uint8_t due(uint32_t t, uint32_t now) { return (int32_t)(now - t) >= 0; }

/* The earliest pending event's time relative to now; 0 if none. */
static uint8_t next_event(uint32_t *dt)
{
    unsigned i;
    uint8_t any = 0;
    uint32_t best = 0;
    for (i = 0; i < net.n; i++) {
        fz_node *d = &net.node[i];
        uint32_t t[3];
        uint8_t k, n = 0;
        if (d->alarm_set)
            t[n++] = d->alarm;
        if (d->in_flight)
            t[n++] = d->started ? d->deliver_at : d->start_at;
        for (k = 0; k < n; k++) {
            uint32_t rel = due(t[k], net.now) ? 0u : t[k] - net.now;
            if (!any || rel < best)
                best = rel;
            any = 1;
        }
    }
    *dt = best;
    return any;
}

/* Fire everything due at `now`: start symbols, deliveries, then alarms. */
static void fire_due(void)
{
    unsigned i;
    for (i = 0; i < net.n && net.events < SIM_MAX_EVENTS; i++) {
        fz_node *d = &net.node[i];
        if (d->in_flight && !d->started && due(d->start_at, net.now)) {
            d->started = 1;
            net.events++;
            mote_on_frame_start(d->st, d->pkt, d->pkt_len);
        }
        if (d->in_flight && d->started && due(d->deliver_at, net.now)) {
            net.events++;
            deliver(i);
        }
    }
    for (i = 0; i < net.n && net.events < SIM_MAX_EVENTS; i++) {
        fz_node *d = &net.node[i];
        if (d->alarm_set && due(d->alarm, net.now)) {
            d->alarm_set = 0;
            net.events++;
            mote_on_alarm(d->st);
        }
    }
}

static void run_for(uint32_t ms)
{
    uint32_t left = ms, dt;
    if (ms > SIM_MAX_RUN_MS - net.run_ms)
        left = ms = SIM_MAX_RUN_MS - net.run_ms;
    net.run_ms += ms;
    while (net.events < SIM_MAX_EVENTS && next_event(&dt) && dt <= left) {
        net.now += dt;
        left -= dt;
        fire_due();
    }
    net.now += left;
}

static void step(void)
{
    uint32_t dt;
    if (net.events < SIM_MAX_EVENTS && next_event(&dt))
        run_for(dt);
}

/* Each radio frame gets its own exactly sized buffer, so ASan sees reads past it. */
static void radio_rx(fz_node *d, const uint8_t *bytes, uint8_t len)
{
    uint8_t *copy = malloc(len ? len : 1u);
    if (!copy)
        return;
    memcpy(copy, bytes, len);
    (void)mote_on_radio_rx(d->st, copy, len);
    free(copy);
}

static void uart_rx(fz_node *d, const uint8_t *bytes, uint16_t len)
{
    uint8_t *copy = malloc(len ? len : 1u);
    if (!copy)
        return;
    memcpy(copy, bytes, len);
    mote_on_uart_rx(d->st, copy, len);
    free(copy);
}

static void uart_packet(fz_node *d, const uint8_t *pkt, uint8_t len, uint8_t with_ack, uint8_t token)
{
    uint8_t frame[SERIAL_TX_MAX + 3];
    uint16_t n = serial_frame_packet(pkt, len, frame, (uint16_t)sizeof frame);
    if (!n)
        return;
    if (with_ack) {
        /* Rebuild as protocol 65 with a token: proto, token, packet, CRC. */
        uint8_t raw[2u + TOS_MSG_MAX + 2u];
        uint16_t crc, k = 0, i;
        raw[k++] = 65;
        raw[k++] = token;
        memcpy(raw + k, pkt, len);
        k = (uint16_t)(k + len);
        crc = 0;
        for (i = 0; i < k; i++) {
            uint8_t b;
            crc ^= (uint16_t)(raw[i] << 8);
            for (b = 0; b < 8; b++)
                crc = (uint16_t)((crc & 0x8000u) ? (uint16_t)(crc << 1) ^ 0x1021u : (uint16_t)(crc << 1));
        }
        raw[k++] = (uint8_t)(crc & 0xFFu);
        raw[k++] = (uint8_t)(crc >> 8);
        n = 0;
        frame[n++] = 0x7E;
        for (i = 0; i < k; i++) {
            if (raw[i] == 0x7E || raw[i] == 0x7D) {
                frame[n++] = 0x7D;
                frame[n++] = (uint8_t)(raw[i] ^ 0x20u);
            } else {
                frame[n++] = raw[i];
            }
        }
        frame[n++] = 0x7E;
    }
    uart_rx(d, frame, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t pos = 1;
    if (size < 1)
        return 0;
    net_init(data[0]);
    while (pos < size && net.events < SIM_MAX_EVENTS) {
        uint8_t op = data[pos++];
        fz_node *d = &net.node[(op >> 3) % net.n];
        size_t len;
        switch (op & 7u) {
        case 0:
        case 1:
        case 2:
            if (pos >= size)
                return 0;
            len = data[pos++];
            if (len > size - pos)
                len = size - pos;
            if ((op & 7u) == 0)
                radio_rx(d, data + pos, (uint8_t)len);
            else if ((op & 7u) == 1)
                uart_rx(d, data + pos, (uint16_t)len);
            else if (len <= TOS_MSG_MAX)
                uart_packet(d, data + pos, (uint8_t)len, (uint8_t)(op >> 7), (uint8_t)op);
            pos += len;
            break;
        case 3:
            if (size - pos < 2)
                return 0;
            run_for((uint32_t)(data[pos] | data[pos + 1] << 8));
            pos += 2;
            break;
        case 4:
            if (pos >= size)
                return 0;
            net.loss = data[pos++];
            break;
        case 5:
            if (size - pos < 3)
                return 0;
            d->sensor[data[pos] % CATALOG_COUNT] = (int16_t)(uint16_t)(data[pos + 1] | data[pos + 2] << 8);
            pos += 3;
            break;
        case 6:
            step();
            break;
        default:
            if (pos >= size)
                return 0;
            run_for((uint32_t)data[pos++] * 1000u);
            break;
        }
    }
    return 0;
}
