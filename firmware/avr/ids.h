/*
 * ids.h - what `mote flash` patches in the image, and what it checks.
 *
 * TOS_LOCAL_ADDRESS and TOS_AM_GROUP are initialised globals in .data, so their
 * initial values sit in flash at __data_load_start + (symbol - __data_start):
 * the place TinyOS 1.x's set-mote-id rewrote, and `mote flash` now does.
 * MOTE_PLATFORM_NAME ("mica2" or "mica2dot") names the board the image was built
 * for, so an image is not flashed onto the other one.
 */
#ifndef MOTE_AVR_IDS_H
#define MOTE_AVR_IDS_H

#include <stdint.h>

extern uint16_t TOS_LOCAL_ADDRESS;
extern uint8_t TOS_AM_GROUP;
extern const char MOTE_PLATFORM_NAME[];

#endif /* MOTE_AVR_IDS_H */
