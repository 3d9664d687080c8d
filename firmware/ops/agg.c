#include "agg.h"

#include "../net/le16.h"
#include "arith.h"

/*
 * A state is [base][window part]. base is the non-windowed layout of the
 * operation (agg.h table): value (2 B narrow, 4 B wide) then aux (the MIN/MAX
 * holder's id, AVG's count; narrow SUM/COUNT carry an unused id word, wide ones
 * nothing). A window appends, after its lastResult base:
 *   +0 head, +1 tail, +2 size, +3 nvals, +4 epochsLeft     (TinyDB's ring meta)
 *   +5 ring: `size` entries of one epoch's own contribution each, value then
 *      (WINAVG only) count, widths as in base
 *   then private: due u16 (epoch the open window is reported at), last u16
 *   (epoch of the newest ring entry), present u8 (bit i: entry i holds a
 *   reading), filled u8 (lastResult holds a reading or a child's window).
 * A narrow record carries base + meta + ring (TinyDB's layout), a wide one base.
 */
#define W_HEAD 0u
#define W_TAIL 1u
#define W_SIZE 2u
#define W_NVALS 3u
#define W_LEFT 4u
#define W_RING 5u
#define W_PRIVATE 6u /* due, last, present, filled */
#define EXP_LEFT 2u  /* narrow EXPAVG: value i16, epochsLeft u8 */

static int16_t get_i16(const uint8_t *p) { return le16_get_i(p); }
static void put_i16(uint8_t *p, int16_t v) { le16_put(p, (uint16_t)v); }

static uint32_t le32_get(const uint8_t *p)
{
    return (uint32_t)le16_get(p) | (uint32_t)le16_get(p + 2) << 16;
}

static void le32_put(uint8_t *p, uint32_t v)
{
    le16_put(p, (uint16_t)(v & 0xFFFFu));
    le16_put(p + 2, (uint16_t)(v >> 16));
}

static uint8_t is_window(uint8_t op) { return op >= AGG_WINAVG && op <= AGG_WINCNT; }

/* The non-windowed operation a state folds with: a window's, a wide EXPAVG's (AVG). */
static uint8_t base_op(uint8_t op, uint8_t wide)
{
    switch (op) {
    case AGG_WINAVG:
        return AGG_AVG;
    case AGG_WINSUM:
        return AGG_SUM;
    case AGG_WINMIN:
        return AGG_MIN;
    case AGG_WINMAX:
        return AGG_MAX;
    case AGG_WINCNT:
        return AGG_COUNT;
    case AGG_EXPAVG:
        return wide ? AGG_AVG : AGG_EXPAVG;
    default:
        return op;
    }
}

/* ---- layout ---- */

static uint8_t value_width(uint8_t wide) { return wide ? 4u : 2u; }

static uint8_t aux_width(uint8_t base, uint8_t wide)
{
    if (!wide)
        return 2u;
    return base == AGG_AVG ? 4u : (base == AGG_MIN || base == AGG_MAX) ? 2u : 0u;
}

static uint8_t base_size(uint8_t base, uint8_t wide)
{
    return (uint8_t)(value_width(wide) + aux_width(base, wide));
}

static uint8_t window_of(const qexpr *e) { return e->u.agg.arg0; }
static uint8_t slide_of(const qexpr *e) { return e->u.agg.arg1; }

/* Ring entries kept: w - s when windows overlap; none otherwise (narrow keeps TinyDB's one). */
static uint8_t ring_slots(const qexpr *e, uint8_t wide)
{
    uint8_t w = window_of(e), s = slide_of(e);
    return w > s ? (uint8_t)(w - s) : (uint8_t)(wide ? 0u : 1u);
}

static uint8_t has_ring(const qexpr *e) { return window_of(e) > slide_of(e); }

static uint8_t entry_size(uint8_t base, uint8_t wide)
{
    return (uint8_t)(value_width(wide) + (base == AGG_AVG ? aux_width(base, wide) : 0u));
}

uint8_t agg_check(uint8_t op, uint8_t arg0, uint8_t arg1)
{
    uint8_t ring;
    if (op < AGG_SUM || op > AGG_WINCNT)
        return AGG_UNSUPPORTED;
    if (!is_window(op))
        return AGG_OK;
    if (arg0 == 0 || arg1 == 0)
        return AGG_WINDOW_TOO_LARGE;
    ring = arg0 > arg1 ? (uint8_t)(arg0 - arg1) : 1u;
    return ring > (op == AGG_WINAVG ? AGG_RING_MAX_AVG : AGG_RING_MAX_VALUE) ? AGG_WINDOW_TOO_LARGE
                                                                              : AGG_OK;
}

