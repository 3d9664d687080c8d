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
 *     mote_on_send_done() with a HAL_SEND_* outcome: a MAC that found the
 *     channel busy through all its backoffs says so (HAL_SEND_ABANDONED)
 *     rather than "unacknowledged", because then no neighbour heard it. A send
 *     while one is in flight is refused (returns 0).
 *     A platform that can should call mote_on_frame_start() when the frame's
 *     start symbol goes out, before the payload does (TinyOS's
 *     RadioSendCoordinator.startSymbol): the core stamps its time sync fields
 *     then, so the stamp does not age by the carrier-sense backoff.
 *   - The UART is a byte pipe: uart_send() gets already framed bytes
 *     (TinyOS 1.x HDLC framing is done in the core, as on a real mote).
 *   - Sensors are read synchronously; the platform charges the per-attribute
 *     sampling time and energy (it knows them from its profile).
 *   - power() tells the platform which parts are on so it can meter energy.
 *   - observe() (optional, NULL on a real mote) is told what the node did
 *     that no packet shows: which attribute values a query's evaluation read
 *     in an epoch, and when a query started or stopped here. The emulator
 *     builds its ground truth from it; it must not change the node.
 */
#ifndef MOTE_HAL_H
#define MOTE_HAL_H

#include <stdint.h>

/* Components reported through mote_hal.power(). */
enum mote_power_part {
    MOTE_PWR_CPU = 0,   /* CPU active (off = sleep / idle) */
    MOTE_PWR_RADIO = 1  /* radio listening (transmit time is metered by the medium) */
};

enum mote_obs_kind {
    MOTE_OBS_SAMPLED = 1, /* a query's evaluation in one epoch: the values it read */
    MOTE_OBS_QUERY = 2    /* a query's status changed (query.h enum query_status) */
};

/* mote_on_send_done outcomes */
#define HAL_SEND_UNACKED 0u   /* on the air; no ack came (a broadcast's never does) */
#define HAL_SEND_ACKED 1u     /* on the air, and the addressee acknowledged it */
#define HAL_SEND_ABANDONED 2u /* never on the air: the channel stayed busy */
#define MOTE_OBS_MAX_VALUES 16u

typedef struct mote_observation {
    uint8_t kind;          /* enum mote_obs_kind */
    uint8_t qid;
    uint16_t epoch;        /* the node's epoch number for the query */
    uint8_t status;        /* QUERY: the new status; SAMPLED: 1 if every selection held */
    uint8_t n_fields;      /* SAMPLED: entries of values[] */
    uint16_t have;         /* SAMPLED: bit i set if values[i] was read (acquisitional) */
    const int32_t *values; /* SAMPLED: one per query field, valid during the call */
} mote_observation;

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
    /* 1 if the radio acknowledges a unicast addressed to the node only when
     * mote_on_radio_rx returns 1 for it -- a radio that acks in software once the
     * packet is in, as the CC1000 stack does. The core then refuses, unacknowledged,
     * what it has no room to forward, and keeps listening: senders keep their packets
     * and hear it make room, while what needs no room (a child's aggregate record,
     * merged into the node's own) is still taken. 0: the radio acks whatever it
     * receives; the core stops listening instead while it has no room. */
    uint8_t selective_acks; /* read through HAL_SELECTIVE_ACKS (below) */
    void (*leds)(void *ctx, uint8_t bits);
    uint16_t (*rand16)(void *ctx);
    void (*observe)(void *ctx, const mote_observation *obs); /* may be NULL */
    /* May be NULL. The platform's now_ms() at the start symbol of the frame that
     * mote_on_radio_rx is delivering: time stamps in it are compared with this, so
     * the frame's airtime is not taken for clock skew. NULL: the delivery time, as
     * TinyDB's receivers do (they adopt a stamp verbatim). */
    uint32_t (*rx_started_ms)(void *ctx);
    /* May be NULL. How far the frame mote_on_radio_rx is delivering stood above the
     * receiver's noise floor, in dB (TinyOS 1.x's TOS_Msg strength, as a ratio): the
     * CC1000's RSSI at the sync word against its idle floor. MOTE_SNR_UNKNOWN where
     * the platform cannot tell (a received frame is never at 0 dB: locking on takes
     * about 6). Routing weighs weak links by it (net/routing.h). */
    int8_t (*rx_snr_db)(void *ctx);
} mote_hal;

#define MOTE_SNR_UNKNOWN 0

/* A platform that fixes these at build time (the AVR images, firmware/avr/CMakeLists.txt)
 * lets the core fold its tests of them away: flash, not behaviour. */
#ifdef MOTE_SELECTIVE_ACKS
#define HAL_SELECTIVE_ACKS(hal) 1
#else
#define HAL_SELECTIVE_ACKS(hal) ((hal)->selective_acks)
#endif
#ifdef MOTE_NO_RX_STARTED
#define HAL_RX_STARTED(hal) 0
#else
#define HAL_RX_STARTED(hal) ((hal)->rx_started_ms != 0)
#endif
#ifdef MOTE_HAS_RX_SNR
#define HAL_RX_SNR(hal) ((hal)->rx_snr_db((hal)->ctx))
#else
#define HAL_RX_SNR(hal) ((hal)->rx_snr_db ? (hal)->rx_snr_db((hal)->ctx) : MOTE_SNR_UNKNOWN)
#endif

#endif /* MOTE_HAL_H */
