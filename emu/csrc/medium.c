#include "medium.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "moteid.h"

enum { MEDIUM_IDLE = 0, MEDIUM_BACKOFF = 1, MEDIUM_ON_AIR = 2, MEDIUM_GIVING_UP = 3 };

/* CC1000 stack style backoffs, in byte times: initial 1..32, congestion 1..16. */
#define INITIAL_BACKOFF_UNITS 32u
#define CONGESTION_BACKOFF_UNITS 16u

#define LINE 64u

int medium_init(emu_medium *m, uint32_t n, const emu_platform *p, int lossless, uint64_t seed,
                evq *q, uint32_t slot_base)
{
    uint32_t i;
    memset(m, 0, sizeof *m);
    m->rx_mem = calloc((size_t)(n ? n : 1) * sizeof *m->rx + LINE, 1);
    if (m->rx_mem)
        m->rx = (medium_rx *)(((uintptr_t)m->rx_mem + LINE - 1u) / LINE * LINE);
    m->tx = calloc(n ? n : 1, sizeof *m->tx);
    m->backoff_rng = calloc(n ? n : 1, sizeof *m->backoff_rng);
    m->row = calloc((size_t)n + 1, sizeof *m->row);
    if (!m->rx || !m->tx || !m->backoff_rng || !m->row) {
        medium_free(m);
        return -1;
    }
    m->n = n;
    m->lossless = lossless;
    for (i = 0; i <= MEDIUM_MAX_MSG; i++)
        m->airtime_us[i] = (uint32_t)emu_platform_airtime_us(p, i);
    m->byte_us = (8000000u + p->bit_rate - 1u) / p->bit_rate;
    m->q = q;
    m->slot_base = slot_base;
    emu_rng_seed(&m->rng, seed, 0x4ad10u);
    for (i = 0; i < n; i++)
        emu_rng_seed(&m->backoff_rng[i], seed, 0xb0ff000000ull + i);
    return 0;
}

/* The sinr model's powers, gone with the link table they belonged to. */
static void drop_powers(emu_medium *m)
{
    free(m->lock);
    free(m->link_mw);
    free(m->link_kind);
    free(m->link_snr_db);
    free(m->ack_prr);
    free(m->clear_prr);
    free(m->clear_len);
    m->lock = NULL;
    m->link_mw = NULL;
    m->link_kind = NULL;
    m->link_snr_db = NULL;
    m->ack_prr = NULL;
    m->clear_prr = NULL;
    m->clear_len = NULL;
    m->sinr = 0;
}

void medium_free(emu_medium *m)
{
    free(m->rx_mem);
    free(m->tx);
    free(m->backoff_rng);
    free(m->row);
    free(m->dst);
    free(m->prob);
    drop_powers(m);
    m->rx_mem = NULL;
    m->rx = NULL;
    m->tx = NULL;
    m->backoff_rng = NULL;
    m->row = NULL;
    m->dst = NULL;
    m->prob = NULL;
}

int medium_set_links(emu_medium *m, const uint32_t *row, const uint32_t *dst, const float *prob)
{
    uint32_t i, e, n_links = row[m->n];
    uint32_t *new_dst;
    float *new_prob;
    if (row[0] != 0)
        return -1;
    for (i = 0; i < m->n; i++)
        if (row[i] > row[i + 1])
            return -1;
    for (e = 0; e < n_links; e++)
        if (dst[e] >= m->n || !(prob[e] >= 0.0f && prob[e] <= 1.0f))
            return -1;
    new_dst = malloc(sizeof *new_dst * (n_links ? n_links : 1));
    new_prob = malloc(sizeof *new_prob * (n_links ? n_links : 1));
    if (!new_dst || !new_prob) {
        free(new_dst);
        free(new_prob);
        return -1;
    }
    memcpy(new_dst, dst, sizeof *new_dst * n_links);
    memcpy(new_prob, prob, sizeof *new_prob * n_links);
    memcpy(m->row, row, sizeof *m->row * ((size_t)m->n + 1));
    free(m->dst);
    free(m->prob);
    m->dst = new_dst;
    m->prob = new_prob;
    drop_powers(m);
    return 0;
}

static int find_link(const emu_medium *m, uint32_t src, uint32_t dst)
{
    uint32_t e;
    for (e = m->row[src]; e < m->row[src + 1]; e++)
        if (m->dst[e] == dst)
            return (int)e;
    return -1;
}

