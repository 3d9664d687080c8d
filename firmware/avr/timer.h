/*
 * timer.h - the millisecond clock and the core's one alarm, from Timer0.
 *
 * Mechanism: Timer0 runs asynchronously from the 32.768 kHz watch crystal on
 * TOSC1/TOSC2, divided by 32: 1024 ticks/s, so one 256-tick overflow is exactly
 * 250 ms. The overflow interrupt adds 250 to a millisecond base; now is that base
 * plus the count scaled by 125/128, exact and wrapping with the uint32 like the
 * core expects. The alarm is one absolute time: when it falls within the running
 * overflow period, OCR0 is set to its tick and the compare interrupt wakes the
 * CPU; otherwise an overflow re-examines it. The interrupts only wake: the main
 * loop asks timer_alarm_due(). The timer keeps counting in power-save mode,
 * which is why it, and not the CPU clock, is the node's clock.
 */
#ifndef MOTE_AVR_TIMER_H
#define MOTE_AVR_TIMER_H

#include <stdint.h>

void timer_init(void);
uint32_t timer_now_ms(void);
/* Replaces any alarm; a time already past is due at once. */
void timer_set_alarm(uint32_t at_ms);
/* 1 once the alarm's time has come (it is then disarmed), else 0. */
uint8_t timer_alarm_due(void);
/* The same test without disarming: may the CPU sleep? */
uint8_t timer_alarm_pending(void);
/* Before power-save: waits for Timer0's asynchronous registers to settle, without
 * which the timer's wake-up can be lost (ATmega128 datasheet, asynchronous operation). */
void timer_before_power_save(void);

#endif /* MOTE_AVR_TIMER_H */
