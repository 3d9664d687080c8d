#include "sampling.h"

#include "clock.h"
#include "mote_state.h"
int32_t sampling_read_attr(mote_state *st, uint8_t attr)
{
    switch (attr) {
    case ATTR_NODEID:
        return st->id;
    case ATTR_PARENT:
        return routing_parent(&st->rt);
    case ATTR_DEPTH:
        return routing_depth(&st->rt);
    case ATTR_QUAL:
        return routing_parent_quality(&st->rt);
    case ATTR_FREERAM:
        return (int32_t)(AGG_ARENA_BYTES - st->arena_used);
    case ATTR_GROUP:
        return st->am_group;
    case ATTR_TIMELO:
        return (int32_t)mote_now(st);
    case ATTR_TIMEHI:
        return 0; /* 32-bit logical clock: the high word is always 0 */
    default:
        return st->hal->sensor_read(st->hal->ctx, attr);
    }
}

void sampler_start(sampler *s, mote_state *st, const query *q)
{
    s->st = st;
    s->q = q;
    s->have = 0;
    if (st->no_interleave)
        sampler_read_all(s);
}

uint8_t sampler_get(sampler *s, uint8_t f, int32_t *value)
{
    uint8_t attr = s->q->fields[f];
    uint16_t bit = (uint16_t)(1u << f);
    if (attr >= CATALOG_COUNT)
        return 0;
    if (!(s->have & bit)) {
        s->values[f] = sampling_read_attr(s->st, attr);
        s->st->stats.samples[attr]++;
        s->have |= bit;
    }
    *value = s->values[f];
    return 1;
}

void sampler_read_all(sampler *s)
{
    uint8_t f;
    int32_t v;
    for (f = 0; f < s->q->num_fields; f++)
        (void)sampler_get(s, f, &v);
}
