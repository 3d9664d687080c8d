/*
 * emu.h - the emulated network as Python sees it (mirrored in emu_api.cdef).
 *
 * One emu_net is N motes running the firmware core (core/mote.h) in one
 * contiguous block of N x mote_state_size() bytes, a radio medium, sensors,
 * an energy meter and a discrete-event loop in microseconds of virtual time.
 * Node 0 is the root; its UART is the byte stream a MIB510 basestation
 * would carry. Everything is allocated by emu_net_new and the setters;
 * emu_net_run_until never allocates.
 *
 * Nodes are indexed 0..N-1 everywhere in this API; their mote ids skip 126
 * (moteid.h). Observations and routing parents carry mote ids.
 *
 * Timer slots in the event queue: [0, N) node alarms, [N, 2N) node radios,
 * [2N, 2N + max_faults) scheduled kill/revive events.
 */
#ifndef EMU_EMU_H
#define EMU_EMU_H

#include <stdint.h>

#include "emu_types.h"
#include "energy.h"
#include "moteid.h"
#include "platform.h"

typedef struct emu_net emu_net;

typedef struct emu_config {
    uint32_t n_nodes;
    uint32_t platform; /* enum emu_platform_id */
    uint64_t seed;
    uint32_t lossless;
    double battery_j;     /* per node; 0 = unlimited */
    double tx_a;          /* transmit current override; 0 = platform default */
    uint32_t uart_capacity; /* root UART bytes buffered between reads */
    uint32_t max_faults;  /* kill/revive events pending at once */
    uint32_t send_gap_us; /* least time between two frames a node other than the root hands
                             its radio; 0 = none (a radio slower than the sample rate:
                             TODS 2005 Table V). The firmware retries a refused send. */
} emu_config;

/* NULL if the configuration is invalid or memory is short. */
emu_net *emu_net_new(const emu_config *cfg);
void emu_net_free(emu_net *net);

int emu_net_set_links(emu_net *net, const uint32_t *row, const uint32_t *dst, const float *prob);
int emu_net_set_link_prob(emu_net *net, uint32_t src, uint32_t dst, float prob);
/* SINR radio model (medium.h): received power per link, parallel to the dst array of
 * the last emu_net_set_links, and each node's noise floor, in dBm; the SINR (dB) at
 * which a receiver locks on a frame and the energy over the noise floor (dB) that
 * makes the channel busy (lock_db >= cca_db). */
int emu_net_set_link_powers(emu_net *net, const float *rx_dbm, const float *noise_dbm,
                            double lock_db, double cca_db);
int emu_net_set_link_power(emu_net *net, uint32_t src, uint32_t dst, float rx_dbm, float prob);
/* Reception probability of a TOS_Msg of tos_len bytes at snr_db, no interference. */
double emu_radio_prr(double snr_db, uint32_t tos_len);
void emu_net_set_link_decay(emu_net *net, double per_hour);

int emu_net_add_source(emu_net *net, const emu_source_spec *spec);
int emu_net_assign_source(emu_net *net, uint32_t attr, int source, uint32_t lo, uint32_t hi);
int emu_net_set_sensor_cost(emu_net *net, uint32_t attr, double joules, uint32_t time_us);

/* Catalog attribute id of `name` (firmware/query/catalog.h), or 0x80 if unknown. */
uint32_t emu_attr_id(const char *name);
/* 1 if the firmware reads attribute `attr` through hal.sensor_read. */
int emu_attr_is_sensor(uint32_t attr);

/* Boots every node (mote_init) at the current virtual time. */
void emu_net_boot(emu_net *net);
/* Processes every event up to and including t_us; the clock ends at t_us. */
void emu_net_run_until(emu_net *net, uint64_t t_us);
uint64_t emu_net_now_us(const emu_net *net);
uint64_t emu_net_events(const emu_net *net);
/* Of those, the firmware alarms fired (the rest: radio timers and faults). */
uint64_t emu_net_alarm_events(const emu_net *net);

/* Root UART: bytes the root sent since the last read / bytes for the root. */
uint32_t emu_net_uart_read(emu_net *net, uint8_t *out, uint32_t max);
uint64_t emu_net_uart_overflow(const emu_net *net);
void emu_net_uart_write(emu_net *net, const uint8_t *bytes, uint16_t len);

/* alive = 0 kills `node` at at_us, 1 reboots it. -1 if the fault pool is full
 * (or at_us is years beyond every pending event). */
int emu_net_schedule_fault(emu_net *net, uint32_t node, uint64_t at_us, uint32_t alive);

/* Brings every node's energy figures up to the current time and refreshes
 * the arrays emu_net_joules / emu_net_phase_us point to (they change only here). */
void emu_net_settle_energy(emu_net *net);
const double *emu_net_joules(const emu_net *net, uint32_t phase);
const uint64_t *emu_net_phase_us(const emu_net *net, uint32_t phase);
const uint32_t *emu_net_counters(const emu_net *net, uint32_t counter);
const uint8_t *emu_net_alive(const emu_net *net);
const uint8_t *emu_net_leds(const emu_net *net);
/* The node's firmware state block (for read-only introspection). */
void *emu_net_mote(emu_net *net, uint32_t node);
/* Each node's routing-tree parent (a mote id) and depth as its firmware holds
 * them (0xFFFF / 0xFF: no route; the root's parent is the UART address). */
void emu_net_routing(emu_net *net, uint16_t *parent, uint8_t *depth);

/*
 * Ground-truth observations (observations.h): off by default. While on, every
 * hal.observe report of every node is kept until cleared; Python drains them
 * between run slices.
 */
void emu_net_record_observations(emu_net *net, int on);
uint32_t emu_net_observation_count(const emu_net *net);
const emu_observation *emu_net_observations(const emu_net *net);
void emu_net_clear_observations(emu_net *net);
uint64_t emu_net_observations_lost(const emu_net *net);

#endif /* EMU_EMU_H */