uint8_t agg_wire_size(const qexpr *e, uint8_t wide)
{
    uint8_t op = e->op, base = base_op(op, wide);
    if (agg_check(op, e->u.agg.arg0, e->u.agg.arg1) != AGG_OK)
        return 0;
    if (base == AGG_EXPAVG)
        return 3;
    if (is_window(op) && !wide)
        return (uint8_t)(AGG_WIN_HEADER + ring_slots(e, wide) * entry_size(base, wide));
    return base_size(base, wide);
}

uint8_t agg_state_size(const qexpr *e, uint8_t wide)
{
    uint8_t op = e->op, base = base_op(op, wide);
    if (agg_check(op, e->u.agg.arg0, e->u.agg.arg1) != AGG_OK)
        return 0;
    if (!is_window(op))
        return agg_wire_size(e, wide);
    return (uint8_t)(base_size(base, wide) + W_RING + ring_slots(e, wide) * entry_size(base, wide) +
                     W_PRIVATE);
}

uint8_t agg_is_temporal(uint8_t op, uint8_t wide)
{
    return is_window(op) || (op == AGG_EXPAVG && !wide);
}

/* ---- values of a base state (or a ring entry: value, then AVG's count) ---- */

static int32_t get_value(const uint8_t *p, uint8_t wide)
{
    return wide ? wrap32(le32_get(p)) : get_i16(p);
}

static void put_value(uint8_t *p, uint8_t wide, int32_t v)
{
    if (wide)
        le32_put(p, (uint32_t)v);
    else
        put_i16(p, wrap16(v));
}

static uint32_t get_aux(const uint8_t *p, uint8_t width)
{
    return width == 4u ? le32_get(p) : width == 2u ? le16_get(p) : 0u;
}

static void put_aux(uint8_t *p, uint8_t width, uint32_t v)
{
    if (width == 4u)
        le32_put(p, v);
    else if (width == 2u)
        le16_put(p, (uint16_t)(v & 0xFFFFu));
}

static int32_t identity(uint8_t base, uint8_t wide)
{
    if (base == AGG_MIN)
        return wide ? INT32_MAX : INT16_MAX;
    if (base == AGG_MAX)
        return wide ? INT32_MIN : INT16_MIN;
    return 0;
}

/* value + v, wrapping at the layout's width */
static int32_t add(int32_t value, int32_t v, uint8_t wide)
{
    uint32_t sum = (uint32_t)value + (uint32_t)v;
    return wide ? wrap32(sum) : wrap16(wrap32(sum));
}

static void base_init(uint8_t *st, uint8_t base, uint8_t wide, uint16_t self)
{
    uint8_t vw = value_width(wide);
    put_value(st, wide, identity(base, wide));
    /* MIN/MAX hold themselves until beaten; SUM/COUNT's narrow id word is 0 */
    put_aux(st + vw, aux_width(base, wide), (base == AGG_MIN || base == AGG_MAX) ? self : 0u);
}

/* Fold (value, aux) into a base state; for COUNT `value` is a count, for AVG `aux` is. */
static void base_fold(uint8_t *st, uint8_t base, uint8_t wide, int32_t value, uint32_t aux)
{
    uint8_t vw = value_width(wide), aw = aux_width(base, wide);
    int32_t mine = get_value(st, wide);
    switch (base) {
    case AGG_SUM:
    case AGG_COUNT:
        put_value(st, wide, add(mine, value, wide));
        break;
    case AGG_AVG:
        put_value(st, wide, add(mine, value, wide));
        put_aux(st + vw, aw, get_aux(st + vw, aw) + aux);
        break;
    case AGG_MIN:
        if (value < mine) {
            put_value(st, wide, value);
            put_aux(st + vw, aw, aux);
        }
        break;
    case AGG_MAX:
        if (value > mine) {
            put_value(st, wide, value);
            put_aux(st + vw, aw, aux);
        }
        break;
    default:
        break;
    }
}

/* A local reading as (value, aux) for base_fold. */
static void reading(uint8_t base, int32_t v, uint16_t self, int32_t *value, uint32_t *aux)
{
    *value = base == AGG_COUNT ? 1 : v;
    *aux = base == AGG_AVG ? 1u : (base == AGG_MIN || base == AGG_MAX) ? self : 0u;
}

/* Narrow EXPAVG: value - (value >> b) + (v >> b), b = 16 - newBits (§9.3). */
static int16_t expavg_step(int16_t value, int16_t v, uint8_t new_bits)
{
    uint8_t b = (uint8_t)(new_bits >= 16 ? 0 : 16 - new_bits);
    return wrap16((int32_t)value - asr32(value, b) + asr32(v, b));
}

/* ---- windows ---- */

