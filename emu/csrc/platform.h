/*
 * platform.h - what a mote model costs in time and energy.
 *
 * One immutable profile per platform: radio bit rate and framing overhead
 * (which fix a packet's airtime) and the current of each power phase at the
 * 3 V supply. Figures (approximate, per the TinyDB paper TODS 2005 §2.1 /
 * Table VII and the part datasheets it cites; see emu/README.md):
 *
 *   platform  cpu       radio            sleep  cpu    listen  transmit
 *   mica      4 MHz     TR1000 40 kbps   15 uA  5.5 mA  4.5 mA  12.0 mA
 *   mica2     7.37 MHz  CC1000 19.2 kbps 15 uA  8.0 mA  7.4 mA  16.5 mA (0 dBm)
 *   mica2dot  4 MHz     CC1000 19.2 kbps 15 uA  5.5 mA  7.4 mA  10.4 mA (433 MHz)
 *
 * The CC1000's 19.2 kbps are data bits: TinyOS 1.x ran it at 38.4 kBaud of
 * Manchester chips (MODEM0 with XOSC_FREQ = 1), the setting that works on both
 * motes; "38.4" in mote datasheets is that chip rate. Preamble + sync: TR1000
 * stack 12 bytes, CC1000 stack 28 + 2 bytes; the link-layer CRC (2 bytes)
 * follows the TOS_Msg on air. The CC1000 motes take rate and framing from
 * firmware/net/airtime.h, on which the firmware's timing rules are built.
 */
#ifndef EMU_PLATFORM_H
#define EMU_PLATFORM_H

#include <stdint.h>

enum emu_platform_id { EMU_MICA = 0, EMU_MICA2 = 1, EMU_MICA2DOT = 2, EMU_N_PLATFORMS = 3 };

typedef struct emu_platform {
    const char *name;
    uint32_t cpu_hz;
    uint32_t bit_rate;       /* radio bits per second */
    uint32_t overhead_bytes; /* preamble + sync + CRC around each TOS_Msg */
    double supply_v;
    double sleep_a;  /* whole mote, CPU in power-save, radio off */
    double cpu_a;    /* CPU active (added on top of nothing: replaces sleep) */
    double listen_a; /* radio on, receiving or idle listening */
    double tx_a;     /* radio transmitting */
} emu_platform;

/* NULL for an unknown id. */
const emu_platform *emu_platform_get(uint32_t id);

/* Air time of one TOS_Msg of `len` bytes (header + data), in microseconds. */
uint64_t emu_platform_airtime_us(const emu_platform *p, uint32_t len);

/* "avr" when the core was compiled with the ATmega128 images' limits (MOTE_PROFILE_AVR,
 * emu/build_ffi.py --profile avr), else "host". */
const char *emu_memory_profile(void);

#endif /* EMU_PLATFORM_H */
