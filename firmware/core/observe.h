/*
 * observe.h - reporting to hal.observe (hal/hal.h), when the platform wants it.
 *
 * The emulator's ground truth needs what no packet shows: the values a query's
 * evaluation read in each epoch, and when a query started or stopped on each
 * node. A real mote leaves hal.observe NULL and pays one pointer test.
 */
#ifndef MOTE_CORE_OBSERVE_H
#define MOTE_CORE_OBSERVE_H

#include <stdint.h>

#include "../hal/hal.h"

/* A platform built without an observer (the AVR images, firmware/avr/CMakeLists.txt):
 * the calls compile to nothing, 266 B of a mica2's flash. */
#ifdef MOTE_NO_OBSERVER
#define MOTE_OBSERVED(hal) 0
#else
#define MOTE_OBSERVED(hal) ((hal)->observe != 0)
#endif

static inline void observe_query(const mote_hal *hal, uint8_t qid, uint16_t epoch, uint8_t status)
{
    mote_observation obs;
    if (!MOTE_OBSERVED(hal))
        return;
    obs.kind = MOTE_OBS_QUERY;
    obs.qid = qid;
    obs.epoch = epoch;
    obs.status = status;
    obs.n_fields = 0;
    obs.have = 0;
    obs.values = 0;
    hal->observe(hal->ctx, &obs);
}

static inline void observe_sampled(const mote_hal *hal, uint8_t qid, uint16_t epoch,
                                   uint8_t passed, uint8_t n_fields, uint16_t have,
                                   const int32_t *values)
{
    mote_observation obs;
    if (!MOTE_OBSERVED(hal))
        return;
    obs.kind = MOTE_OBS_SAMPLED;
    obs.qid = qid;
    obs.epoch = epoch;
    obs.status = passed;
    obs.n_fields = n_fields;
    obs.have = have;
    obs.values = values;
    hal->observe(hal->ctx, &obs);
}

#endif /* MOTE_CORE_OBSERVE_H */
