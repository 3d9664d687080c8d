/*
 * energy.h - per-node energy meter, integrated over virtual time.
 *
 * Mechanism: each node has a small power state (CPU on, radio listening,
 * radio transmitting) and the time it last changed. Whenever the state
 * changes, or someone wants current figures, the interval since the last
 * change is "settled": its length is added to the time of every phase that
 * was on. With the CPU off the mote draws its sleep current; while the radio
 * transmits its listen current is replaced by the transmit current. Sensor
 * samples are charged as they happen (energy and time per sample).
 *
 * Joules are never accumulated interval by interval: a phase's energy is its
 * total time x its current x the supply voltage, computed when asked, so the
 * figures are exactly phase times x currents. The meter a node's events touch
 * is one 64-byte record per node (array of structures, one cache line);
 * energy_export() copies it into one contiguous array per phase (structure of
 * arrays) that Python views as numpy arrays without copying.
 */
#ifndef EMU_ENERGY_H
#define EMU_ENERGY_H

#include <stdint.h>

#include "platform.h"

enum emu_phase {
    EMU_PH_SLEEP = 0,
    EMU_PH_CPU = 1,
    EMU_PH_LISTEN = 2,
    EMU_PH_TX = 3,
    EMU_PH_SENSE = 4,
    EMU_N_PHASES = 5
};

enum energy_bits { ENERGY_CPU = 1u, ENERGY_RADIO = 2u, ENERGY_TX = 4u, ENERGY_DEAD = 8u };

typedef struct energy_meter {
    uint64_t last_us;
    uint64_t phase_us[EMU_N_PHASES]; /* sensing: summed sample times */
    double sense_j;                  /* sensing is charged per sample, not per time */
    uint8_t bits;
} energy_meter;

typedef struct emu_energy {
    uint32_t n;
    double supply_v;
    double phase_a[EMU_N_PHASES]; /* current of the time-metered phases */
    double capacity_j;            /* battery; 0 = unlimited */
    energy_meter *meter;          /* one per node, cache-line aligned */
    void *meter_mem;
    uint64_t *phase_us[EMU_N_PHASES]; /* energy_export() */
    double *joules[EMU_N_PHASES];     /* energy_export() */
} emu_energy;

int energy_init(emu_energy *e, uint32_t n, const emu_platform *p, double tx_a, double capacity_j);
void energy_free(emu_energy *e);

/* A (re)booting node: CPU running, radio listening, from now on. */
void energy_power_up(emu_energy *e, uint32_t node, uint64_t now_us);
/* Settles, then stops metering the node (it died). */
void energy_power_down(emu_energy *e, uint32_t node, uint64_t now_us);

void energy_settle(emu_energy *e, uint32_t node, uint64_t now_us);
/* Settles, then switches `bit` (ENERGY_*) on or off. */
void energy_switch(emu_energy *e, uint32_t node, uint64_t now_us, uint8_t bit, int on);
void energy_charge_sample(emu_energy *e, uint32_t node, double joules, uint32_t time_us);

/* Joules the node has drawn up to its last settle. */
double energy_spent_j(const emu_energy *e, uint32_t node);

/* Node 0, the basestation, never depletes: it sits on the MIB510 programming board,
 * powered from its supply, and never sleeps (core/schedule.h). On the battery it went
 * flat first (46 mW around the clock) and took the whole tree down with it, so a
 * battery-limited run measured the root, not the motes. */
static inline int energy_depleted(const emu_energy *e, uint32_t node)
{
    return node != 0u && e->capacity_j > 0.0 && energy_spent_j(e, node) >= e->capacity_j;
}

/* Refreshes the per-phase arrays (phase_us, joules) from the meters. */
void energy_export(emu_energy *e);

#endif /* EMU_ENERGY_H */