int medium_set_link_prob(emu_medium *m, uint32_t src, uint32_t dst, float prob)
{
    int e;
    if (src >= m->n || dst >= m->n || !(prob >= 0.0f && prob <= 1.0f))
        return -1;
    e = find_link(m, src, dst);
    if (e < 0)
        return -1;
    m->prob[e] = prob;
    return 0;
}

static double dbm_to_mw(double dbm)
{
    return pow(10.0, dbm / 10.0);
}

/* Power over the receiver's noise in whole dB, at least 1 (rx_snr_db's 0 means unknown). */
static int8_t snr_db(double link_mw, double noise_mw)
{
    double db = 10.0 * log10(link_mw / noise_mw);
    return (int8_t)(db >= 127.0 ? 127 : db < 1.0 ? 1 : (int)(db + 0.5));
}

/* Link e's figures that follow from its power alone. */
static void derive_link(emu_medium *m, uint32_t e)
{
    const medium_lock *lk = &m->lock[m->dst[e]];
    double p = m->link_mw[e];
    m->link_kind[e] = (uint8_t)((p >= lk->cca_mw ? MEDIUM_LINK_SENSES : 0u) |
                                (p >= m->lock_ratio * lk->noise_mw ? MEDIUM_LINK_LOCKABLE : 0u));
    m->link_snr_db[e] = snr_db(p, lk->noise_mw);
    m->ack_prr[e] = medium_prr(p / lk->noise_mw, MEDIUM_ACK_BYTES);
    m->clear_len[e] = 0;
}

int medium_set_power(emu_medium *m, const float *rx_dbm, const float *noise_dbm,
                     double lock_db, double cca_db)
{
    uint32_t i, e, n_links = m->row[m->n], room;
    if (m->lossless || !isfinite(lock_db) || !isfinite(cca_db) || lock_db < cca_db)
        return -1;
    for (e = 0; e < n_links; e++)
        if (!isfinite(rx_dbm[e]))
            return -1;
    for (i = 0; i < m->n; i++)
        if (!isfinite(noise_dbm[i]))
            return -1;
    drop_powers(m);
    room = n_links ? n_links : 1u;
    m->lock = calloc(m->n ? m->n : 1u, sizeof *m->lock);
    m->link_mw = malloc(sizeof *m->link_mw * room);
    m->link_kind = malloc(sizeof *m->link_kind * room);
    m->link_snr_db = malloc(sizeof *m->link_snr_db * room);
    m->ack_prr = malloc(sizeof *m->ack_prr * room);
    m->clear_prr = malloc(sizeof *m->clear_prr * room);
    m->clear_len = malloc(sizeof *m->clear_len * room);
    if (!m->lock || !m->link_mw || !m->link_kind || !m->link_snr_db || !m->ack_prr || !m->clear_prr || !m->clear_len) {
        drop_powers(m);
        return -1;
    }
    for (i = 0; i < m->n; i++) {
        m->lock[i].noise_mw = dbm_to_mw(noise_dbm[i]);
        m->lock[i].cca_mw = dbm_to_mw(noise_dbm[i] + cca_db);
    }
    m->lock_ratio = pow(10.0, lock_db / 10.0);
    for (e = 0; e < n_links; e++) {
        m->link_mw[e] = dbm_to_mw(rx_dbm[e]);
        derive_link(m, e);
    }
    m->sinr = 1;
    return 0;
}

int medium_set_link_power(emu_medium *m, uint32_t src, uint32_t dst, float rx_dbm, float prob)
{
    int e;
    if (!m->sinr || src >= m->n || dst >= m->n || !(prob >= 0.0f && prob <= 1.0f) ||
        isnan(rx_dbm))
        return -1;
    e = find_link(m, src, dst);
    if (e < 0)
        return -1;
    /* a frame on air keeps the power it started with out of the sums (leave() clamps) */
    m->link_mw[e] = dbm_to_mw(rx_dbm);
    m->prob[e] = prob;
    derive_link(m, (uint32_t)e);
    return 0;
}