typedef struct win {
    uint8_t *st;
    uint8_t *meta;   /* head, tail, size, nvals, epochsLeft */
    uint8_t *ring;
    uint8_t *priv;   /* due, last, present, filled */
    uint8_t base, wide, esize;
    uint8_t w, s;
} win;

#define P_DUE 0u
#define P_LAST 2u
#define P_PRESENT 4u
#define P_FILLED 5u

static win win_of(uint8_t *st, const agg_ctx *c)
{
    win x;
    x.st = st;
    x.wide = c->wide;
    x.base = base_op(c->e->op, c->wide);
    x.esize = entry_size(x.base, c->wide);
    x.w = window_of(c->e);
    x.s = slide_of(c->e);
    x.meta = st + base_size(x.base, c->wide);
    x.ring = x.meta + W_RING;
    x.priv = x.ring + ring_slots(c->e, c->wide) * x.esize;
    return x;
}

/* The first report epoch at or after t. */
static uint16_t report_at_or_after(uint16_t t, uint8_t s)
{
    return (uint16_t)(t + (uint16_t)((s - t % s) % s));
}

/* Epochs from a to b (mod 2^16); "before" when the distance is under half the range. */
static uint16_t ahead(uint16_t from, uint16_t to) { return (uint16_t)(to - from); }

static uint8_t *entry(const win *x, uint8_t slot) { return x->ring + slot * x->esize; }

/* Slot of the entry k epochs older than the newest. */
static uint8_t back(const win *x, uint8_t k)
{
    uint8_t size = x->meta[W_SIZE];
    return (uint8_t)((x->meta[W_TAIL] + size - 1u - k % size) % size);
}

/* Push an absent entry for the next epoch (TinyDB's ring order: write at tail). */
static void win_push(win *x)
{
    uint8_t size = x->meta[W_SIZE], tail = x->meta[W_TAIL];
    uint8_t *p = entry(x, tail);
    put_value(p, x->wide, identity(x->base, x->wide));
    if (x->base == AGG_AVG)
        put_aux(p + value_width(x->wide), aux_width(x->base, x->wide), 0);
    x->priv[P_PRESENT] &= (uint8_t)~(1u << tail);
    x->meta[W_TAIL] = (uint8_t)((tail + 1u) % size);
    if (x->meta[W_NVALS] < size)
        x->meta[W_NVALS]++;
    else
        x->meta[W_HEAD] = (uint8_t)((x->meta[W_HEAD] + 1u) % size);
}

/* lastResult restarts for the window reported at `due`: the ring's epochs inside it. */
static void win_restart(win *x, uint16_t due, uint16_t self)
{
    uint16_t last = le16_get(x->priv + P_LAST);
    uint8_t k, filled = 0;
    base_init(x->st, x->base, x->wide, self);
    for (k = 0; k < x->meta[W_NVALS]; k++) {
        uint8_t slot = back(x, k);
        const uint8_t *p = entry(x, slot);
        int32_t value;
        uint32_t aux;
        if (!(x->priv[P_PRESENT] & (1u << slot)) ||
            ahead((uint16_t)(last - k), due) >= x->w)
            continue;
        value = get_value(p, x->wide);
        aux = x->base == AGG_AVG ? get_aux(p + value_width(x->wide), aux_width(x->base, x->wide))
              : (x->base == AGG_MIN || x->base == AGG_MAX) ? self
                                                             : 0u;
        base_fold(x->st, x->base, x->wide, value, aux);
        filled = 1;
    }
    le16_put(x->priv + P_DUE, due);
    x->priv[P_FILLED] = filled;
}

/* Everything a window needs at the start of epoch t: fresh, empty, newest entry for t. */
static void win_reset(win *x, uint16_t t, uint16_t self, uint8_t slots)
{
    uint16_t due = report_at_or_after(t, x->s);
    base_init(x->st, x->base, x->wide, self);
    x->meta[W_HEAD] = x->meta[W_TAIL] = x->meta[W_NVALS] = 0;
    x->meta[W_SIZE] = slots;
    x->meta[W_LEFT] = (uint8_t)(due - t);
    le16_put(x->priv + P_DUE, due);
    le16_put(x->priv + P_LAST, t);
    x->priv[P_PRESENT] = x->priv[P_FILLED] = 0;
}

/*
 * Bring the window to epoch t: one absent entry per epoch since the newest
 * (the epoch's own contribution is folded in later by agg_update), and if a
 * report epoch went by without a delivery (the node skipped epochs), restart
 * for the next one.
 */
