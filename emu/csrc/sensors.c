#include "sensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586
#define BURST_SHAKE_HZ 25.0

int sensors_init(emu_sensors *s, uint32_t n_nodes, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->source_of = calloc((size_t)n_nodes * SENSORS_MAX_ATTRS, sizeof *s->source_of);
    if (!s->source_of)
        return -1;
    s->n_nodes = n_nodes;
    emu_rng_seed(&s->rng, seed, 0x5e45u);
    return 0;
}

void sensors_free(emu_sensors *s)
{
    uint32_t i;
    for (i = 0; i < s->n_sources; i++) {
        free(s->pool[i].walk);
        free(s->pool[i].cursor);
    }
    free(s->source_of);
    s->source_of = NULL;
    s->n_sources = 0;
}

int sensors_add_source(emu_sensors *s, const emu_source_spec *spec)
{
    sensor_source *src;
    uint32_t i;
    if (s->n_sources >= SENSORS_MAX_SOURCES || spec->kind > EMU_SRC_TRACE)
        return -1;
    if ((spec->kind == EMU_SRC_SINE || spec->kind == EMU_SRC_SQUARE ||
         spec->kind == EMU_SRC_BURST) && !(spec->period_s > 0.0))
        return -1;
    if (spec->kind == EMU_SRC_TRACE && (!spec->trace || !spec->rows || !spec->cols))
        return -1;
    src = &s->pool[s->n_sources];
    memset(src, 0, sizeof *src);
    src->spec = *spec;
    if (spec->kind == EMU_SRC_WALK) {
        src->walk = malloc(sizeof *src->walk * s->n_nodes);
        if (!src->walk)
            return -1;
        for (i = 0; i < s->n_nodes; i++)
            src->walk[i] = spec->base;
    }
    if (spec->kind == EMU_SRC_TRACE && spec->dt_us == 0) {
        src->cursor = calloc(s->n_nodes, sizeof *src->cursor);
        if (!src->cursor)
            return -1;
    }
    return (int)++s->n_sources;
}

int sensors_assign(emu_sensors *s, uint32_t attr, int source, uint32_t lo, uint32_t hi)
{
    uint32_t node;
    if (attr >= SENSORS_MAX_ATTRS || source < 0 || (uint32_t)source > s->n_sources ||
        lo > hi || hi > s->n_nodes)
        return -1;
    for (node = lo; node < hi; node++)
        s->source_of[(size_t)node * SENSORS_MAX_ATTRS + attr] = (uint16_t)source;
    return 0;
}

int sensors_set_cost(emu_sensors *s, uint32_t attr, double joules, uint32_t time_us)
{
    if (attr >= SENSORS_MAX_ATTRS || joules < 0.0)
        return -1;
    s->cost_j[attr] = joules;
    s->cost_us[attr] = time_us;
    return 0;
}

static double walk(sensor_source *src, emu_rng *rng, uint32_t node)
{
    const emu_source_spec *sp = &src->spec;
    double x = src->walk[node] + sp->amplitude * (2.0 * emu_rng_unit(rng) - 1.0);
    if (sp->param > 0.0) { /* reflect at the bounds base +- param */
        if (x > sp->base + sp->param)
            x = 2.0 * (sp->base + sp->param) - x;
        if (x < sp->base - sp->param)
            x = 2.0 * (sp->base - sp->param) - x;
    }
    src->walk[node] = x;
    return x;
}

/* Per (node, period) offset in [0, 1), a pure function so reads stay replayable. */
static double burst_offset(uint32_t node, uint64_t period)
{
    uint64_t h = emu_splitmix64(((uint64_t)node << 40) ^ period);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

static double burst(const emu_source_spec *sp, uint32_t node, double t)
{
    double periods = t / sp->period_s;
    uint64_t k = (uint64_t)periods;
    double in_period = (periods - (double)k) * sp->period_s;
    double len = sp->param < sp->period_s ? sp->param : sp->period_s;
    double start = burst_offset(node, k) * (sp->period_s - len);
    if (in_period < start || in_period >= start + len)
        return sp->base;
    return sp->base + sp->amplitude * sin(TWO_PI * BURST_SHAKE_HZ * (in_period - start));
}

static double trace(sensor_source *src, uint32_t node, uint64_t now_us)
{
    const emu_source_spec *sp = &src->spec;
    uint64_t i;
    if (sp->dt_us)
        i = now_us / sp->dt_us;
    else
        i = src->cursor[node]++;
    if (i >= sp->cols)
        i = sp->cols - 1; /* hold the last sample */
    return sp->trace[(size_t)(node % sp->rows) * sp->cols + i];
}

static int16_t clamp16(double v)
{
    if (v >= 32767.0)
        return 32767;
    if (v <= -32768.0)
        return -32768;
    return (int16_t)lround(v);
}

int16_t sensors_read(emu_sensors *s, uint32_t node, uint32_t attr, uint64_t now_us)
{
    uint16_t id;
    sensor_source *src;
    const emu_source_spec *sp;
    double t = (double)now_us * 1e-6;
    double v;
    if (attr >= SENSORS_MAX_ATTRS)
        return 0;
    id = s->source_of[(size_t)node * SENSORS_MAX_ATTRS + attr];
    if (!id)
        return 0;
    src = &s->pool[id - 1];
    sp = &src->spec;
    switch (sp->kind) {
    case EMU_SRC_WALK:
        v = walk(src, &s->rng, node);
        break;
    case EMU_SRC_SINE:
        v = sp->base + sp->amplitude * sin(TWO_PI * t / sp->period_s + (double)node * sp->param);
        break;
    case EMU_SRC_SQUARE:
        v = fmod(t / sp->period_s, 1.0) < sp->param ? sp->base + sp->amplitude : sp->base;
        break;
    case EMU_SRC_BURST:
        v = burst(sp, node, t);
        break;
    case EMU_SRC_TRACE:
        v = trace(src, node, now_us);
        break;
    default:
        v = sp->base;
        break;
    }
    if (sp->noise > 0.0)
        v += sp->noise * (2.0 * emu_rng_unit(&s->rng) - 1.0);
    return clamp16(v);
}
