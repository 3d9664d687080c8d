#include "sleep_meter.h"

#define MCUCR_DATA_ADDR 0x55u /* I/O 0x35 */

/* simavr's sleep callback has no parameter: one meter per process (one mote). */
static sleep_meter_t *meter;

static void on_sleep(avr_t *avr, avr_cycle_count_t how_long)
{
    uint8_t mcucr = avr->data[MCUCR_DATA_ADDR];
    unsigned mode = ((mcucr >> 2) & 1u) << 2 | ((mcucr >> 4) & 1u) << 1 | ((mcucr >> 3) & 1u);
    meter->cycles[mode] += 1u + how_long; /* what sim_avr.c adds to avr->cycle */
    meter->sleeps[mode]++;
}

void sleep_meter_init(avr_t *avr, sleep_meter_t *m)
{
    unsigned i;
    for (i = 0; i < SLEEP_MODES; i++)
        m->cycles[i] = m->sleeps[i] = 0;
    meter = m;
    avr->sleep = on_sleep;
}

const char *sleep_mode_name(unsigned mode)
{
    static const char *const names[SLEEP_MODES] = {"idle", "adc_nr", "power_down", "power_save",
                                                   "reserved4", "reserved5", "standby",
                                                   "ext_standby"};
    return mode < SLEEP_MODES ? names[mode] : "?";
}
