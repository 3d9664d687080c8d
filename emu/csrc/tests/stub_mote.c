#include "stub_mote.h"

#include <string.h>

stub_plan stub_plans[STUB_MAX_NODES];

static const stub_plan *plan_of(uint16_t id)
{
    static const stub_plan idle;
    return id < STUB_MAX_NODES ? &stub_plans[id] : &idle;
}

size_t mote_state_size(void) { return sizeof(mote_state); }

void mote_init(mote_state *st, uint16_t id, const mote_hal *hal)
{
    uint32_t boots = st->boots;
    memset(st, 0, sizeof *st);
    st->id = id;
    st->hal = hal;
    st->boots = boots + 1;
    if (plan_of(id)->send_at_ms)
        hal->set_alarm(hal->ctx, plan_of(id)->send_at_ms);
    if (plan_of(id)->sleep_cpu)
        hal->power(hal->ctx, MOTE_PWR_CPU, 0);
    if (plan_of(id)->radio_off)
        hal->power(hal->ctx, MOTE_PWR_RADIO, 0);
}

void mote_on_alarm(mote_state *st)
{
    uint8_t msg[5 + 49] = {0};
    uint16_t dest = plan_of(st->id)->dest;
    uint8_t data_len = plan_of(st->id)->data_len ? plan_of(st->id)->data_len : 4u;
    st->alarms++;
    msg[0] = (uint8_t)(dest & 0xFF);
    msg[1] = (uint8_t)(dest >> 8);
    msg[2] = 240;
    msg[3] = 0x7d;
    msg[4] = data_len;
    msg[5] = (uint8_t)(st->id & 0xFF);
    msg[6] = (uint8_t)(st->id >> 8);
    st->hal->radio_send(st->hal->ctx, msg, (uint8_t)(5u + data_len));
}

uint8_t mote_on_radio_rx(mote_state *st, const uint8_t *tos_msg, uint8_t len)
{
    if (len >= 7) {
        st->received++;
        st->last_src = (uint16_t)(tos_msg[5] | (tos_msg[6] << 8));
    }
    return !plan_of(st->id)->refuse;
}

void mote_on_send_done(mote_state *st, uint8_t acked)
{
    st->send_done++;
    st->acked = acked;
}

void mote_on_frame_start(mote_state *st, uint8_t *tos_msg, uint8_t len)
{
    (void)st;
    (void)tos_msg;
    (void)len;
}

void mote_on_uart_rx(mote_state *st, const uint8_t *bytes, uint16_t len)
{
    /* echo, so the UART path can be checked */
    if (st->id == MOTE_ROOT_ID)
        st->hal->uart_send(st->hal->ctx, bytes, len);
}

/* A line toward node 0: the parent is the next lower id. */
uint16_t mote_parent(const mote_state *st) { return st->id ? (uint16_t)(st->id - 1u) : 0x007Eu; }
uint8_t mote_depth(const mote_state *st) { return (uint8_t)st->id; }
