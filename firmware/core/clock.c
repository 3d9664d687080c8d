#include "clock.h"

#include "compiler.h"
#include "mote_state.h"

uint32_t mote_now(const mote_state *st)
{
    return st->hal->now_ms(st->hal->ctx) + st->clock_offset;
}

MOTE_NOINLINE uint16_t mote_random_below(const mote_state *st, uint16_t span)
{
    return st->hal->rand16(st->hal->ctx) % span;
}
