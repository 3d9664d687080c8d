/*
 * emu_types.h - plain data handed across the Python/C boundary.
 *
 * Kept free of pointers to emulator internals so the same declarations can be
 * repeated verbatim in emu_api.cdef.
 */
#ifndef EMU_TYPES_H
#define EMU_TYPES_H

#include <stdint.h>

enum emu_source_kind {
    EMU_SRC_CONST = 0,  /* base */
    EMU_SRC_WALK = 1,   /* base +- amplitude per read, kept within base +- param */
    EMU_SRC_SINE = 2,   /* base + amplitude sin(2 pi t / period_s + node * param) */
    EMU_SRC_SQUARE = 3, /* base, or base + amplitude for the first `param` fraction of each period */
    EMU_SRC_BURST = 4,  /* base, plus a 25 Hz shake of `amplitude` lasting `param` s once per period_s */
    EMU_SRC_TRACE = 5   /* trace[node % rows][i]; i = t / dt_us, or the read count if dt_us == 0 */
};

typedef struct emu_source_spec {
    uint32_t kind;
    double base;
    double amplitude;
    double period_s;
    double param;
    double noise; /* uniform noise in [-noise, +noise] added to every read */
    const int16_t *trace; /* rows x cols, row-major; the caller keeps it alive */
    uint32_t rows;
    uint32_t cols;
    uint64_t dt_us;
} emu_source_spec;

/* Per-node event counters, one uint32 array each. */
enum emu_counter {
    EMU_CNT_SENT = 0,     /* transmissions put on the air */
    EMU_CNT_RECEIVED = 1, /* packets delivered to this node */
    EMU_CNT_COLLIDED = 2, /* receptions at this node lost to overlapping transmissions */
    EMU_CNT_LOST = 3,     /* receptions at this node lost to the link's error rate */
    EMU_CNT_DROPPED = 4,  /* sends abandoned after MEDIUM_MAX_BACKOFFS busy channels */
    EMU_CNT_ACKED = 5,    /* unicasts acknowledged */
    EMU_CNT_BACKOFFS = 6, /* carrier-sense busy backoffs */
    EMU_CNT_SAMPLES = 7,  /* sensor samples (counted by the HAL) */
    EMU_CNT_UART_BYTES = 8, /* bytes written to this node's UART */
    EMU_N_COUNTERS = 9
};

/* One hal.observe report (firmware/hal/hal.h) of one node, time-stamped. */
#define EMU_OBS_VALUES 16
typedef struct emu_observation {
    uint64_t t_us;
    uint32_t node;
    uint16_t epoch;
    uint8_t kind;     /* enum mote_obs_kind */
    uint8_t qid;
    uint8_t status;
    uint8_t n_fields;
    uint16_t have;
    int32_t values[EMU_OBS_VALUES];
} emu_observation;

#endif /* EMU_TYPES_H */
