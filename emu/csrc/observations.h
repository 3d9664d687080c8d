/*
 * observations.h - what the nodes' firmware reported through hal.observe,
 *                  kept for the emulator's ground truth (emu/truth.py).
 *
 * Mechanism: an append-only array of fixed-size records that grows by doubling
 * while recording is on (off by default: a plain run pays nothing). Python
 * copies the records out between run slices and clears the array, so it only
 * ever holds one slice's worth.
 */
#ifndef EMU_OBSERVATIONS_H
#define EMU_OBSERVATIONS_H

#include <stdint.h>

#include "emu_types.h"
#include "firmware/hal/hal.h"

typedef struct emu_observations {
    emu_observation *rec;
    uint32_t count;
    uint32_t cap;
    uint64_t lost; /* records not kept: out of memory */
    uint8_t on;
} emu_observations;

void observations_free(emu_observations *o);
void observations_add(emu_observations *o, uint64_t t_us, uint32_t node,
                      const mote_observation *obs);
void observations_clear(emu_observations *o);

#endif /* EMU_OBSERVATIONS_H */
