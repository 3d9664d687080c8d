/*
 * net.c - building an emulated network and running its event loop.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net_priv.h"

#define MOTE_ALIGN 16u

/*
 * Prefetching (issue 14). Beyond a few thousand nodes the per-node state no longer stays
 * in cache between a node's events, and most of an event's time went to its first loads:
 * the firmware's mote_state (its `hal` pointer at the start, the flags and deadlines block
 * around `am_group` that every entry point reads), the node's HAL binding, energy meter and
 * radio. The loop knows which node comes next (the heap's minimum after a pop), and a
 * transmission's end knows its receivers (the sender's CSR row), so those lines are
 * requested while the current event runs. A hint only: nothing depends on it.
 */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* Macros, not functions: GCC finds a function of prefetches alone free of side effects
 * (pure) and drops its calls before inlining them. */
#define PREFETCH_RANGE(base, off, len)                                              \
    do {                                                                            \
        uint32_t at_;                                                               \
        for (at_ = 0; at_ < (len); at_ += 64u)                                      \
            PREFETCH((base) + (off) + at_);                                         \
    } while (0)

/* What a packet's receiver reads first: its state's first line, control block and query
 * heads, its binding, meter and radio. */
#define PREFETCH_RECEIVER(net, node)                                                \
    do {                                                                            \
        const uint8_t *mote_ = (net)->motes + (net)->mote_stride * (node);          \
        PREFETCH(mote_);                                                            \
        PREFETCH_RANGE(mote_, (net)->hot_off[EMU_HOT_CONTROL],                      \
                       (net)->hot_len[EMU_HOT_CONTROL]);                            \
        PREFETCH_RANGE(mote_, (net)->hot_off[EMU_HOT_QUERY],                        \
                       (net)->hot_len[EMU_HOT_QUERY]);                              \
        PREFETCH(&(net)->nodes[node]);                                              \
        PREFETCH(&(net)->energy.meter[node]);                                       \
        PREFETCH(&(net)->medium.tx[node]);                                          \
        PREFETCH(&(net)->medium.rx[node]);                                          \
    } while (0)

/* ... and an alarm also walks the query runs. */
#define PREFETCH_NODE(net, node)                                                    \
    do {                                                                            \
        PREFETCH_RECEIVER(net, node);                                               \
        PREFETCH_RANGE((net)->motes + (net)->mote_stride * (node),                  \
                       (net)->hot_off[EMU_HOT_RUNS], (net)->hot_len[EMU_HOT_RUNS]); \
    } while (0)

/* ... and a radio timer that starts or ends a frame walks the sender's row of links. */
#define PREFETCH_ROW(m, node)                                                       \
    do {                                                                            \
        uint32_t lo_ = (m)->row[node], links_ = (m)->row[(node) + 1u] - lo_;        \
        PREFETCH_RANGE((const uint8_t *)((m)->dst + lo_), 0u, links_ * 4u);         \
        if ((m)->sinr) {                                                            \
            PREFETCH_RANGE((const uint8_t *)((m)->link_mw + lo_), 0u, links_ * 8u); \
            PREFETCH_RANGE((const uint8_t *)((m)->link_kind + lo_), 0u, links_);    \
        } else {                                                                    \
            PREFETCH_RANGE((const uint8_t *)((m)->prob + lo_), 0u, links_ * 4u);    \
        }                                                                           \
    } while (0)

/* The node whose alarm or radio `slot` is (n: none, or a fault). */
static uint32_t node_of(const emu_net *net, uint32_t slot)
{
    uint32_t n = net->cfg.n_nodes;
    return slot < n ? slot : slot < 2u * n ? slot - n : n;
}

static uint32_t alarm_slot(uint32_t node) { return node; }
static uint32_t fault_slot(const emu_net *net, uint32_t k) { return 2u * net->cfg.n_nodes + k; }

/* Medium callbacks: outcomes of the radio become firmware stimuli. */
static uint8_t on_radio_rx(void *owner, uint32_t node, const uint8_t *msg, uint8_t len)
{
    emu_net *net = owner;
    /* delivered at the frame's end: its start symbol came one airtime earlier */
    net->nodes[node].rx_started_ms =
        (uint32_t)((net->now_us - net->medium.airtime_us[len]) / 1000u);
    net->nodes[node].rx_snr_db = net->medium.rx_snr_db;
    return net->alive[node] && mote_on_radio_rx(emu_mote(net, node), msg, len);
}

