/*
 * hal.h - the only door between the TinyDB core and the world.
 *
 * The core never touches hardware, a clock or an OS. Every effect goes through
 * the function pointers of one `mote_hal`, every stimulus comes in through the
 * mote_on_*() entry points of core/mote.h. The emulator (emu/csrc) and the
 * ATmega128 build are just two implementations of this table.
 *
 * Mechanism:
 *   - Time is logical milliseconds (uint32, wraps after 49 days). The core keeps
 *     ONE pending alarm: set_alarm() replaces the previous one; when it expires
 *     the platform calls mote_on_alarm(). The core multiplexes its own timers
 *     (epoch boundary, transmit slot, beacon, queue drain) on that one alarm.
 *   - The radio carries one packet at a time: radio_send() hands over a TOS_Msg
 *     (5-byte header + `length` data bytes, no CRC); the platform does carrier
 *     sense, backoff, airtime and link-layer ack, then calls
 *     mote_on_send_done(). A send while one is in flight is refused (returns 0).
 *   - The UART is a byte pipe: uart_send() gets already framed bytes
 *     (TinyOS 1.x HDLC framing is done in the core, as on a real mote).
 *   - Sensors are read synchronously; the platform charges the per-attribute
 *     sampling time and energy (it knows them from its profile).
 *   - power() tells the platform which parts are on so it can meter energy.
 */
#ifndef MOTE_HAL_H
#define MOTE_HAL_H

#include <stdint.h>

/* Components reported through mote_hal.power(). */
enum mote_power_part {
    MOTE_PWR_CPU = 0,   /* CPU active (off = sleep / idle) */
    MOTE_PWR_RADIO = 1  /* radio listening (transmit time is metered by the medium) */
};

typedef struct mote_hal {
    void *ctx; /* passed back to every callback; the platform's per-node handle */

    uint32_t (*now_ms)(void *ctx);
    void (*set_alarm)(void *ctx, uint32_t at_ms);

    /* Returns 1 if accepted (mote_on_send_done will follow), 0 if busy. */
    uint8_t (*radio_send)(void *ctx, const uint8_t *tos_msg, uint8_t len);
    void (*uart_send)(void *ctx, const uint8_t *bytes, uint16_t len);

    /* attr is the catalog attribute id (core/catalog.h). */
    int16_t (*sensor_read)(void *ctx, uint8_t attr);

    void (*power)(void *ctx, uint8_t part, uint8_t on);
    void (*leds)(void *ctx, uint8_t bits);
    uint16_t (*rand16)(void *ctx);
} mote_hal;

#endif /* MOTE_HAL_H */
