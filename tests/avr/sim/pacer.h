/*
 * pacer.h - keeps simulated time from running ahead of wall time.
 *
 * The gateway talking to the simulated mote has timeouts in wall seconds, so one
 * simulated second must not pass in a few milliseconds. Mechanism: a cycle timer
 * every PACER_STEP_US of simulated time compares the simulated clock with the
 * wall clock since start and sleeps off any lead. It also bounds how far the core
 * fast-forwards through a sleep, so a byte from the pty is taken within a step.
 * A simulation slower than wall time is not slowed further.
 */
#ifndef MOTE_SIM_PACER_H
#define MOTE_SIM_PACER_H

#include <stdint.h>

#include <simavr/sim_avr.h>

#define PACER_STEP_US 1000u

typedef struct pacer_t {
    avr_t *avr;
    uint64_t wall_start_ns;
    uint64_t slept_ns; /* wall time spent waiting for the wall clock: the sim's idle margin */
} pacer_t;

void pacer_init(avr_t *avr, pacer_t *p);

#endif /* MOTE_SIM_PACER_H */
