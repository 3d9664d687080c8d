#include "sleep_meter.h"

#include <stddef.h>

#define MCUCR_DATA_ADDR 0x55u /* I/O 0x35 */

/* simavr's sleep callback has no parameter: the core names its meter. */
static sleep_meter_t *meters[SLEEP_METER_MAX];
static unsigned n_meters;

static sleep_meter_t *meter_of(const avr_t *avr)
{
    unsigned i;
    for (i = 0; i < n_meters; i++)
        if (meters[i]->avr == avr)
            return meters[i];
    return NULL;
}

static void on_sleep(avr_t *avr, avr_cycle_count_t how_long)
{
    sleep_meter_t *m = meter_of(avr);
    uint8_t mcucr = avr->data[MCUCR_DATA_ADDR];
    unsigned mode = ((mcucr >> 2) & 1u) << 2 | ((mcucr >> 4) & 1u) << 1 | ((mcucr >> 3) & 1u);
    if (!m)
        return;
    m->cycles[mode] += 1u + how_long; /* what sim_avr.c adds to avr->cycle */
    m->sleeps[mode]++;
}

int sleep_meter_init(avr_t *avr, sleep_meter_t *m)
{
    unsigned i;
    if (n_meters >= SLEEP_METER_MAX)
        return -1;
    m->avr = avr;
    for (i = 0; i < SLEEP_MODES; i++)
        m->cycles[i] = m->sleeps[i] = 0;
    meters[n_meters++] = m;
    avr->sleep = on_sleep;
    return 0;
}

const char *sleep_mode_name(unsigned mode)
{
    static const char *const names[SLEEP_MODES] = {"idle", "adc_nr", "power_down", "power_save",
                                                   "reserved4", "reserved5", "standby",
                                                   "ext_standby"};
    return mode < SLEEP_MODES ? names[mode] : "?";
}
