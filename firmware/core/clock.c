#include "clock.h"

uint32_t mote_now(const mote_state *st)
{
    return st->hal->now_ms(st->hal->ctx) + st->clock_offset;
}