double medium_prr(double sinr, uint32_t decoded_bytes)
{
    /* non-coherent FSK: chip error 0.5 exp(-Eb/2N0), Eb/N0 = SINR x noise bandwidth / rate */
    double pe, chips;
    if (sinr > MEDIUM_SURE_SINR)
        return 1.0;
    pe = 0.5 * exp(-0.5 * sinr * (MEDIUM_NOISE_BW_HZ / MEDIUM_DATA_BPS));
    chips = 8.0 * MEDIUM_CHIPS_PER_BIT * (double)decoded_bytes;
    return exp(chips * log1p(-pe));
}

static void arm(emu_medium *m, uint32_t node, uint64_t at_us)
{
    evq_schedule(m->q, m->slot_base + node, at_us);
}

static uint64_t backoff_us(emu_medium *m, uint32_t node, uint32_t units)
{
    return (1u + emu_rng_below(&m->backoff_rng[node], units)) * m->byte_us;
}

int medium_send(emu_medium *m, uint32_t node, uint64_t now_us, const uint8_t *msg, uint8_t len)
{
    medium_tx *t = &m->tx[node];
    if (t->phase != MEDIUM_IDLE || len > MEDIUM_MAX_MSG || len < 2)
        return 0;
    memcpy(t->buf, msg, len);
    t->len = len;
    t->backoffs = 0;
    t->phase = MEDIUM_BACKOFF;
    arm(m, node, now_us + backoff_us(m, node, INITIAL_BACKOFF_UNITS));
    return 1;
}

/* Registers the start of `s`'s transmission at every receiver in its row. */
static void spread(emu_medium *m, uint32_t s, uint32_t tx_id, uint64_t now_us, uint64_t end_us)
{
    uint32_t e;
    for (e = m->row[s]; e < m->row[s + 1]; e++) {
        uint32_t r = m->dst[e];
        medium_rx *rx = &m->rx[r];
        if (!rx->listening)
            continue;
        if (rx->busy_until > now_us || rx->transmitting) {
            /* already hearing something, or deaf while sending: this one is lost here */
            if (!m->lossless && !rx->transmitting) {
                m->counters[EMU_CNT_COLLIDED][r] += rx->corrupt ? 1u : 2u;
            }
            rx->corrupt = 1;
            if (end_us > rx->busy_until)
                rx->busy_until = end_us;
        } else {
            rx->corrupt = 0;
            rx->busy_until = end_us;
        }
        rx->locked_tx = tx_id;
    }
}

/*
 * SINR model: the frame's power arrives at every node of the sender's row. Most of a
 * row is too weak to be locked on, so it only adds energy: whether a link could lock
 * or sense at all is fixed with its power (link_kind), and the receiver's lock-side
 * state is read only where it matters.
 */
static void spread_sinr(emu_medium *m, uint32_t s, uint32_t tx_id, uint64_t end_us)
{
    const double lock_ratio = m->lock_ratio;
    uint32_t e;
    for (e = m->row[s]; e < m->row[s + 1]; e++) {
        uint32_t r = m->dst[e];
        medium_rx *rx = &m->rx[r];
        medium_lock *lk;
        double p = m->link_mw[e], interference;
        unsigned kind = m->link_kind[e];
        rx->energy_mw += p;
        rx->on_air++;
        if ((kind & MEDIUM_LINK_SENSES) && end_us > rx->busy_until)
            rx->busy_until = end_us;
        if (!rx->listening || rx->transmitting)
            continue;
        if (rx->locked) {
            lk = &m->lock[r];
            interference = rx->energy_mw - lk->lock_mw;
            if (interference > lk->worst_mw)
                lk->worst_mw = interference;
            rx->interfered = 1;
            if (kind & MEDIUM_LINK_LOCKABLE)
                m->counters[EMU_CNT_COLLIDED][r]++; /* lockable, but the receiver was busy */
            continue;
        }
        if (!(kind & MEDIUM_LINK_LOCKABLE))
            continue; /* under the lock threshold even on a quiet channel */
        lk = &m->lock[r];
        interference = rx->on_air > 1 ? rx->energy_mw - p : 0.0;
        if (interference < 0.0)
            interference = 0.0;
        if (p < lock_ratio * (lk->noise_mw + interference)) {
            m->counters[EMU_CNT_COLLIDED][r]++; /* drowned at its start */
            continue;
        }
        rx->locked = 1;
        rx->locked_tx = tx_id;
        rx->interfered = (uint8_t)(rx->on_air > 1);
        lk->lock_mw = p;
        lk->worst_mw = interference;
    }
}

