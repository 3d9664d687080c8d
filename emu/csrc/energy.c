#include "energy.h"

#include <stdlib.h>

int energy_init(emu_energy *e, uint32_t n, const emu_platform *p, double tx_a, double capacity_j)
{
    uint32_t ph;
    uint64_t *times = calloc((size_t)n * EMU_N_PHASES, sizeof *times);
    double *joules = calloc((size_t)n * EMU_N_PHASES, sizeof *joules);
    e->spent_j = calloc(n, sizeof *e->spent_j);
    e->last_us = calloc(n, sizeof *e->last_us);
    e->bits = calloc(n, 1);
    e->phase_us[0] = times;
    e->joules[0] = joules;
    if (!times || !joules || !e->spent_j || !e->last_us || !e->bits) {
        energy_free(e);
        return -1;
    }
    for (ph = 0; ph < EMU_N_PHASES; ph++) {
        e->phase_us[ph] = times + (size_t)ph * n;
        e->joules[ph] = joules + (size_t)ph * n;
    }
    e->n = n;
    e->supply_v = p->supply_v;
    e->phase_a[EMU_PH_SLEEP] = p->sleep_a;
    e->phase_a[EMU_PH_CPU] = p->cpu_a;
    e->phase_a[EMU_PH_LISTEN] = p->listen_a;
    e->phase_a[EMU_PH_TX] = tx_a > 0.0 ? tx_a : p->tx_a;
    e->phase_a[EMU_PH_SENSE] = 0.0; /* charged per sample */
    e->capacity_j = capacity_j;
    return 0;
}

void energy_free(emu_energy *e)
{
    free(e->phase_us[0]);
    free(e->joules[0]);
    free(e->spent_j);
    free(e->last_us);
    free(e->bits);
    e->phase_us[0] = NULL;
    e->joules[0] = NULL;
    e->spent_j = NULL;
    e->last_us = NULL;
    e->bits = NULL;
}

static void add(emu_energy *e, uint32_t node, uint32_t phase, uint64_t dt_us)
{
    double j = (double)dt_us * 1e-6 * e->phase_a[phase] * e->supply_v;
    e->phase_us[phase][node] += dt_us;
    e->joules[phase][node] += j;
    e->spent_j[node] += j;
}

void energy_settle(emu_energy *e, uint32_t node, uint64_t now_us)
{
    uint8_t bits = e->bits[node];
    uint64_t dt = now_us - e->last_us[node];
    if (now_us <= e->last_us[node])
        return;
    e->last_us[node] = now_us;
    if (bits & ENERGY_DEAD)
        return;
    add(e, node, (bits & ENERGY_CPU) ? EMU_PH_CPU : EMU_PH_SLEEP, dt);
    if (bits & ENERGY_TX)
        add(e, node, EMU_PH_TX, dt);
    else if (bits & ENERGY_RADIO)
        add(e, node, EMU_PH_LISTEN, dt);
}

void energy_switch(emu_energy *e, uint32_t node, uint64_t now_us, uint8_t bit, int on)
{
    energy_settle(e, node, now_us);
    if (on)
        e->bits[node] |= bit;
    else
        e->bits[node] &= (uint8_t)~bit;
}

void energy_charge_sample(emu_energy *e, uint32_t node, double j, uint32_t time_us)
{
    e->phase_us[EMU_PH_SENSE][node] += time_us;
    e->joules[EMU_PH_SENSE][node] += j;
    e->spent_j[node] += j;
}
