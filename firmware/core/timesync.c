#include "timesync.h"

#include "runs.h"

void timesync_adopt(mote_state *st, uint32_t remote_ms)
{
    int32_t diff = (int32_t)(remote_ms - mote_now(st));
    uint8_t i;
    if (st->id == MOTE_ROOT_ID || (diff > -TIME_SYNC_MIN_MS && diff < TIME_SYNC_MIN_MS))
        return;
    st->clock_offset += diff;
    /* A jump of a quarter epoch or more would tear the slot schedule: restart it. */
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING &&
            (uint32_t)(diff < 0 ? -diff : diff) >= st->run[i].epoch_ms / 4u)
            run_retime(st, i);
}
