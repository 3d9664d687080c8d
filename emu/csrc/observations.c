#include "observations.h"

#include <stdlib.h>
#include <string.h>

#define OBS_FIRST_CAP 1024u

void observations_free(emu_observations *o)
{
    free(o->rec);
    memset(o, 0, sizeof *o);
}

static int grow(emu_observations *o)
{
    uint32_t cap = o->cap ? o->cap * 2u : OBS_FIRST_CAP;
    emu_observation *rec;
    if (cap <= o->cap)
        return -1;
    rec = realloc(o->rec, (size_t)cap * sizeof *rec);
    if (!rec)
        return -1;
    o->rec = rec;
    o->cap = cap;
    return 0;
}

void observations_add(emu_observations *o, uint64_t t_us, uint32_t node,
                      const mote_observation *obs)
{
    emu_observation *r;
    uint8_t i, n;
    if (!o->on)
        return;
    if (o->count == o->cap && grow(o)) {
        o->lost++;
        return;
    }
    r = &o->rec[o->count++];
    memset(r, 0, sizeof *r);
    r->t_us = t_us;
    r->node = node;
    r->epoch = obs->epoch;
    r->kind = obs->kind;
    r->qid = obs->qid;
    r->status = obs->status;
    n = obs->n_fields > EMU_OBS_VALUES ? (uint8_t)EMU_OBS_VALUES : obs->n_fields;
    r->n_fields = n;
    r->have = obs->have;
    for (i = 0; i < n && obs->values; i++)
        r->values[i] = obs->values[i];
}

void observations_clear(emu_observations *o) { o->count = 0; }
