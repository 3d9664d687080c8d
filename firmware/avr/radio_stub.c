/*
 * radio_stub.c - a radio that hears nothing and whose sends are never acked.
 *
 * Stands in for cc1000.c (the CMake build takes cc1000.c when it exists) so the
 * image builds and a lone root can be tested over its UART. A send is accepted
 * and ends, unacknowledged, at the next poll: the core sees a deaf neighbourhood.
 */
#include "cc1000.h"

static uint8_t pending;

void cc1000_init(void) {}

void cc1000_listen(uint8_t on)
{
    (void)on;
}

uint8_t cc1000_send(const uint8_t *tos_msg, uint8_t len)
{
    (void)tos_msg;
    (void)len;
    if (pending)
        return 0;
    pending = 1;
    return 1;
}

uint8_t cc1000_busy(void)
{
    return pending;
}

void cc1000_poll(void)
{
    if (!pending)
        return;
    pending = 0;
    avr_radio_send_done(0);
}