static void on_frame_start(void *owner, uint32_t node, uint8_t *msg, uint8_t len)
{
    emu_net *net = owner;
    if (net->alive[node])
        mote_on_frame_start(emu_mote(net, node), msg, len);
}

static void on_send_done(void *owner, uint32_t node, uint8_t outcome)
{
    emu_net *net = owner;
    if (net->alive[node])
        mote_on_send_done(emu_mote(net, node), outcome == MEDIUM_GAVE_UP ? HAL_SEND_ABANDONED
                                               : outcome ? HAL_SEND_ACKED
                                                         : HAL_SEND_UNACKED);
}

static void on_tx(void *owner, uint32_t node, int on)
{
    emu_net *net = owner;
    energy_switch(&net->energy, node, net->now_us, ENERGY_TX, on);
}

static void power_up(emu_net *net, uint32_t node)
{
    /* a booting mote has its CPU running and its radio listening */
    net->alive[node] = 1;
    energy_power_up(&net->energy, node, net->now_us);
    medium_set_listening(&net->medium, node, 1);
}

static void node_kill(emu_net *net, uint32_t node)
{
    if (!net->alive[node])
        return;
    energy_power_down(&net->energy, node, net->now_us);
    net->alive[node] = 0;
    evq_cancel(&net->q, alarm_slot(node));
    medium_reset_node(&net->medium, node);
}

static void node_reboot(emu_net *net, uint32_t node)
{
    if (net->alive[node] || energy_depleted(&net->energy, node))
        return;
    energy_settle(&net->energy, node, net->now_us);
    power_up(net, node);
    mote_init(emu_mote(net, node), emu_mote_id(node), &net->nodes[node].hal);
}

static int alloc_arrays(emu_net *net)
{
    uint32_t n = net->cfg.n_nodes, k, c;
    bigmem_calloc(&net->motes_mem, n, net->mote_stride);
    net->motes = net->motes_mem.p;
    net->nodes = calloc(n, sizeof *net->nodes);
    net->node_rng = calloc(n, sizeof *net->node_rng);
    net->alive = calloc(n, 1);
    net->leds = calloc(n, 1);
    net->counter_block = calloc((size_t)n * EMU_N_COUNTERS, sizeof *net->counter_block);
    net->fault_node = calloc(net->cfg.max_faults ? net->cfg.max_faults : 1, sizeof(uint32_t));
    net->fault_alive = calloc(net->cfg.max_faults ? net->cfg.max_faults : 1, 1);
    net->fault_free = calloc(net->cfg.max_faults ? net->cfg.max_faults : 1, sizeof(uint32_t));
    if (!net->motes || !net->nodes || !net->node_rng || !net->alive || !net->leds ||
        !net->counter_block || !net->fault_node || !net->fault_alive || !net->fault_free)
        return -1;
    for (c = 0; c < EMU_N_COUNTERS; c++)
        net->counters[c] = net->counter_block + (size_t)c * n;
    for (k = 0; k < net->cfg.max_faults; k++)
        net->fault_free[k] = net->cfg.max_faults - 1u - k;
    net->n_fault_free = net->cfg.max_faults;
    return 0;
}

emu_net *emu_net_new(const emu_config *cfg)
{
    emu_net *net;
    uint32_t n = cfg->n_nodes, i;
    const emu_platform *p = emu_platform_get(cfg->platform);
    if (!p || n == 0 || n > EMU_MAX_NODES || cfg->battery_j < 0.0 || cfg->tx_a < 0.0)
        return NULL;
    net = calloc(1, sizeof *net);
    if (!net)
        return NULL;
    net->cfg = *cfg;
    net->platform = p;
    net->mote_stride = (mote_state_size() + MOTE_ALIGN - 1u) / MOTE_ALIGN * MOTE_ALIGN;
    for (i = 0; i < EMU_N_HOT; i++) {
        size_t off, len;
        emu_mote_hot_range((int)i, &off, &len);
        /* the C tests' stub mote is smaller: no range outside the state */
        if (off >= mote_state_size())
            off = len = 0;
        else if (len > mote_state_size() - off)
            len = mote_state_size() - off;
        net->hot_off[i] = (uint32_t)off;
        net->hot_len[i] = (uint32_t)len;
    }
    if (alloc_arrays(net) || evq_init(&net->q, 2u * n + cfg->max_faults) ||
        medium_init(&net->medium, n, p, cfg->lossless != 0, cfg->seed, &net->q, n) ||
        energy_init(&net->energy, n, p, cfg->tx_a, cfg->battery_j) ||
        sensors_init(&net->sensors, n, cfg->seed) ||
        bytefifo_init(&net->uart_out, cfg->uart_capacity)) {
        emu_net_free(net);
        return NULL;
    }
    emu_attrs_default_costs(&net->sensors);
    net->medium.owner = net;
    net->medium.on_rx = on_radio_rx;
    net->medium.on_done = on_send_done;
    net->medium.on_tx = on_tx;
    net->medium.on_frame_start = on_frame_start;
    net->medium.counters = net->counters;
    for (i = 0; i < n; i++) {
        emu_hal_bind(&net->nodes[i], net, i);
        emu_rng_seed(&net->node_rng[i], cfg->seed, 0x10000u + i);
    }
    return net;
}

