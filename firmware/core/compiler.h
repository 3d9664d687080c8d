/*
 * compiler.h - what the core asks of the compiler beyond C99.
 *
 * MOTE_NOINLINE keeps a function out of line where link-time optimisation would copy
 * it into each of its callers: on the mica2 image every copy costs flash (tests/avr,
 * FLASH_LIMIT), and the AVR has little of it. A compiler without the attribute inlines
 * as it likes; the C is the same.
 */
#ifndef MOTE_CORE_COMPILER_H
#define MOTE_CORE_COMPILER_H

#if defined(__GNUC__)
#define MOTE_NOINLINE __attribute__((noinline))
#else
#define MOTE_NOINLINE
#endif

#endif
