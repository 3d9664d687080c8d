#include "agg.h"

#include "../net/le16.h"
#include "arith.h"

/* Offsets inside a state (§9.3). */
#define ST_VALUE 0u  /* value / sum */
#define ST_AUX 2u    /* id / count */
#define ST_EXP_LEFT 2u
#define ST_HEAD 4u
#define ST_TAIL 5u
#define ST_SIZE 6u
#define ST_NVALS 7u
#define ST_LEFT 8u
#define ST_RING 9u

static int16_t get_i16(const uint8_t *p) { return wrap16((int32_t)le16_get(p)); }
static void put_i16(uint8_t *p, int16_t v) { le16_put(p, (uint16_t)v); }

static uint8_t is_window(uint8_t op) { return op >= AGG_WINAVG && op <= AGG_WINCNT; }

/* The non-windowed operation a windowed one applies to its lastResult. */
static uint8_t base_op(uint8_t op)
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
    default:
        return op;
    }
}

static uint8_t ring_entries(uint8_t window, uint8_t slide)
{
    return window > slide ? (uint8_t)(window - slide) : 1u;
}

static uint8_t ring_entry_size(uint8_t op) { return op == AGG_WINAVG ? 4u : 2u; }

static uint8_t slide_of(const qexpr *e) { return e->u.agg.arg1 ? e->u.agg.arg1 : 1u; }

uint8_t agg_check(uint8_t op, uint8_t arg0, uint8_t arg1)
{
    uint8_t ring;
    if (op < AGG_SUM || op > AGG_WINCNT)
        return AGG_UNSUPPORTED;
    if (!is_window(op))
        return AGG_OK;
    ring = ring_entries(arg0, arg1);
    return ring > (op == AGG_WINAVG ? AGG_RING_MAX_AVG : AGG_RING_MAX_VALUE) ? AGG_WINDOW_TOO_LARGE
                                                                              : AGG_OK;
}

uint8_t agg_state_size(const qexpr *e)
{
    uint8_t op = e->op;
    if (agg_check(op, e->u.agg.arg0, e->u.agg.arg1) != AGG_OK)
        return 0;
    if (op == AGG_EXPAVG)
        return 3;
    if (is_window(op))
        return (uint8_t)(AGG_WIN_HEADER +
                         ring_entries(e->u.agg.arg0, e->u.agg.arg1) * ring_entry_size(op));
    return 4;
}

uint8_t agg_is_temporal(uint8_t op) { return op == AGG_EXPAVG || is_window(op); }

/* ---- lastResult operations shared by plain and windowed aggregates ---- */

static void base_init(uint8_t *st, uint8_t op, uint16_t self)
{
    switch (op) {
    case AGG_MIN:
        put_i16(st + ST_VALUE, INT16_MAX);
        le16_put(st + ST_AUX, self);
        break;
    case AGG_MAX:
        put_i16(st + ST_VALUE, INT16_MIN);
        le16_put(st + ST_AUX, self);
        break;
    default: /* SUM, COUNT: value 0, id unused (0); AVG: sum 0, count 0 */
        le16_put(st + ST_VALUE, 0);
        le16_put(st + ST_AUX, 0);
        break;
    }
}

/* Fold one (value, aux) pair into lastResult; for COUNT and AVG `aux` is a count. */
static void base_fold(uint8_t *st, uint8_t op, int16_t value, uint16_t aux)
{
    int16_t mine = get_i16(st + ST_VALUE);
    switch (op) {
    case AGG_SUM:
    case AGG_COUNT:
        put_i16(st + ST_VALUE, wrap16((int32_t)mine + value));
        break;
    case AGG_AVG:
        put_i16(st + ST_VALUE, wrap16((int32_t)mine + value));
        le16_put(st + ST_AUX, (uint16_t)(le16_get(st + ST_AUX) + aux));
        break;
    case AGG_MIN:
        if (value < mine) {
            put_i16(st + ST_VALUE, value);
            le16_put(st + ST_AUX, aux);
        }
        break;
    case AGG_MAX:
        if (value > mine) {
            put_i16(st + ST_VALUE, value);
            le16_put(st + ST_AUX, aux);
        }
        break;
    default:
        break;
    }
}

/* A local reading as (value, aux) for base_fold. */
static void reading(uint8_t op, int16_t v, uint16_t self, int16_t *value, uint16_t *aux)
{
    switch (op) {
    case AGG_COUNT:
        *value = 1;
        *aux = 0;
        break;
    case AGG_AVG:
        *value = v;
        *aux = 1;
        break;
    case AGG_MIN:
    case AGG_MAX:
        *value = v;
        *aux = self;
        break;
    default:
        *value = v;
        *aux = 0;
        break;
    }
}