/* SINR model: a frame's power leaves node r's sum; an empty channel is exactly 0. */
static void leave(medium_rx *rx, double p)
{
    if (rx->on_air == 0)
        return;
    if (--rx->on_air == 0) {
        rx->energy_mw = 0.0;
        return;
    }
    rx->energy_mw -= p;
    if (rx->energy_mw < 0.0)
        rx->energy_mw = 0.0;
}

static void start_tx(emu_medium *m, uint32_t s, uint64_t now_us)
{
    medium_tx *t = &m->tx[s];
    uint64_t end_us = now_us + m->airtime_us[t->len];
    t->phase = MEDIUM_ON_AIR;
    t->id = ++m->next_tx_id;
    m->rx[s].transmitting = 1;
    m->counters[EMU_CNT_SENT][s]++;
    m->on_tx(m->owner, s, 1);
    if (m->on_frame_start)
        m->on_frame_start(m->owner, s, t->buf, t->len);
    if (m->sinr) {
        m->rx[s].locked = 0; /* a half-duplex radio drops what it was receiving */
        spread_sinr(m, s, t->id, end_us);
    } else {
        spread(m, s, t->id, now_us, end_us);
    }
    arm(m, s, end_us);
}

static double decay_factor(const emu_medium *m, uint64_t now_us)
{
    if (m->decay_per_hour <= 0.0)
        return 1.0;
    return exp(-m->decay_per_hour * (double)now_us / 3.6e9);
}

static int link_ok(emu_medium *m, float prob, double factor)
{
    return emu_rng_unit(&m->rng) < (double)prob * factor;
}

/*
 * The PRR of the frame of `len` bytes the receiver (lock state lk) locked on over link e, at the worst
 * SINR it saw. A frame nothing interfered with, at the link's power, has the link's own
 * PRR for its length: most receptions are such, and their exp() was a few % of a run.
 */
static double locked_prr(emu_medium *m, uint32_t e, const medium_lock *lk, uint8_t len)
{
    if (lk->worst_mw != 0.0 || lk->lock_mw != m->link_mw[e])
        return medium_prr(lk->lock_mw / (lk->noise_mw + lk->worst_mw), len + MEDIUM_DECODED_EXTRA);
    if (m->clear_len[e] != len) {
        m->clear_prr[e] = medium_prr(lk->lock_mw / lk->noise_mw, len + MEDIUM_DECODED_EXTRA);
        m->clear_len[e] = len;
    }
    return m->clear_prr[e];
}

/*
 * Whether receiver dst[e] decodes the frame of `t` that is ending now, counting a
 * loss or collision when it does not. SINR: the receiver locked on this frame at
 * its start decodes it with the PRR of the worst SINR it saw. Probability model:
 * a listening receiver that locked on it, and that nothing corrupted, decodes it
 * with the link's probability (lossless: always).
 */
static int frame_received(emu_medium *m, uint32_t e, const medium_tx *t, double factor)
{
    uint32_t r = m->dst[e];
    medium_rx *rx = &m->rx[r];
    if (m->sinr) {
        leave(rx, m->link_mw[e]);
        if (!rx->locked || rx->locked_tx != t->id)
            return 0;
        rx->locked = 0;
        if (emu_rng_unit(&m->rng) >= locked_prr(m, e, &m->lock[r], t->len) * factor) {
            m->counters[rx->interfered ? EMU_CNT_COLLIDED : EMU_CNT_LOST][r]++;
            return 0;
        }
        return 1;
    }
    if (!rx->listening)
        return 0;
    if (m->lossless)
        return 1;
    if (rx->locked_tx != t->id || rx->corrupt || rx->transmitting)
        return 0;
    if (!link_ok(m, m->prob[e], factor)) {
        m->counters[EMU_CNT_LOST][r]++;
        return 0;
    }
    return 1;
}

/* Whether the addressee's ack reaches sender s over the reverse link, if there is one. */
static uint8_t ack_arrives(emu_medium *m, uint32_t to, uint32_t s, double factor)
{
    int back = find_link(m, to, s);
    if (!m->sinr)
        return m->lossless || (back >= 0 && link_ok(m, m->prob[back], factor));
    if (back < 0)
        return 0;
    return emu_rng_unit(&m->rng) < m->ack_prr[back] * factor;
}

