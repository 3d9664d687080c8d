#include "pacer.h"

#include <time.h>

#include <simavr/sim_cycle_timers.h>
#include <simavr/sim_time.h>

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static avr_cycle_count_t pacer_step(avr_t *avr, avr_cycle_count_t when, void *param)
{
    pacer_t *p = param;
    uint64_t sim = (uint64_t)((double)avr->cycle * 1e9 / (double)avr->frequency);
    uint64_t wall = wall_ns() - p->wall_start_ns;
    if (sim > wall) {
        uint64_t lead = sim - wall;
        struct timespec ts = {(time_t)(lead / 1000000000ull), (long)(lead % 1000000000ull)};
        nanosleep(&ts, NULL);
        p->slept_ns += lead;
    }
    return when + avr_usec_to_cycles(avr, PACER_STEP_US);
}

void pacer_init(avr_t *avr, pacer_t *p)
{
    p->avr = avr;
    p->wall_start_ns = wall_ns();
    p->slept_ns = 0;
    avr_cycle_timer_register_usec(avr, PACER_STEP_US, pacer_step, p);
}