/* EXPAVG: value - (value >> b) + (v >> b), b = 16 - newBits (§9.3). */
static int16_t expavg_step(int16_t value, int16_t v, uint8_t new_bits)
{
    uint8_t b = (uint8_t)(new_bits >= 16 ? 0 : 16 - new_bits);
    return wrap16((int32_t)value - asr32(value, b) + asr32(v, b));
}

/* ---- windowed ring ---- */

static void ring_push(uint8_t *st, uint8_t op, int16_t value)
{
    uint8_t size = st[ST_SIZE], tail = st[ST_TAIL];
    uint8_t *slot = st + ST_RING + tail * ring_entry_size(op);
    put_i16(slot, value);
    if (op == AGG_WINAVG)
        le16_put(slot + 2, 1);
    st[ST_TAIL] = (uint8_t)((tail + 1u) % size);
    if (st[ST_NVALS] < size)
        st[ST_NVALS]++;
    else
        st[ST_HEAD] = (uint8_t)((st[ST_HEAD] + 1u) % size);
}

/* lastResult = identity folded with every ring entry (the overlap into the next window). */
static void ring_restart(uint8_t *st, uint8_t op, uint16_t self)
{
    uint8_t base = base_op(op), i, esize = ring_entry_size(op);
    base_init(st, base, self);
    for (i = 0; i < st[ST_NVALS]; i++) {
        const uint8_t *slot = st + ST_RING + ((st[ST_HEAD] + i) % st[ST_SIZE]) * esize;
        int16_t value;
        uint16_t aux;
        if (op == AGG_WINAVG) {
            value = get_i16(slot);
            aux = le16_get(slot + 2);
        } else if (op == AGG_WINCNT) {
            value = get_i16(slot);
            aux = 0;
        } else {
            reading(base, get_i16(slot), self, &value, &aux);
        }
        base_fold(st, base, value, aux);
    }
}

/* ---- public ---- */

void agg_init(uint8_t *st, const qexpr *e, uint16_t self, uint16_t epoch)
{
    uint8_t op = e->op, size = agg_state_size(e), i, slide;
    for (i = 0; i < size; i++)
        st[i] = 0;
    if (op == AGG_EXPAVG || size == 0)
        return;
    base_init(st, base_op(op), self);
    if (!is_window(op))
        return;
    slide = slide_of(e);
    st[ST_SIZE] = ring_entries(e->u.agg.arg0, e->u.agg.arg1);
    st[ST_LEFT] = (uint8_t)(slide - epoch % slide);
}

void agg_update(uint8_t *st, const qexpr *e, int16_t v, uint16_t self)
{
    uint8_t op = e->op, base = base_op(op);
    int16_t value;
    uint16_t aux;
    if (op == AGG_EXPAVG) {
        put_i16(st + ST_VALUE, expavg_step(get_i16(st + ST_VALUE), v, e->u.agg.arg0));
        return;
    }
    reading(base, v, self, &value, &aux);
    base_fold(st, base, value, aux);
    if (is_window(op) && e->u.agg.arg0 > e->u.agg.arg1)
        ring_push(st, op, op == AGG_WINCNT ? 1 : v);
}

void agg_merge(uint8_t *st, const qexpr *e, const uint8_t *child)
{
    uint8_t op = e->op;
    if (op == AGG_EXPAVG) {
        put_i16(st + ST_VALUE,
                expavg_step(get_i16(st + ST_VALUE), get_i16(child + ST_VALUE), e->u.agg.arg0));
        return;
    }
    base_fold(st, base_op(op), get_i16(child + ST_VALUE), le16_get(child + ST_AUX));
}

uint8_t agg_epoch_has_data(uint8_t *st, const qexpr *e, uint16_t epoch)
{
    uint8_t slide;
    if (!is_window(e->op))
        return 1;
    slide = slide_of(e);
    st[ST_LEFT] = (uint8_t)((slide - epoch % slide) % slide);
    return st[ST_LEFT] == 0;
}

void agg_end_epoch(uint8_t *st, const qexpr *e, uint16_t self)
{
    uint8_t op = e->op;
    if (op == AGG_EXPAVG)
        return;
    if (!is_window(op)) {
        base_init(st, op, self);
        return;
    }
    if (st[ST_LEFT] == 0) {
        ring_restart(st, op, self);
        st[ST_LEFT] = slide_of(e);
    }
}

int16_t agg_value(const uint8_t *st) { return get_i16(st + ST_VALUE); }
