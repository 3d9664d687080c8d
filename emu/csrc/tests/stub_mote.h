/*
 * stub_mote.h - a scripted stand-in for the firmware core (core/mote.h), so
 * the emulator's medium, clock and meters can be tested without it.
 *
 * Each stub node follows stub_plan[id]: once its alarm fires at `send_at_ms`
 * it sends one packet to `dest`; it records what it receives and how its
 * send completed. `data_len` bytes of payload (default 4, at least 2: the
 * sender's id). With `sleep_cpu` it reports CPU off right after booting;
 * with `refuse` it refuses what it receives (no room: no ack, hal.h).
 */
#ifndef EMU_TESTS_STUB_MOTE_H
#define EMU_TESTS_STUB_MOTE_H

#include "firmware/core/mote.h"

#define STUB_MAX_NODES 16

typedef struct stub_plan {
    uint32_t send_at_ms; /* 0 = never sends */
    uint16_t dest;
    uint8_t data_len;
    uint8_t sleep_cpu;
    uint8_t radio_off;
    uint8_t refuse;
} stub_plan;

struct mote_state {
    uint16_t id;
    const mote_hal *hal;
    uint32_t received;
    uint16_t last_src;
    uint8_t send_done;
    uint8_t acked;
    uint32_t alarms;
    uint32_t boots;
};

extern stub_plan stub_plans[STUB_MAX_NODES];

#endif
