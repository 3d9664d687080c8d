/*
 * net_priv.h - the insides of emu_net, shared by net.c (lifecycle, event
 * loop) and hal_emu.c (the mote_hal each node's firmware calls).
 */
#ifndef EMU_NET_PRIV_H
#define EMU_NET_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "bigmem.h"
#include "bytefifo.h"
#include "emu.h"
#include "energy.h"
#include "evq.h"
#include "firmware/core/mote.h"
#include "medium.h"
#include "observations.h"
#include "rng.h"
#include "sensors.h"

/* Per-node binding: the HAL table the firmware holds, pointing back here. */
typedef struct emu_node {
    mote_hal hal;
    emu_net *net;
    uint32_t id;
    uint32_t rx_started_ms; /* hal.h rx_started_ms of the frame being delivered */
    int8_t rx_snr_db;       /* hal.h rx_snr_db of the same frame */
    uint64_t send_ok_us;    /* emu_config.send_gap_us: no frame is taken before this */
} emu_node;

/* mote_layout.c: where the firmware state's most read fields lie */
enum { EMU_HOT_CONTROL = 0, EMU_HOT_RUNS = 1, EMU_HOT_QUERY = 2, EMU_N_HOT = 3 };
void emu_mote_hot_range(int which, size_t *offset, size_t *len);

struct emu_net {
    emu_config cfg;
    const emu_platform *platform;
    uint64_t now_us;
    uint32_t now_ms; /* now_us / 1000 mod 2^32: the firmware's clock, read very often */
    uint64_t events;
    uint64_t alarm_events;
    evq q;
    emu_medium medium;
    emu_energy energy;
    emu_sensors sensors;
    emu_observations obs;
    bytefifo uart_out;
    uint8_t *motes; /* n x mote_stride bytes, in motes_mem */
    bigmem motes_mem;
    size_t mote_stride;
    /* lines of each mote's state to prefetch (mote_layout.c), within mote_state_size() */
    uint32_t hot_off[EMU_N_HOT];
    uint32_t hot_len[EMU_N_HOT];
    emu_node *nodes;
    emu_rng *node_rng;
    uint8_t *alive;
    uint8_t *leds;
    uint32_t *counter_block;
    uint32_t *counters[EMU_N_COUNTERS];
    /* fault pool: slot 2N + k */
    uint32_t *fault_node;
    uint8_t *fault_alive;
    uint32_t *fault_free; /* stack of free k */
    uint32_t n_fault_free;
};

static inline void emu_set_clock(emu_net *net, uint64_t now_us)
{
    net->now_us = now_us;
    net->now_ms = (uint32_t)(now_us / 1000u);
}

static inline mote_state *emu_mote(emu_net *net, uint32_t node)
{
    return (mote_state *)(void *)(net->motes + net->mote_stride * node);
}


/* attrs.c: sampling costs of the firmware catalog */
void emu_attrs_default_costs(emu_sensors *s);

/* hal_emu.c */
void emu_hal_bind(emu_node *node, emu_net *net, uint32_t id);
/* Connect (or not) the node's hal.observe to net->obs: no call at all while off. */
void emu_hal_observe(emu_node *node, int on);

#endif /* EMU_NET_PRIV_H */
