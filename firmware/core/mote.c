/* Placeholder so the build skeleton links; replaced by the node runtime. */
#include "mote.h"

struct mote_state {
    uint16_t id;
    const mote_hal *hal;
};

size_t mote_state_size(void) { return sizeof(mote_state); }
