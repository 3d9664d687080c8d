#include "stack_painter.h"

void stack_painter_init(avr_t *avr, stack_painter_t *s, uint16_t ram_free_start)
{
    uint32_t a;
    s->avr = avr;
    s->ram_free_start = ram_free_start;
    for (a = ram_free_start; a <= avr->ramend; a++)
        avr->data[a] = STACK_PAINT;
}

uint16_t stack_painter_high_water(const stack_painter_t *s)
{
    uint32_t a = s->ram_free_start;
    while (a <= s->avr->ramend && s->avr->data[a] == STACK_PAINT)
        a++;
    return (uint16_t)(s->avr->ramend + 1u - a);
}
