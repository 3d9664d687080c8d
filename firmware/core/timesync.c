#include "timesync.h"

#include "clock.h"
#include "mote_state.h"
#include "runs.h"

/* Logical time at the start symbol of the frame being received (hal.h). */
static uint32_t frame_started(const mote_state *st)
{
    if (!HAL_RX_STARTED(st->hal))
        return mote_now(st);
    return st->hal->rx_started_ms(st->hal->ctx) + st->clock_offset;
}

void timesync_adopt(mote_state *st, uint32_t remote_ms)
{
    int32_t diff = (int32_t)(remote_ms - frame_started(st));
    uint32_t jump;
    uint8_t i;
    if (st->id == MOTE_ROOT_ID || (diff > -TIME_SYNC_MIN_MS && diff < TIME_SYNC_MIN_MS))
        return;
    /* Unsigned: time stamps from the air are arbitrary and successive jumps accumulate
     * past INT32_MAX; logical time is modular anyway. */
    st->clock_offset += (uint32_t)diff;
    /* A jump of a quarter epoch or more would tear the slot schedule: restart it.
     * The magnitude in unsigned arithmetic: -INT32_MIN overflows. */
    jump = diff < 0 ? 0u - (uint32_t)diff : (uint32_t)diff;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (st->queries.slot[i].status >= QUERY_RUNNING && jump >= st->run[i].epoch_ms / 4u)
            run_retime(st, i);
}
