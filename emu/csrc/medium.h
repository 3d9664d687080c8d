/*
 * medium.h - the shared radio channel: who hears a transmission, and intact.
 *
 * Mechanism:
 *   - Links are directed (asymmetry allowed), stored in CSR form: the out-links
 *     of node s are dst[row[s] .. row[s+1]) with a base reception probability
 *     each. All receivers of a packet come from the SENDER's row, so a
 *     transmission costs O(out-degree), independent of network size.
 *   - Two reception models share that table. The probability model (the
 *     default of medium_set_links) is described first; the SINR model
 *     (medium_set_power) replaces its collision, loss, ack and carrier-sense
 *     rules, and is described after it.
 *   - Every node has a receiver state: until when it hears energy on the
 *     channel, which transmission it is locked on, and whether that reception
 *     was corrupted. A transmission that starts while a receiver already hears
 *     another one corrupts both there (a collision), whatever their strength.
 *   - Sending is CSMA: a node waits a random initial backoff, senses the
 *     channel (busy if it hears anything), and backs off again while busy; it
 *     gives up after MEDIUM_MAX_BACKOFFS (counted as dropped). Polling costs
 *     one event per busy PERIOD, not per poll: a receiver's busy_until never
 *     moves back, so when a poll finds the channel busy, every later poll
 *     before busy_until would too; those polls are played out at once (their
 *     backoffs drawn from the node's own stream, so the outcome is exactly
 *     that of polling) and the next event is the first poll at or after
 *     busy_until, or the poll that gives up.
 *   - At the end of a transmission each receiver that stayed locked on it,
 *     uncorrupted, with its radio listening, receives it with the link's
 *     probability (times a global decay factor). A unicast is acknowledged if
 *     its addressee received it and the ack makes it back over the reverse
 *     link. Broadcasts are never acknowledged (as the CC1000 stack does).
 *     An addressee whose node refuses the packet (on_rx returns 0: no room for
 *     what it would have to forward) still heard it, but the sender gets no
 *     ack and keeps it.
 *   - SINR model: each link also has a received power and each node a noise
 *     floor (both fixed by Python, emu/propagation.py). Powers add in mW:
 *     every node keeps the summed power of the frames on air at it (added at
 *     a frame's start, subtracted at its end, over the sender's row) and how
 *     many they are; when that count drops to 0 the sum is reset to exactly 0,
 *     so rounding cannot pile up across busy periods.
 *     A node that is listening, not sending and not already locked locks onto
 *     a starting frame if the frame's SINR there (its power over the noise
 *     floor plus every other frame on air) is at least the lock threshold. While
 *     locked it keeps the largest interference seen (the sum only grows at a
 *     frame's start, so checking then is enough). A later frame never takes a
 *     locked receiver over, however strong: the CC1000 stack does not look for
 *     a new sync word in the middle of a frame. At the frame's end it is
 *     received with probability medium_prr(worst SINR, its decoded bytes)
 *     times the decay factor, so a frame much stronger than its interferers
 *     survives them (capture) and equal frames destroy each other. A failed
 *     frame counts as collided if another frame overlapped it, else as lost;
 *     a frame that would have been locked on a quiet channel but was not
 *     (interference, or the node was locked on another) counts as collided.
 *     An addressee that took a unicast acks it; the ack arrives with
 *     medium_prr(reverse link SNR, MEDIUM_ACK_BYTES), no interference.
 *     Carrier sense is by energy: the channel is busy at a node while a frame
 *     whose own power there is at least its noise floor + the CCA threshold is on
 *     air. busy_until (the latest end of such frames) never moves back, so
 *     the bulk play-out of busy polls above stays exact. A sum of frames each
 *     below the threshold is not sensed: when such a sum would stop being
 *     busy depends on frames yet to end, so it has no monotone busy_until.
 *     The lock threshold is at least the CCA one, so a node locked on a frame
 *     always senses it and never starts sending in the middle of it.
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

/* SINR model (see above and emu/README.md "Radio model" for the sources). The lock and
 * carrier-sense thresholds are given to medium_set_power (Python: RadioParams). */
#define MEDIUM_NOISE_BW_HZ 30000.0 /* CC1000 receiver noise bandwidth */
#define MEDIUM_DATA_BPS 19200.0    /* data bits per second: 38.4 kbaud Manchester */
#define MEDIUM_CHIPS_PER_BIT 2u    /* Manchester: two channel symbols per data bit */
/* Over this SINR (17.5 dB) every frame is decoded: the chip error rate is under 1e-19, and
 * the PRR of the longest frame rounds to 1.0 in double precision. Most receptions of a
 * grid are over it; the two exp() they spare were 6 % of a 1,000-node MAX's time. */
#define MEDIUM_SURE_SINR 56.0
/* Decoded around each TOS_Msg: the 2-byte sync word before it and the 2-byte CRC after;
 * errors in the preamble only shorten bit synchronisation, so it is not counted. */
#define MEDIUM_DECODED_EXTRA 4u
#define MEDIUM_ACK_BYTES 4u /* an ack: sync word + 2-byte ack code */
#define MEDIUM_LINK_SENSES 1u   /* power >= the receiver's carrier-sense threshold */
#define MEDIUM_LINK_LOCKABLE 2u /* power >= its lock threshold on a quiet channel */


/* Returns 0 if the node refuses the packet: a unicast to it then goes unacknowledged. */
typedef uint8_t (*medium_rx_fn)(void *owner, uint32_t node, const uint8_t *msg, uint8_t len);
/* `outcome`: 0 on the air but unacked, 1 acked, MEDIUM_GAVE_UP never on the air. */
#define MEDIUM_GAVE_UP 2u
typedef void (*medium_done_fn)(void *owner, uint32_t node, uint8_t outcome);
typedef void (*medium_tx_fn)(void *owner, uint32_t node, int on);
/* The sender's start symbol: its frame may still be rewritten (time stamps). */
typedef void (*medium_frame_fn)(void *owner, uint32_t node, uint8_t *msg, uint8_t len);