void emu_net_free(emu_net *net)
{
    if (!net)
        return;
    evq_free(&net->q);
    medium_free(&net->medium);
    energy_free(&net->energy);
    sensors_free(&net->sensors);
    observations_free(&net->obs);
    bytefifo_free(&net->uart_out);
    bigmem_free(&net->motes_mem);
    net->motes = NULL;
    free(net->nodes);
    free(net->node_rng);
    free(net->alive);
    free(net->leds);
    free(net->counter_block);
    free(net->fault_node);
    free(net->fault_alive);
    free(net->fault_free);
    free(net);
}

int emu_net_set_links(emu_net *net, const uint32_t *row, const uint32_t *dst, const float *prob)
{
    return medium_set_links(&net->medium, row, dst, prob);
}

int emu_net_set_link_prob(emu_net *net, uint32_t src, uint32_t dst, float prob)
{
    return medium_set_link_prob(&net->medium, src, dst, prob);
}

int emu_net_set_link_powers(emu_net *net, const float *rx_dbm, const float *noise_dbm,
                            double lock_db, double cca_db)
{
    return medium_set_power(&net->medium, rx_dbm, noise_dbm, lock_db, cca_db);
}

int emu_net_set_link_power(emu_net *net, uint32_t src, uint32_t dst, float rx_dbm, float prob)
{
    return medium_set_link_power(&net->medium, src, dst, rx_dbm, prob);
}

double emu_radio_prr(double snr_db, uint32_t tos_len)
{
    return medium_prr(pow(10.0, snr_db / 10.0), tos_len + MEDIUM_DECODED_EXTRA);
}

void emu_net_set_link_decay(emu_net *net, double per_hour)
{
    net->medium.decay_per_hour = per_hour > 0.0 ? per_hour : 0.0;
}

int emu_net_add_source(emu_net *net, const emu_source_spec *spec)
{
    return sensors_add_source(&net->sensors, spec);
}

int emu_net_assign_source(emu_net *net, uint32_t attr, int source, uint32_t lo, uint32_t hi)
{
    return sensors_assign(&net->sensors, attr, source, lo, hi);
}

int emu_net_set_sensor_cost(emu_net *net, uint32_t attr, double joules, uint32_t time_us)
{
    return sensors_set_cost(&net->sensors, attr, joules, time_us);
}

void emu_net_boot(emu_net *net)
{
    uint32_t i;
    for (i = 0; i < net->cfg.n_nodes; i++) {
        power_up(net, i);
        mote_init(emu_mote(net, i), emu_mote_id(i), &net->nodes[i].hal);
    }
}

static void apply_fault(emu_net *net, uint32_t k)
{
    uint32_t node = net->fault_node[k];
    net->fault_free[net->n_fault_free++] = k;
    if (net->fault_alive[k])
        node_reboot(net, node);
    else
        node_kill(net, node);
}

/* A node's battery is checked whenever one of its own events runs. */
static void check_battery(emu_net *net, uint32_t node)
{
    if (net->energy.capacity_j > 0.0) {
        energy_settle(&net->energy, node, net->now_us);
        if (energy_depleted(&net->energy, node))
            node_kill(net, node);
    }
}

