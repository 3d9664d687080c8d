/*
 * energy.h - per-node energy meter, integrated over virtual time.
 *
 * Mechanism: each node has a small power state (CPU on, radio listening,
 * radio transmitting) and the time it last changed. Whenever the state
 * changes, or someone wants current figures, the interval since the last
 * change is "settled": its length is added to the time of every phase that
 * was on and its charge (time x current x supply voltage) to that phase's
 * joules. With the CPU off the mote draws its sleep current; while the radio
 * transmits its listen current is replaced by the transmit current. Sensor
 * samples are charged as they happen (energy and time per sample).
 *
 * Storage is structure-of-arrays (one contiguous array per phase) so Python
 * can view each as a numpy array without copying.
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

typedef struct emu_energy {
    uint32_t n;
    double supply_v;
    double phase_a[EMU_N_PHASES]; /* current of the time-metered phases */
    double capacity_j;            /* battery; 0 = unlimited */
    uint64_t *phase_us[EMU_N_PHASES];
    double *joules[EMU_N_PHASES];
    double *spent_j;
    uint64_t *last_us;
    uint8_t *bits;
} emu_energy;

int energy_init(emu_energy *e, uint32_t n, const emu_platform *p, double tx_a, double capacity_j);
void energy_free(emu_energy *e);

void energy_settle(emu_energy *e, uint32_t node, uint64_t now_us);
/* Settles, then switches `bit` (ENERGY_*) on or off. */
void energy_switch(emu_energy *e, uint32_t node, uint64_t now_us, uint8_t bit, int on);
void energy_charge_sample(emu_energy *e, uint32_t node, double joules, uint32_t time_us);

static inline int energy_depleted(const emu_energy *e, uint32_t node)
{
    return e->capacity_j > 0.0 && e->spent_j[node] >= e->capacity_j;
}

#endif /* EMU_ENERGY_H */
