/*
 * leds.h - the mote's LEDs, in TinyOS 1.x's bit order: 1 red, 2 green, 4 yellow.
 *
 * Mica2: red PA2, green PA1, yellow PA0; mica2dot: red PA2 only. They are
 * active low (the pin sinks the LED's current), so a set bit drives the pin low.
 */
#ifndef MOTE_AVR_LEDS_H
#define MOTE_AVR_LEDS_H

#include <stdint.h>

#define LED_RED 0x01u
#define LED_GREEN 0x02u
#define LED_YELLOW 0x04u

void leds_init(void); /* all off */
void leds_set(uint8_t bits);

#endif /* MOTE_AVR_LEDS_H */
