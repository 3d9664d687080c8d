/*
 * hal_avr.h - the mote_hal of the ATmega128 image (core/hal.h).
 *
 * Mechanism: one static mote_hal whose callbacks go to the peripheral files
 * (timer, uart, adc, leds, cc1000); the CC1000 driver's upcalls are turned into
 * the core's entry points here. There is one node per image, so the node's
 * state is a pointer kept at bind time, and ctx is unused.
 */
#ifndef MOTE_AVR_HAL_AVR_H
#define MOTE_AVR_HAL_AVR_H

#include <stdint.h>

#include "core/mote.h"

/* uart_on: 0 keeps the core's UART output away from a UART that is off (uart.h). */
const mote_hal *hal_avr_bind(mote_state *st, uint16_t id, uint8_t uart_on);
/* 1 while the core wants the receiver on (hal.power(MOTE_PWR_RADIO)). */
uint8_t hal_avr_radio_on(void);

#endif /* MOTE_AVR_HAL_AVR_H */