void emu_net_run_until(emu_net *net, uint64_t t_us)
{
    uint32_t n = net->cfg.n_nodes;
    while (evq_next_time(&net->q) <= t_us) {
        uint64_t at;
        uint32_t slot = evq_pop(&net->q, &at), next, ahead;
        emu_set_clock(net, at);
        net->events++;
        /* the next event's node, as a hint: its alarm walks its state, its radio a row */
        next = evq_next_slot(&net->q);
        ahead = node_of(net, next);
        if (ahead < n) {
            PREFETCH_NODE(net, ahead);
            if (next >= n)
                PREFETCH_ROW(&net->medium, ahead);
        }
        if (slot < n) {
            net->alarm_events++;
            check_battery(net, slot);
            if (net->alive[slot])
                mote_on_alarm(emu_mote(net, slot));
        } else if (slot < 2u * n) {
            if (medium_on_air(&net->medium, slot - n)) {
                /* the frame's end delivers to the sender's row: fetch the receivers (SINR:
                 * those locked on it, a third of a row; fetching every one cost 5 %) */
                const emu_medium *m = &net->medium;
                uint32_t e;
                for (e = m->row[slot - n]; e < m->row[slot - n + 1u]; e++)
                    if (medium_may_deliver(m, slot - n, e))
                        PREFETCH_RECEIVER(net, m->dst[e]);
            }
            check_battery(net, slot - n);
            if (net->alive[slot - n])
                medium_on_timer(&net->medium, slot - n, at);
        } else {
            apply_fault(net, slot - 2u * n);
        }
    }
    if (t_us > net->now_us)
        emu_set_clock(net, t_us);
}

uint64_t emu_net_now_us(const emu_net *net) { return net->now_us; }
uint64_t emu_net_events(const emu_net *net) { return net->events; }
uint64_t emu_net_alarm_events(const emu_net *net) { return net->alarm_events; }

uint32_t emu_net_uart_read(emu_net *net, uint8_t *out, uint32_t max)
{
    return bytefifo_pop(&net->uart_out, out, max);
}

uint64_t emu_net_uart_overflow(const emu_net *net) { return net->uart_out.overflow; }

void emu_net_uart_write(emu_net *net, const uint8_t *bytes, uint16_t len)
{
    if (net->alive[MOTE_ROOT_ID])
        mote_on_uart_rx(emu_mote(net, MOTE_ROOT_ID), bytes, len);
}

int emu_net_schedule_fault(emu_net *net, uint32_t node, uint64_t at_us, uint32_t alive)
{
    uint32_t k;
    if (node >= net->cfg.n_nodes || net->n_fault_free == 0)
        return -1;
    k = net->fault_free[--net->n_fault_free];
    net->fault_node[k] = node;
    net->fault_alive[k] = (uint8_t)(alive != 0);
    if (evq_schedule(&net->q, fault_slot(net, k), at_us < net->now_us ? net->now_us : at_us)) {
        net->n_fault_free++;
        return -1;
    }
    return 0;
}

void emu_net_settle_energy(emu_net *net)
{
    uint32_t i;
    for (i = 0; i < net->cfg.n_nodes; i++) {
        energy_settle(&net->energy, i, net->now_us);
        if (energy_depleted(&net->energy, i))
            node_kill(net, i);
    }
    energy_export(&net->energy);
}

const double *emu_net_joules(const emu_net *net, uint32_t phase)
{
    return phase < EMU_N_PHASES ? net->energy.joules[phase] : NULL;
}

const uint64_t *emu_net_phase_us(const emu_net *net, uint32_t phase)
{
    return phase < EMU_N_PHASES ? net->energy.phase_us[phase] : NULL;
}

const uint32_t *emu_net_counters(const emu_net *net, uint32_t counter)
{
    return counter < EMU_N_COUNTERS ? net->counters[counter] : NULL;
}

const uint8_t *emu_net_alive(const emu_net *net) { return net->alive; }
const uint8_t *emu_net_leds(const emu_net *net) { return net->leds; }

void *emu_net_mote(emu_net *net, uint32_t node)
{
    return node < net->cfg.n_nodes ? (void *)emu_mote(net, node) : NULL;
}

void emu_net_routing(emu_net *net, uint16_t *parent, uint8_t *depth)
{
    uint32_t i;
    for (i = 0; i < net->cfg.n_nodes; i++) {
        parent[i] = mote_parent(emu_mote(net, i));
        depth[i] = mote_depth(emu_mote(net, i));
    }
}

void emu_net_record_observations(emu_net *net, int on)
{
    uint32_t i;
    net->obs.on = (uint8_t)(on != 0);
    for (i = 0; i < net->cfg.n_nodes; i++)
        emu_hal_observe(&net->nodes[i], net->obs.on);
}
uint32_t emu_net_observation_count(const emu_net *net) { return net->obs.count; }
const emu_observation *emu_net_observations(const emu_net *net) { return net->obs.rec; }
void emu_net_clear_observations(emu_net *net) { observations_clear(&net->obs); }
uint64_t emu_net_observations_lost(const emu_net *net) { return net->obs.lost; }