static void win_advance(win *x, const agg_ctx *c)
{
    uint16_t t = c->epoch, last = le16_get(x->priv + P_LAST), due;
    uint16_t gap = ahead(last, t), i;
    if (gap == 0)
        return;
    if (gap >= 0x8000u) { /* the epoch went back: start over */
        win_reset(x, t, c->self, x->meta[W_SIZE]);
        if (has_ring(c->e))
            win_push(x);
        return;
    }
    if (has_ring(c->e))
        for (i = 0; i < gap && i < x->meta[W_SIZE]; i++)
            win_push(x);
    le16_put(x->priv + P_LAST, t);
    due = le16_get(x->priv + P_DUE);
    if (ahead(due, t) != 0 && ahead(due, t) < 0x8000u)
        win_restart(x, report_at_or_after(t, x->s), c->self);
    x->meta[W_LEFT] = (uint8_t)(le16_get(x->priv + P_DUE) - t);
}

/* ---- public ---- */

void agg_init(uint8_t *st, const agg_ctx *c)
{
    uint8_t op = c->e->op, size = agg_state_size(c->e, c->wide), i;
    uint8_t base = base_op(op, c->wide);
    for (i = 0; i < size; i++)
        st[i] = 0;
    if (size == 0 || base == AGG_EXPAVG)
        return;
    if (!is_window(op)) {
        base_init(st, base, c->wide, c->self);
    } else {
        win x = win_of(st, c);
        win_reset(&x, c->epoch, c->self, ring_slots(c->e, c->wide));
        if (has_ring(c->e))
            win_push(&x);
    }
}

void agg_update(uint8_t *st, const agg_ctx *c, int32_t v)
{
    uint8_t op = c->e->op, base = base_op(op, c->wide);
    int32_t value;
    uint32_t aux;
    if (!c->wide)
        v = wrap16(v);
    if (base == AGG_EXPAVG) {
        put_i16(st, expavg_step(get_i16(st), (int16_t)v, c->e->u.agg.arg0));
        return;
    }
    reading(base, v, c->self, &value, &aux);
    if (is_window(op)) {
        win x = win_of(st, c);
        win_advance(&x, c);
        if (has_ring(c->e)) {
            uint8_t slot = back(&x, 0);
            uint8_t *p = entry(&x, slot);
            int32_t mine = get_value(p, c->wide);
            if (base == AGG_MIN)
                put_value(p, c->wide, v < mine ? v : mine);
            else if (base == AGG_MAX)
                put_value(p, c->wide, v > mine ? v : mine);
            else
                put_value(p, c->wide, add(mine, value, c->wide));
            if (base == AGG_AVG) {
                uint8_t *count = p + value_width(c->wide);
                uint8_t aw = aux_width(base, c->wide);
                put_aux(count, aw, get_aux(count, aw) + 1u);
            }
            x.priv[P_PRESENT] |= (uint8_t)(1u << slot);
        }
        /* only the last w epochs before the report count (all of them when w > s) */
        if (ahead(c->epoch, le16_get(x.priv + P_DUE)) >= x.w)
            return;
        x.priv[P_FILLED] = 1;
    }
    base_fold(st, base, c->wide, value, aux);
}

void agg_merge(uint8_t *st, const agg_ctx *c, const uint8_t *child)
{
    uint8_t op = c->e->op, base = base_op(op, c->wide);
    if (base == AGG_EXPAVG) {
        put_i16(st, expavg_step(get_i16(st), get_i16(child), c->e->u.agg.arg0));
        return;
    }
    if (is_window(op)) {
        win x = win_of(st, c);
        win_advance(&x, c);
        x.priv[P_FILLED] = 1;
    }
    base_fold(st, base, c->wide, get_value(child, c->wide),
              get_aux(child + value_width(c->wide), aux_width(base, c->wide)));
}

uint8_t agg_epoch_has_data(uint8_t *st, const agg_ctx *c)
{
    win x;
    if (!is_window(c->e->op))
        return 1;
    x = win_of(st, c);
    win_advance(&x, c);
    return le16_get(x.priv + P_DUE) == c->epoch && x.priv[P_FILLED];
}

uint8_t agg_end_epoch(uint8_t *st, const agg_ctx *c)
{
    uint8_t op = c->e->op;
    win x;
    if (agg_is_temporal(op, c->wide) && !is_window(op))
        return 1; /* narrow EXPAVG carries over */
    if (!is_window(op))
        return 0; /* the next reading or record initialises it again */
    x = win_of(st, c);
    win_advance(&x, c);
    if (le16_get(x.priv + P_DUE) == c->epoch)
        win_restart(&x, (uint16_t)(c->epoch + x.s), c->self);
    x.meta[W_LEFT] = (uint8_t)(le16_get(x.priv + P_DUE) - c->epoch);
    return x.priv[P_FILLED] || x.priv[P_PRESENT];
}

int32_t agg_value(const uint8_t *st, uint8_t wide) { return get_value(st, wide); }
