/*
 * main.c - the ATmega128 image: boot, the event loop, sleep.
 *
 * Interrupts only move bytes and wake the CPU; every entry into the core
 * (mote_on_*) happens here, in the main loop, so the core never re-enters
 * itself. When nothing is left to do the CPU sleeps as deep as what still runs
 * allows: idle while the UART or the radio needs the CPU's clock (a byte can
 * arrive; the radio is listening or shifting bytes), power-save otherwise, with
 * only the asynchronous Timer0 running to wake it for the next alarm.
 *
 * The root (node 0) keeps its UART receiver on for the basestation and so never
 * goes below idle; any other node leaves the UART off.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>

#include "adc.h"
#include "cc1000.h"
#include "core/mote.h"
#include "core/mote_state.h" /* for the state's size only: the platform owns its memory */
#include "hal_avr.h"
#include "ids.h"
#include "leds.h"
#include "timer.h"
#include "uart.h"

#define UART_CHUNK 16u /* bytes handed to the core per call: bounded stack, short latency */

static struct mote_state node;

static void sleep_until_event(uint8_t uart_on)
{
    uint8_t idle;
    cli();
    if ((uart_on && uart_rx_available()) || timer_alarm_pending()) {
        sei();
        return;
    }
    idle = uart_on || uart_tx_busy() || hal_avr_radio_on() || cc1000_busy();
    if (idle) {
        set_sleep_mode(SLEEP_MODE_IDLE);
    } else {
        timer_before_power_save();
        set_sleep_mode(SLEEP_MODE_PWR_SAVE);
    }
    sleep_enable();
    sei(); /* the instruction after SEI runs first: no wake-up is lost in between */
    sleep_cpu();
    sleep_disable();
}

int main(void)
{
    uint8_t buf[UART_CHUNK];
    uint16_t id = TOS_LOCAL_ADDRESS;
    uint8_t uart_on = id == MOTE_ROOT_ID;
    const mote_hal *hal;

    leds_init();
    adc_init();
    if (uart_on)
        uart_init();
    timer_init();
    cc1000_init();
    hal = hal_avr_bind(&node, id, uart_on);
    sei();
    mote_init(&node, id, hal);
    mote_set_am_group(&node, TOS_AM_GROUP);

    for (;;) {
        uint8_t n = uart_on ? uart_read(buf, sizeof buf) : 0;
        if (n)
            mote_on_uart_rx(&node, buf, n);
        cc1000_poll();
        if (timer_alarm_due())
            mote_on_alarm(&node);
        sleep_until_event(uart_on);
    }
}
