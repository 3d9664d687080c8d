/*
 * sampling.h - acquisitional reads of one query's fields for one epoch
 *              (paper §4.2).
 *
 * A sampler is created per query evaluation and asked for fields as the
 * expressions need them: each field is read at most once, on first use, so a
 * selection that fails before a costly attribute is reached spares that
 * sample. With NO INTERLEAVE (command `nointerleave 1`) every field is read up
 * front instead. Sensor attributes go through hal.sensor_read, the others are
 * answered from the node's state; every read is counted per attribute.
 */
#ifndef MOTE_CORE_SAMPLING_H
#define MOTE_CORE_SAMPLING_H

#include <stdint.h>

#include "../query/query.h"
#include "mote_type.h"

typedef struct sampler {
    mote_state *st;
    const query *q;
    uint16_t have;                   /* bit i: values[i] is read */
    int32_t values[QUERY_MAX_FIELDS];
} sampler;

void sampler_start(sampler *s, mote_state *st, const query *q);

/* Read every field now (NO INTERLEAVE, and tuple output after all selections pass). */
void sampler_read_all(sampler *s);

/*
 * Value of field `f`, reading it if needed. Returns 0 for a field this node
 * does not know (NULL): callers treat such fields as absent.
 */
uint8_t sampler_get(sampler *s, uint8_t f, int32_t *value);

/* Current value of a catalog attribute on this node (no counting). */
int32_t sampling_read_attr(mote_state *st, uint8_t attr);

#endif /* MOTE_CORE_SAMPLING_H */
