#include "leds.h"

#include <avr/io.h>

#if defined(MOTE_PLATFORM_MICA2DOT)
#define LED_PINS _BV(PA2)
#else
#define LED_PINS (_BV(PA2) | _BV(PA1) | _BV(PA0))
#endif

void leds_init(void)
{
    PORTA |= LED_PINS;
    DDRA |= LED_PINS;
}

void leds_set(uint8_t bits)
{
    uint8_t low = 0;
    if (bits & LED_RED)
        low |= _BV(PA2);
    if (bits & LED_GREEN)
        low |= _BV(PA1);
    if (bits & LED_YELLOW)
        low |= _BV(PA0);
    PORTA = (uint8_t)((PORTA | LED_PINS) & ~(low & LED_PINS));
}
