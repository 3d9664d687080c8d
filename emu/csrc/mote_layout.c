/*
 * mote_layout.c - where in the firmware's mote_state the fields every entry point reads
 * lie, for the event loop's prefetching (net.c). The only emulator file that sees
 * mote_state's insides (firmware/core/mote_state.h, read, never changed); the C tests'
 * stub mote has another layout, which the caller's bound check covers.
 */
#include <stddef.h>

#include "firmware/core/mote_state.h"
#include "net_priv.h"

/* The block of deadlines and flags (next_beacon_at .. am_group): alarms read it, and
 * so does every packet's dispatch (am_group). The state's first line (hal,
 * clock_offset: the clock) is fetched anyway. */
size_t emu_mote_hot_offset(void)
{
    return offsetof(mote_state, am_group);
}