/* A node's receiver: the part every frame reaching it touches, at its start and end.
 * 32 bytes, two to a cache line: a sender's row is mostly runs of consecutive ids, so
 * its receivers share lines (the SINR model's rows are ~45 links long). */
typedef struct medium_rx {
    double energy_mw; /* SINR: summed power of the frames on air here */
    /* channel busy at this node until then (probability model: anything heard; SINR: the
     * latest end of a frame sensed) */
    uint64_t busy_until;
    uint32_t locked_tx; /* id of the transmission being received */
    uint32_t on_air;    /* SINR: frames on air whose power reaches this node */
    uint8_t listening;
    uint8_t transmitting;
    uint8_t corrupt;    /* probability model: locked_tx collided here */
    uint8_t locked;     /* SINR: receiving locked_tx, whose power here is lock_mw */
    uint8_t interfered; /* SINR: another frame was on air here during the locked one */
} medium_rx;

/* SINR: the rest of a receiver, read only where a frame could be locked on. */
typedef struct medium_lock {
    double lock_mw;  /* power of the frame locked on */
    double worst_mw; /* largest interference while locked */
    double noise_mw; /* noise floor */
    double cca_mw;   /* carrier-sense threshold */
} medium_lock;

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
    int sinr;          /* 1: SINR model (medium_set_power) */
    double *link_mw;   /* SINR: received power per link, parallel to dst */
    /* SINR, per link, fixed with its power: what every reception over it would
     * otherwise recompute (each log10 or exp was a few % of a run) */
    uint8_t *link_kind;    /* MEDIUM_LINK_ bits: whether the receiver senses, could lock */
    int8_t *link_snr_db;   /* power over the receiver's noise, as rx_snr_db reports it */
    double *ack_prr;       /* an ack's PRR over the link, no interference */
    double *clear_prr;     /* the PRR of a frame of clear_len bytes, no interference */
    uint8_t *clear_len;    /* 0: clear_prr not computed yet */
    double lock_ratio; /* SINR: linear lock threshold */
    double decay_per_hour;
    uint32_t next_tx_id;
    medium_rx *rx; /* 64-byte aligned, inside rx_mem */
    void *rx_mem;
    medium_lock *lock; /* SINR, per node */
    medium_tx *tx;
    emu_rng *backoff_rng; /* per node: backoff draws depend only on the node's own polls */
    uint32_t **counters; /* the network's per-node counter arrays, by enum emu_counter */
    emu_rng rng; /* link losses and acks, in event order */
    void *owner;
    medium_rx_fn on_rx;
    medium_done_fn on_done;
    medium_tx_fn on_tx;
    medium_frame_fn on_frame_start; /* may be NULL */
    /* SINR: dB over the receiver's noise of the frame on_rx is delivering (the
     * received power, as an RSSI sample at its sync word reads it); 0 unknown */
    int8_t rx_snr_db;
} emu_medium;

int medium_init(emu_medium *m, uint32_t n, const emu_platform *p, int lossless, uint64_t seed,
                evq *q, uint32_t slot_base);
void medium_free(emu_medium *m);

/* Replaces the link table (copied). row has n + 1 entries. 0 on success. */
int medium_set_links(emu_medium *m, const uint32_t *row, const uint32_t *dst, const float *prob);
int medium_set_link_prob(emu_medium *m, uint32_t src, uint32_t dst, float prob);
/* Switches to the SINR model: rx_dbm per link (parallel to the current dst), noise_dbm
 * per node; a frame is locked on at SINR >= lock_db and sensed at noise + cca_db. 0 on
 * success; -1 in lossless mode, for non-finite figures or lock_db < cca_db. Call at
 * setup, after medium_set_links (which switches back to the probability model). */
int medium_set_power(emu_medium *m, const float *rx_dbm, const float *noise_dbm,
                     double lock_db, double cca_db);
/* SINR model: one existing link's received power and reported probability. */
int medium_set_link_power(emu_medium *m, uint32_t src, uint32_t dst, float rx_dbm, float prob);
/* Probability that `decoded_bytes` bytes of non-coherent FSK, Manchester coded, all
 * arrive intact at linear SINR `sinr`. */
double medium_prr(double sinr, uint32_t decoded_bytes);

/* Queues `msg` at `node`; 0 if the node already has a send in progress. */
int medium_send(emu_medium *m, uint32_t node, uint64_t now_us, const uint8_t *msg, uint8_t len);
/* Whether link e's receiver can be given the frame of `sender` now on air (SINR: it
 * is locked on it): worth fetching that node's state before the frame ends. */
static inline int medium_may_deliver(const emu_medium *m, uint32_t sender, uint32_t e)
{
    const medium_rx *rx = &m->rx[m->dst[e]];
    return !m->sinr || (rx->locked && rx->locked_tx == m->tx[sender].id);
}
/* Whether the node's frame is on air (its radio timer is the frame's end). */
int medium_on_air(const emu_medium *m, uint32_t node);
/* The node's radio timer slot fired. */
void medium_on_timer(emu_medium *m, uint32_t node, uint64_t now_us);
void medium_set_listening(emu_medium *m, uint32_t node, int on);
/* Forgets a node's send in progress and silences it (node died). */
void medium_reset_node(emu_medium *m, uint32_t node);

#endif /* EMU_MEDIUM_H */
