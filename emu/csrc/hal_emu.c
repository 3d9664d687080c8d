/*
 * hal_emu.c - the mote_hal of an emulated node.
 *
 * Every callback receives the node's emu_node as ctx and acts on the shared
 * network: the clock is the network's virtual clock, alarms and radio sends
 * become timer slots in its event queue, sensor reads go to the sensor table
 * and are charged to the energy meter, power() switches the meter's phases.
 * Nothing here calls back into the firmware: stimuli only ever come from the
 * event loop, so the core never re-enters itself.
 */
#include "net_priv.h"

static emu_net *net_of(void *ctx)
{
    return ((emu_node *)ctx)->net;
}

static uint32_t id_of(void *ctx)
{
    return ((emu_node *)ctx)->id;
}

static uint32_t hal_now_ms(void *ctx)
{
    return net_of(ctx)->now_ms;
}

static void hal_set_alarm(void *ctx, uint32_t at_ms)
{
    emu_net *net = net_of(ctx);
    uint64_t now_ms = net->now_us / 1000u;
    /* wrap-safe: the firmware's clock is uint32 milliseconds */
    int32_t ahead = (int32_t)(at_ms - (uint32_t)now_ms);
    uint64_t due = ahead > 0 ? (now_ms + (uint64_t)ahead) * 1000u : net->now_us;
    if (net->alive[id_of(ctx)])
        evq_schedule(&net->q, id_of(ctx), due);
}

static uint8_t hal_radio_send(void *ctx, const uint8_t *tos_msg, uint8_t len)
{
    emu_net *net = net_of(ctx);
    uint32_t id = id_of(ctx);
    emu_node *node = (emu_node *)ctx;
    uint32_t gap = id == MOTE_ROOT_ID ? 0u : net->cfg.send_gap_us;
    if (!net->alive[id] || (gap && net->now_us < node->send_ok_us))
        return 0; /* refused: the firmware tries again shortly (txpath.c, radio_send) */
    if (!medium_send(&net->medium, id, net->now_us, tos_msg, len))
        return 0;
    node->send_ok_us = net->now_us + gap;
    return 1;
}

static void hal_uart_send(void *ctx, const uint8_t *bytes, uint16_t len)
{
    emu_net *net = net_of(ctx);
    uint32_t id = id_of(ctx);
    net->counters[EMU_CNT_UART_BYTES][id] += len;
    if (id == MOTE_ROOT_ID && net->alive[id])
        bytefifo_push(&net->uart_out, bytes, len);
}

static int16_t hal_sensor_read(void *ctx, uint8_t attr)
{
    emu_net *net = net_of(ctx);
    uint32_t id = id_of(ctx);
    emu_sensors *s = &net->sensors;
    if (attr < SENSORS_MAX_ATTRS)
        energy_charge_sample(&net->energy, id, s->cost_j[attr], s->cost_us[attr]);
    net->counters[EMU_CNT_SAMPLES][id]++;
    return sensors_read(s, id, attr, net->now_us);
}

static void hal_power(void *ctx, uint8_t part, uint8_t on)
{
    emu_net *net = net_of(ctx);
    uint32_t id = id_of(ctx);
    if (!net->alive[id])
        return;
    if (part == MOTE_PWR_CPU) {
        energy_switch(&net->energy, id, net->now_us, ENERGY_CPU, on);
    } else if (part == MOTE_PWR_RADIO) {
        energy_switch(&net->energy, id, net->now_us, ENERGY_RADIO, on);
        medium_set_listening(&net->medium, id, on);
    }
}

static void hal_leds(void *ctx, uint8_t bits)
{
    net_of(ctx)->leds[id_of(ctx)] = bits;
}

static int8_t hal_rx_snr_db(void *ctx)
{
    return ((emu_node *)ctx)->rx_snr_db;
}

static uint32_t hal_rx_started_ms(void *ctx)
{
    return ((emu_node *)ctx)->rx_started_ms;
}

static uint16_t hal_rand16(void *ctx)
{
    return (uint16_t)(emu_rng_next(&net_of(ctx)->node_rng[id_of(ctx)]) >> 48);
}

static void hal_observe(void *ctx, const mote_observation *obs)
{
    emu_net *net = net_of(ctx);
    observations_add(&net->obs, net->now_us, emu_mote_id(id_of(ctx)), obs);
}

void emu_hal_bind(emu_node *node, emu_net *net, uint32_t id)
{
    node->net = net;
    node->id = id;
    node->hal.ctx = node;
    node->hal.now_ms = hal_now_ms;
    node->hal.set_alarm = hal_set_alarm;
    node->hal.radio_send = hal_radio_send;
    node->hal.uart_send = hal_uart_send;
    node->hal.sensor_read = hal_sensor_read;
    node->hal.power = hal_power;
    node->hal.selective_acks = 1; /* the CC1000 stack acks in software */
    node->hal.leds = hal_leds;
    node->hal.rand16 = hal_rand16;
    node->hal.rx_started_ms = hal_rx_started_ms;
    node->hal.rx_snr_db = hal_rx_snr_db;
    node->hal.observe = net->obs.on ? hal_observe : NULL;
}

void emu_hal_observe(emu_node *node, int on)
{
    node->hal.observe = on ? hal_observe : NULL;
}
