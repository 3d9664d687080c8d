/*
 * mote_layout.c - where in the firmware's mote_state the fields every entry point reads
 * lie, for the event loop's prefetching (net.c). The only emulator file that sees
 * mote_state's insides (firmware/core/mote_state.h, read, never changed); the C tests'
 * stub mote has another layout, which the caller's bound check covers.
 */
#include <stddef.h>

#include "firmware/core/mote_state.h"
#include "net_priv.h"

/*
 * EMU_HOT_CONTROL: the deadlines and flags (next_beacon_at .. am_group) and the routing
 * table after them: alarms read the deadlines, every packet's dispatch checks am_group
 * and routing scans the neighbours. EMU_HOT_RUNS: the per-query epoch schedule, which
 * an alarm walks. EMU_HOT_QUERY: the head of the last query slot (status, has_agg, the
 * epoch), which nearly every entry point reads for each slot; the first slot's head
 * shares the state's first line (hal, clock_offset), which is fetched anyway. At 10,000
 * nodes the second slot's status was the firmware's most missed line.
 */
void emu_mote_hot_range(int which, size_t *offset, size_t *len)
{
    if (which == EMU_HOT_CONTROL) {
        *offset = offsetof(mote_state, next_beacon_at);
        *len = offsetof(mote_state, srx) - *offset;
    } else if (which == EMU_HOT_QUERY) {
        *offset = offsetof(mote_state, queries.slot[QUERY_SLOTS - 1u]);
        *len = offsetof(query, fields);
    } else {
        *offset = offsetof(mote_state, run);
        *len = sizeof(((mote_state *)0)->run);
    }
}
