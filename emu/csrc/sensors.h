/*
 * sensors.h - what each node's sensors read, as a function of virtual time.
 *
 * Mechanism: a fixed pool of SOURCES (generators or replayed traces) and a
 * table mapping (node, attribute id) to a source; one source serves many
 * nodes and varies per node by itself (per-node phase, per-node random-walk
 * state, per-node trace row). Traces are int16 arrays owned by the caller
 * (numpy, kept alive by Python) and read in place: no per-sample callbacks.
 * Each attribute also has a sampling cost (energy, time) that the HAL
 * charges to the energy meter.
 */
#ifndef EMU_SENSORS_H
#define EMU_SENSORS_H

#include <stdint.h>

#include "emu_types.h"
#include "rng.h"

#define SENSORS_MAX_SOURCES 256u
#define SENSORS_MAX_ATTRS 32u

typedef struct sensor_source {
    emu_source_spec spec;
    double *walk;   /* per-node random-walk position (EMU_SRC_WALK) */
    uint32_t *cursor; /* per-node next sample (EMU_SRC_TRACE read-indexed) */
} sensor_source;

typedef struct emu_sensors {
    uint32_t n_nodes;
    uint32_t n_sources;
    sensor_source pool[SENSORS_MAX_SOURCES];
    uint16_t *source_of; /* [node * SENSORS_MAX_ATTRS + attr]; 0 = unassigned */
    double cost_j[SENSORS_MAX_ATTRS];
    uint32_t cost_us[SENSORS_MAX_ATTRS];
    emu_rng rng;
} emu_sensors;

int sensors_init(emu_sensors *s, uint32_t n_nodes, uint64_t seed);
void sensors_free(emu_sensors *s);

/* Returns the new source's id (>= 1) or -1 (pool full, bad spec). */
int sensors_add_source(emu_sensors *s, const emu_source_spec *spec);
/* Makes nodes [lo, hi) read `attr` from `source`; 0 on success. */
int sensors_assign(emu_sensors *s, uint32_t attr, int source, uint32_t lo, uint32_t hi);
int sensors_set_cost(emu_sensors *s, uint32_t attr, double joules, uint32_t time_us);

/* An unassigned attribute reads 0. */
int16_t sensors_read(emu_sensors *s, uint32_t node, uint32_t attr, uint64_t now_us);

#endif /* EMU_SENSORS_H */
