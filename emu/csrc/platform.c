#include "platform.h"

/* The CC1000 motes' rate and framing are the firmware's (its slots are built on them). */
#include "firmware/net/airtime.h"

static const emu_platform PLATFORMS[EMU_N_PLATFORMS] = {
    {"mica", 4000000u, 40000u, 12u + 2u, 3.0, 15e-6, 5.5e-3, 4.5e-3, 12.0e-3},
    {"mica2", 7372800u, RADIO_DATA_BPS, RADIO_FRAME_OVERHEAD, 3.0, 15e-6, 8.0e-3, 7.4e-3, 16.5e-3},
    {"mica2dot", 4000000u, RADIO_DATA_BPS, RADIO_FRAME_OVERHEAD, 3.0, 15e-6, 5.5e-3, 7.4e-3, 10.4e-3},
};

const emu_platform *emu_platform_get(uint32_t id)
{
    return id < EMU_N_PLATFORMS ? &PLATFORMS[id] : 0;
}

uint64_t emu_platform_airtime_us(const emu_platform *p, uint32_t len)
{
    uint64_t bits = 8u * (uint64_t)(len + p->overhead_bytes);
    return (bits * 1000000u + p->bit_rate - 1u) / p->bit_rate;
}

const char *emu_memory_profile(void)
{
#ifdef MOTE_PROFILE_AVR
    return "avr";
#else
    return "host";
#endif
}
