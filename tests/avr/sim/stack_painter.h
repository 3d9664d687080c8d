/*
 * stack_painter.h - measures the firmware's stack high-water mark.
 *
 * Mechanism: before the first instruction, every SRAM byte between the end of
 * .bss (the ELF's _end) and RAMEND is painted with STACK_PAINT; the stack grows
 * down from RAMEND into it. At the end, the lowest byte that no longer holds the
 * paint is the deepest the stack reached. The firmware has no heap (no malloc),
 * so nothing else writes there.
 */
#ifndef MOTE_SIM_STACK_PAINTER_H
#define MOTE_SIM_STACK_PAINTER_H

#include <stdint.h>

#include <simavr/sim_avr.h>

#define STACK_PAINT 0xA5u

typedef struct stack_painter_t {
    avr_t *avr;
    uint16_t ram_free_start; /* first byte after .data/.bss */
} stack_painter_t;

void stack_painter_init(avr_t *avr, stack_painter_t *s, uint16_t ram_free_start);
/* Bytes of stack used at the deepest point so far. */
uint16_t stack_painter_high_water(const stack_painter_t *s);

#endif /* MOTE_SIM_STACK_PAINTER_H */
