#include "ids.h"

#include <avr/pgmspace.h>

#ifndef MOTE_PLATFORM
#error "MOTE_PLATFORM (\"mica2\" or \"mica2dot\") comes from the build (firmware/avr/CMakeLists.txt)"
#endif

/* Not const and not static: the linker must keep them in .data, at a fixed symbol. */
uint16_t TOS_LOCAL_ADDRESS = 1;
uint8_t TOS_AM_GROUP = 0x7d;
/* Read by `mote flash` from the ELF only: the link keeps it with -u (CMakeLists.txt). */
const char MOTE_PLATFORM_NAME[] PROGMEM __attribute__((used)) = MOTE_PLATFORM;