static void end_tx(emu_medium *m, uint32_t s, uint64_t now_us)
{
    medium_tx *t = &m->tx[s];
    uint16_t addr = (uint16_t)(t->buf[0] | (t->buf[1] << 8));
    uint32_t to = emu_node_index(addr); /* the addressee's index (moteid.h) */
    double factor = decay_factor(m, now_us);
    int addressee_got_it = 0;
    uint8_t acked = 0;
    uint32_t e;

    m->rx[s].transmitting = 0;
    m->on_tx(m->owner, s, 0);
    for (e = m->row[s]; e < m->row[s + 1]; e++) {
        uint32_t r = m->dst[e];
        if (!frame_received(m, e, t, factor))
            continue;
        m->counters[EMU_CNT_RECEIVED][r]++;
        m->rx_snr_db = m->sinr ? m->link_snr_db[e] : 0;
        if (m->on_rx(m->owner, r, t->buf, t->len) && r == to)
            addressee_got_it = 1;
    }
    if (addr != MEDIUM_BCAST && addressee_got_it) {
        acked = ack_arrives(m, to, s, factor);
        if (acked)
            m->counters[EMU_CNT_ACKED][s]++;
    }
    t->phase = MEDIUM_IDLE;
    m->on_done(m->owner, s, acked);
}

static void give_up(emu_medium *m, uint32_t node)
{
    m->tx[node].phase = MEDIUM_IDLE;
    m->counters[EMU_CNT_DROPPED][node]++;
    m->on_done(m->owner, node, MEDIUM_GAVE_UP);
}

/*
 * Carrier sense at `now_us`. A busy channel stays busy at least until the
 * node's busy_until, so the polls that would fall before it are all busy:
 * count them and draw their backoffs here, and wake up for the first poll that
 * could find the channel free, or for the poll that gives up.
 */
static void sense(emu_medium *m, uint32_t node, uint64_t now_us)
{
    medium_tx *t = &m->tx[node];
    uint64_t busy_until = m->rx[node].busy_until;
    uint64_t poll = now_us;
    if (m->lossless || busy_until <= now_us) {
        start_tx(m, node, now_us);
        return;
    }
    do {
        m->counters[EMU_CNT_BACKOFFS][node]++;
        if (++t->backoffs >= MEDIUM_MAX_BACKOFFS) {
            if (poll == now_us) {
                give_up(m, node);
            } else {
                t->phase = MEDIUM_GIVING_UP;
                arm(m, node, poll);
            }
            return;
        }
        poll += backoff_us(m, node, CONGESTION_BACKOFF_UNITS);
    } while (poll < busy_until);
    arm(m, node, poll);
}

int medium_on_air(const emu_medium *m, uint32_t node)
{
    return m->tx[node].phase == MEDIUM_ON_AIR;
}

void medium_on_timer(emu_medium *m, uint32_t node, uint64_t now_us)
{
    switch (m->tx[node].phase) {
    case MEDIUM_BACKOFF:
        sense(m, node, now_us);
        break;
    case MEDIUM_ON_AIR:
        end_tx(m, node, now_us);
        break;
    case MEDIUM_GIVING_UP:
        give_up(m, node);
        break;
    default:
        break;
    }
}

void medium_set_listening(emu_medium *m, uint32_t node, int on)
{
    m->rx[node].listening = (uint8_t)(on != 0);
    if (!on)
        m->rx[node].locked = 0; /* a frame half missed is lost, even if the radio returns */
}

/* SINR model: a sender dies mid-frame; its power stops now, and whoever was
 * receiving it loses it (the end event that would have done this is cancelled). */
static void cut_off(emu_medium *m, uint32_t s)
{
    uint32_t e;
    for (e = m->row[s]; e < m->row[s + 1]; e++) {
        medium_rx *rx = &m->rx[m->dst[e]];
        leave(rx, m->link_mw[e]);
        if (rx->locked && rx->locked_tx == m->tx[s].id) {
            rx->locked = 0;
            m->counters[EMU_CNT_LOST][m->dst[e]]++;
        }
    }
}

void medium_reset_node(emu_medium *m, uint32_t node)
{
    if (m->sinr && m->tx[node].phase == MEDIUM_ON_AIR)
        cut_off(m, node);
    evq_cancel(m->q, m->slot_base + node);
    m->tx[node].phase = MEDIUM_IDLE;
    m->rx[node].listening = 0;
    m->rx[node].transmitting = 0;
    m->rx[node].locked = 0;
}
