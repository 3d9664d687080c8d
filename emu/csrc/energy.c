#include "energy.h"

#include <stdint.h>
#include <stdlib.h>

#define LINE 64u

int energy_init(emu_energy *e, uint32_t n, const emu_platform *p, double tx_a, double capacity_j)
{
    uint32_t ph, cap = n ? n : 1u;
    uint64_t *times = calloc((size_t)cap * EMU_N_PHASES, sizeof *times);
    double *joules = calloc((size_t)cap * EMU_N_PHASES, sizeof *joules);
    e->meter_mem = calloc((size_t)cap + 1u, sizeof(energy_meter) > LINE ? sizeof(energy_meter) : LINE);
    e->phase_us[0] = times;
    e->joules[0] = joules;
    if (!times || !joules || !e->meter_mem) {
        energy_free(e);
        return -1;
    }
    e->meter = (energy_meter *)(((uintptr_t)e->meter_mem + LINE - 1u) / LINE * LINE);
    for (ph = 0; ph < EMU_N_PHASES; ph++) {
        e->phase_us[ph] = times + (size_t)ph * cap;
        e->joules[ph] = joules + (size_t)ph * cap;
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
    free(e->meter_mem);
    e->phase_us[0] = NULL;
    e->joules[0] = NULL;
    e->meter_mem = NULL;
    e->meter = NULL;
}

void energy_power_up(emu_energy *e, uint32_t node, uint64_t now_us)
{
    e->meter[node].bits = ENERGY_CPU | ENERGY_RADIO;
    e->meter[node].last_us = now_us;
}

void energy_power_down(emu_energy *e, uint32_t node, uint64_t now_us)
{
    energy_settle(e, node, now_us);
    e->meter[node].bits = ENERGY_DEAD;
}

void energy_settle(emu_energy *e, uint32_t node, uint64_t now_us)
{
    energy_meter *m = &e->meter[node];
    uint64_t dt = now_us - m->last_us;
    if (now_us <= m->last_us)
        return;
    m->last_us = now_us;
    if (m->bits & ENERGY_DEAD)
        return;
    m->phase_us[(m->bits & ENERGY_CPU) ? EMU_PH_CPU : EMU_PH_SLEEP] += dt;
    if (m->bits & ENERGY_TX)
        m->phase_us[EMU_PH_TX] += dt;
    else if (m->bits & ENERGY_RADIO)
        m->phase_us[EMU_PH_LISTEN] += dt;
}

void energy_switch(emu_energy *e, uint32_t node, uint64_t now_us, uint8_t bit, int on)
{
    energy_settle(e, node, now_us);
    if (on)
        e->meter[node].bits |= bit;
    else
        e->meter[node].bits &= (uint8_t)~bit;
}

void energy_charge_sample(emu_energy *e, uint32_t node, double j, uint32_t time_us)
{
    e->meter[node].phase_us[EMU_PH_SENSE] += time_us;
    e->meter[node].sense_j += j;
}

static double phase_j(const emu_energy *e, const energy_meter *m, uint32_t phase)
{
    if (phase == EMU_PH_SENSE)
        return m->sense_j;
    return (double)m->phase_us[phase] * 1e-6 * e->phase_a[phase] * e->supply_v;
}

double energy_spent_j(const emu_energy *e, uint32_t node)
{
    double j = 0.0;
    uint32_t ph;
    for (ph = 0; ph < EMU_N_PHASES; ph++)
        j += phase_j(e, &e->meter[node], ph);
    return j;
}

void energy_export(emu_energy *e)
{
    uint32_t i, ph;
    for (i = 0; i < e->n; i++) {
        for (ph = 0; ph < EMU_N_PHASES; ph++) {
            e->phase_us[ph][i] = e->meter[i].phase_us[ph];
            e->joules[ph][i] = phase_j(e, &e->meter[i], ph);
        }
    }
}
