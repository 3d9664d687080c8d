/*
 * medium.h - the shared radio channel: who hears a transmission, and intact.
 *
 * Mechanism:
 *   - Links are directed (asymmetry allowed), stored in CSR form: the out-links
 *     of node s are dst[row[s] .. row[s+1]) with a base reception probability
 *     each. All receivers of a packet come from the SENDER's row, so a
 *     transmission costs O(out-degree), independent of network size.
 *   - Every node has a receiver state: until when it hears energy on the
 *     channel, which transmission it is locked on, and whether that reception
 *     was corrupted. A transmission that starts while a receiver already hears
 *     another one corrupts both there (a collision), whatever their strength.
 *   - Sending is CSMA: a node waits a random initial backoff, senses the
 *     channel (busy if it hears anything), and backs off again while busy; it
 *     gives up after MEDIUM_MAX_BACKOFFS (counted as dropped). Polling costs
 *     one event per busy PERIOD, not per poll: a receiver's hear_until never
 *     moves back, so when a poll finds the channel busy, every later poll
 *     before hear_until would too; those polls are played out at once (their
 *     backoffs drawn from the node's own stream, so the outcome is exactly
 *     that of polling) and the next event is the first poll at or after
 *     hear_until, or the poll that gives up.
 *   - At the end of a transmission each receiver that stayed locked on it,
 *     uncorrupted, with its radio listening, receives it with the link's
 *     probability (times a global decay factor). A unicast is acknowledged if
 *     its addressee received it and the ack makes it back over the reverse
 *     link. Broadcasts are never acknowledged (as the CC1000 stack does).
 *     An addressee whose node refuses the packet (on_rx returns 0: no room for
 *     what it would have to forward) still heard it, but the sender gets no
 *     ack and keeps it.
 *   - Lossless mode (tests): an ideal channel of unlimited capacity. Every
 *     listening neighbour receives every packet, nothing collides, nothing is
 *     lost, unicasts are always acknowledged, and senders skip carrier sense
 *     (after the initial backoff) since overlapping is harmless.
 * The medium owns one radio timer slot per node in the network's event queue
 * and reports outcomes through typed callbacks; it knows nothing of motes.
 */
#ifndef EMU_MEDIUM_H
#define EMU_MEDIUM_H

#include <stdint.h>

#include "emu_types.h"
#include "evq.h"
#include "platform.h"
#include "rng.h"

#define MEDIUM_MAX_MSG 64u
#define MEDIUM_MAX_BACKOFFS 32u
#define MEDIUM_BCAST 0xFFFFu


/* Returns 0 if the node refuses the packet: a unicast to it then goes unacknowledged. */
typedef uint8_t (*medium_rx_fn)(void *owner, uint32_t node, const uint8_t *msg, uint8_t len);
typedef void (*medium_done_fn)(void *owner, uint32_t node, uint8_t acked);
typedef void (*medium_tx_fn)(void *owner, uint32_t node, int on);

typedef struct medium_rx {
    uint64_t hear_until; /* channel busy at this node until then */
    uint32_t locked_tx;  /* id of the transmission being received */
    uint8_t corrupt;
    uint8_t listening;
    uint8_t transmitting;
} medium_rx;

typedef struct medium_tx {
    uint32_t id;
    uint8_t phase; /* MEDIUM_IDLE / MEDIUM_BACKOFF / MEDIUM_ON_AIR / MEDIUM_GIVING_UP */
    uint8_t backoffs;
    uint8_t len;
    uint8_t buf[MEDIUM_MAX_MSG];
} medium_tx;

typedef struct emu_medium {
    uint32_t n;
    int lossless;
    uint64_t byte_us; /* backoff unit: one byte time */
    uint32_t airtime_us[MEDIUM_MAX_MSG + 1u]; /* by TOS_Msg length */
    evq *q;
    uint32_t slot_base; /* node i's radio timer is slot slot_base + i */
    uint32_t *row;      /* n + 1 */
    uint32_t *dst;
    float *prob;
    double decay_per_hour;
    uint32_t next_tx_id;
    medium_rx *rx;
    medium_tx *tx;
    emu_rng *backoff_rng; /* per node: backoff draws depend only on the node's own polls */
    uint32_t **counters; /* the network's per-node counter arrays, by enum emu_counter */
    emu_rng rng; /* link losses and acks, in event order */
    void *owner;
    medium_rx_fn on_rx;
    medium_done_fn on_done;
    medium_tx_fn on_tx;
} emu_medium;

int medium_init(emu_medium *m, uint32_t n, const emu_platform *p, int lossless, uint64_t seed,
                evq *q, uint32_t slot_base);
void medium_free(emu_medium *m);

/* Replaces the link table (copied). row has n + 1 entries. 0 on success. */
int medium_set_links(emu_medium *m, const uint32_t *row, const uint32_t *dst, const float *prob);
int medium_set_link_prob(emu_medium *m, uint32_t src, uint32_t dst, float prob);

/* Queues `msg` at `node`; 0 if the node already has a send in progress. */
int medium_send(emu_medium *m, uint32_t node, uint64_t now_us, const uint8_t *msg, uint8_t len);
/* The node's radio timer slot fired. */
void medium_on_timer(emu_medium *m, uint32_t node, uint64_t now_us);
void medium_set_listening(emu_medium *m, uint32_t node, int on);
/* Forgets a node's send in progress and silences it (node died). */
void medium_reset_node(emu_medium *m, uint32_t node);

#endif /* EMU_MEDIUM_H */
