#include "ids.h"

#include <avr/pgmspace.h>

#ifndef MOTE_PLATFORM
#error "MOTE_PLATFORM (\"mica2\" or \"mica2dot\") comes from the build (firmware/avr/CMakeLists.txt)"
#endif

/* Not const and not static: the linker must keep them in .data, at a fixed symbol --
 * under the link-time optimiser too, which would make them local and rename them. */
uint16_t TOS_LOCAL_ADDRESS __attribute__((used, externally_visible)) = 1;
uint8_t TOS_AM_GROUP __attribute__((used, externally_visible)) = 0x7d;
/* Read by `mote flash` from the ELF only: the link keeps it with -u (CMakeLists.txt). */
const char MOTE_PLATFORM_NAME[] PROGMEM __attribute__((used, externally_visible)) = MOTE_PLATFORM;
