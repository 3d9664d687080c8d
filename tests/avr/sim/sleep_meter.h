/*
 * sleep_meter.h - counts the cycles each AVR spends asleep, per sleep mode.
 *
 * simavr does not model sleep modes: a SLEEP instruction just stops the core
 * until an interrupt, whatever MCUCR says. Mechanism: the meter takes over the
 * core's sleep callback, which simavr calls with the cycles it skips each time
 * the core sleeps, and files them under the mode the firmware selected in
 * MCUCR's SM2..SM0 bits (ATmega128: SM1 bit 4, SM0 bit 3, SM2 bit 2) when it
 * slept. It never waits there: the pacer does. The callback gets only the
 * core, so meters live in a fixed pool of SLEEP_METER_MAX, found by core.
 */
#ifndef MOTE_SIM_SLEEP_METER_H
#define MOTE_SIM_SLEEP_METER_H

#include <stdint.h>

#include <simavr/sim_avr.h>

#define SLEEP_METER_MAX 8u

enum sleep_mode {
    SLEEP_IDLE = 0,
    SLEEP_ADC_NR = 1,
    SLEEP_POWER_DOWN = 2,
    SLEEP_POWER_SAVE = 3,
    SLEEP_STANDBY = 6,
    SLEEP_EXT_STANDBY = 7,
    SLEEP_MODES = 8
};

typedef struct sleep_meter_t {
    avr_t *avr;
    uint64_t cycles[SLEEP_MODES]; /* asleep, by SM2..SM0 */
    uint64_t sleeps[SLEEP_MODES]; /* sleep callbacks, by mode */
} sleep_meter_t;

/* 0, or -1 when SLEEP_METER_MAX cores are metered already. */
int sleep_meter_init(avr_t *avr, sleep_meter_t *m);
const char *sleep_mode_name(unsigned mode);

#endif /* MOTE_SIM_SLEEP_METER_H */
