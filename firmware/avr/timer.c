#include "timer.h"

#include <avr/interrupt.h>
#include <avr/io.h>
#include <util/atomic.h>

#define TICKS_PER_PERIOD 256u
#define MS_PER_PERIOD 250u

static volatile uint32_t period_base_ms; /* now_ms at TCNT0 == 0 of the running period */
static uint32_t alarm_at;
static volatile uint8_t alarm_armed;

/* ms into the period at tick t: t * 1000 / 1024. */
static uint8_t ticks_to_ms(uint8_t t)
{
    return (uint8_t)(((uint16_t)t * 125u) >> 7);
}

/* First tick whose time is at or past ms (0 < ms < 250): ceil(ms * 128 / 125). */
static uint16_t ms_to_tick(uint8_t ms)
{
    return (uint16_t)(((uint16_t)ms * 128u + 124u) / 125u);
}

/* Called with interrupts off: aim the compare interrupt at the alarm if it falls in
 * the running period; a later one waits for an overflow. */
static void aim_compare(uint32_t base)
{
    int32_t ahead;
    uint16_t tick;
    TIMSK &= (uint8_t)~_BV(OCIE0);
    if (!alarm_armed)
        return;
    ahead = (int32_t)(alarm_at - base);
    if (ahead >= (int32_t)MS_PER_PERIOD)
        return;
    tick = ahead <= 0 ? 0u : ms_to_tick((uint8_t)ahead);
    /* An asynchronous OCR0 write lands about two crystal ticks later: a match closer
     * than that is moved there. Past the period's end, the overflow wakes the CPU. */
    if (tick < (uint16_t)TCNT0 + 2u)
        tick = (uint16_t)TCNT0 + 2u;
    if (tick >= TICKS_PER_PERIOD)
        return;
    OCR0 = (uint8_t)tick;
    TIFR = _BV(OCF0); /* a stale match must not wake us early */
    TIMSK |= _BV(OCIE0);
}

void timer_init(void)
{
    TIMSK &= (uint8_t)~(_BV(OCIE0) | _BV(TOIE0));
    ASSR |= _BV(AS0);
    TCNT0 = 0;
    OCR0 = 0;
    TCCR0 = _BV(CS01) | _BV(CS00); /* normal mode, clk_T0S / 32 */
    while (ASSR & (_BV(TCN0UB) | _BV(OCR0UB) | _BV(TCR0UB)))
        ;
    TIFR = _BV(OCF0) | _BV(TOV0);
    period_base_ms = 0;
    alarm_armed = 0;
    TIMSK |= _BV(TOIE0);
}

uint32_t timer_now_ms(void)
{
    uint32_t base;
    uint8_t t;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        t = TCNT0;
        base = period_base_ms;
        /* Wrapped after interrupts went off: the ISR has not added its 250 yet. */
        if (TIFR & _BV(TOV0)) {
            t = TCNT0;
            base += MS_PER_PERIOD;
        }
    }
    return base + ticks_to_ms(t);
}

void timer_set_alarm(uint32_t at_ms)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        alarm_at = at_ms;
        alarm_armed = 1;
        aim_compare(period_base_ms);
    }
}

uint8_t timer_alarm_pending(void)
{
    return alarm_armed && (int32_t)(timer_now_ms() - alarm_at) >= 0;
}

uint8_t timer_alarm_due(void)
{
    uint8_t due = 0;
    if (timer_alarm_pending()) {
        ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
        {
            alarm_armed = 0;
            TIMSK &= (uint8_t)~_BV(OCIE0);
        }
        due = 1;
    }
    return due;
}

void timer_before_power_save(void)
{
    /* Rewriting TCCR0 restarts its update cycle; once TCR0UB clears, one TOSC1 edge
     * has passed since the last wake-up and the next interrupt will be seen. */
    TCCR0 = _BV(CS01) | _BV(CS00);
    while (ASSR & (_BV(TCN0UB) | _BV(OCR0UB) | _BV(TCR0UB)))
        ;
}

ISR(TIMER0_OVF_vect)
{
    period_base_ms += MS_PER_PERIOD;
    aim_compare(period_base_ms);
}

ISR(TIMER0_COMP_vect)
{
    TIMSK &= (uint8_t)~_BV(OCIE0); /* woken: the main loop fires the alarm */
}
