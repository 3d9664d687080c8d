#include "processing.h"

#include "../ops/agg.h"
#include "../ops/arith.h"
#include "../ops/snoop.h"
#include "clock.h"
#include "mote_state.h"
#include "observe.h"
#include "sampling.h"
#include "txpath.h"

uint16_t proc_layout(mote_state *st, uint8_t slot, uint8_t groups)
{
    query *q = &st->queries.slot[slot];
    uint16_t off = (uint16_t)groups * GROUPS_SLOT_BYTES; /* the group table comes first */
    uint8_t e;
    for (e = 0; e < q->num_exprs; e++) {
        qexpr *x = &q->exprs[e];
        if (!QUERY_IS_AGG_EXPR(x))
            continue;
        x->u.agg.state_off = off;
        off = (uint16_t)(off + (uint16_t)agg_state_size(x, q->wide) * groups);
    }
    return off;
}

uint8_t *proc_state(mote_state *st, uint8_t slot, uint8_t e, uint8_t g)
{
    const query *q = &st->queries.slot[slot];
    const qexpr *x = &q->exprs[e];
    return st->arena + st->run[slot].arena_off + x->u.agg.state_off +
           (uint16_t)g * agg_state_size(x, q->wide);
}

uint8_t *proc_groups(mote_state *st, uint8_t slot)
{
    return st->arena + st->run[slot].arena_off;
}

/* The context of aggregate expression e of the query in `slot` for the agg_* operations. */
static agg_ctx ctx_of(const mote_state *st, uint8_t slot, uint8_t e)
{
    agg_ctx c;
    c.e = &st->queries.slot[slot].exprs[e];
    c.wide = st->queries.slot[slot].wide;
    c.self = st->id;
    c.epoch = st->run[slot].epoch;
    return c;
}

/*
 * `value fieldOp fieldConst` on a value as read: TinyDB's 16 bits (the value
 * truncated, the result wrapping) or, in the wide layout, 32 bits.
 */
static int32_t field_arith(uint8_t wide, uint8_t op, int32_t v, int16_t constant)
{
    return wide ? arith_apply32(op, v, constant) : arith_apply(op, wrap16(v), constant);
}

/* Group number of the reading for aggregate expression x; 0 without GROUP BY. */
static uint8_t group_of(sampler *s, const qexpr *x, uint8_t wide, int16_t *group)
{
    int32_t v;
    *group = 0;
    if (x->u.agg.group_field == QUERY_NO_GROUP)
        return 1;
    if (!sampler_get(s, x->u.agg.group_field, &v))
        return 0;
    /* the wire carries int16 group numbers */
    *group = wrap16(field_arith(wide, x->u.agg.group_op, v, x->u.agg.group_const));
    return 1;
}

/* The group slot of `group` for expression e, initialising its state on first use. */
static uint8_t claim_state(mote_state *st, uint8_t slot, uint8_t e, int16_t group)
{
    uint8_t *tab = proc_groups(st, slot);
    uint16_t bit = (uint16_t)(1u << e);
    uint8_t fresh, g = groups_claim(&st->run[slot].groups, tab, group, &fresh);
    if (g == GROUPS_NONE) {
        st->stats.group_overflows++;
        return GROUPS_NONE;
    }
    if (!(groups_live(tab, g) & bit)) {
        agg_ctx c = ctx_of(st, slot, e);
        agg_init(proc_state(st, slot, e, g), &c);
        groups_set_live(tab, g, (uint16_t)(groups_live(tab, g) | bit));
    }
    return g;
}

static uint8_t selection_passes(sampler *s, const qexpr *x, uint8_t wide)
{
    int32_t v;
    if (!sampler_get(s, x->field, &v))
        return 0; /* comparisons with NULL are never true */
    if (x->kind == QEXPR_STRING_SEL) {
        uint8_t bytes[4], i;
        uint32_t u = (uint32_t)v;
        for (i = 0; i < 4; i++, u >>= 8)
            bytes[i] = (uint8_t)(u & 0xFFu);
        return sel_string(x->op, x->u.str, bytes, 4);
    }
    return sel_compare(x->op, field_arith(wide, x->field_op, v, x->field_const), x->u.value);
}

/* The radio queue's DELTA policy scores on an int16 (net/radioq.h): a wide value is clamped. */
static int16_t delta_key(int32_t v)
{
    return (int16_t)(v > INT16_MAX ? INT16_MAX : v < INT16_MIN ? INT16_MIN : v);
}

/*
 * A group the node has no slot for (GROUPS_MAX) need not be lost: where both
 * ends are motebase motes (the wide layout) and the aggregate keeps nothing
 * across epochs, its partial state goes up as a record of its own, which the
 * parent merges if it has the slot or passes on in turn; the root passes it to
 * the gateway, which merges a group's records from different origins. A
 * window's or a narrow query's is lost (group_overflows): an unmodified
 * gateway expects one record per group.
 */
static uint8_t spills(const query *q, const qexpr *x)
{
    return q->wide && !agg_is_temporal(x->op, q->wide);
}

static void spill_reading(mote_state *st, uint8_t slot, uint8_t e, int16_t group, int32_t v)
{
    const query *q = &st->queries.slot[slot];
    uint8_t state[AGG_RAM_MAX], qr[QR_LEN];
    agg_ctx c = ctx_of(st, slot, e);
    agg_init(state, &c);
    agg_update(state, &c, v);
    if (qr_encode_record(qr, q->qid, e, st->run[slot].epoch, mote_now(st), group, e, state,
                         agg_wire_size(&q->exprs[e], q->wide)) &&
        tx_result(st, qr, st->id, delta_key(agg_value(state, q->wide))))
        st->stats.results_sent++;
}

static void update_aggregate(mote_state *st, uint8_t slot, sampler *s, uint8_t e)
{
    const query *q = &st->queries.slot[slot];
    const qexpr *x = &q->exprs[e];
    int32_t v;
    int16_t group;
    uint8_t g;
    if (agg_state_size(x, q->wide) == 0 || !sampler_get(s, x->field, &v) ||
        !group_of(s, x, q->wide, &group))
        return;
    v = field_arith(q->wide, x->field_op, v, x->field_const);
    g = claim_state(st, slot, e, group);
    if (g != GROUPS_NONE) {
        agg_ctx c = ctx_of(st, slot, e);
        agg_update(proc_state(st, slot, e, g), &c, v);
    } else if (spills(q, x)) {
        spill_reading(st, slot, e, group, v);
    }
}

/*
 * The root is a node like any other: it samples and reports its own tuple too
 * (TinyDB 1.x's basestation reported none), so a SELECT over N nodes yields N
 * tuples per epoch, as COUNT counts N.
 */
void proc_sample(mote_state *st, uint8_t slot)
{
    const query *q = &st->queries.slot[slot];
    uint16_t epoch = st->run[slot].epoch;
    sampler s;
    uint8_t e, passed = 1;
    sampler_start(&s, st, q);
    for (e = 0; e < q->num_exprs && passed; e++) {
        const qexpr *x = &q->exprs[e];
        if (QUERY_IS_AGG_EXPR(x))
            update_aggregate(st, slot, &s, e);
        else
            passed = selection_passes(&s, x, q->wide);
    }
    if (passed && !q->has_agg)
        sampler_read_all(&s);
    observe_sampled(st->hal, q->qid, epoch, passed, q->num_fields, s.have, s.values);
    if (passed && !q->has_agg) {
        uint8_t qr[QR_LEN];
        if (qr_encode_tuple(qr, q, epoch, mote_now(st), s.values) &&
            tx_result(st, qr, st->id, qr_tuple_key(qr, q)))
            st->stats.results_sent++;
    }
}

/* The aggregate expression a record names, or NULL if it is not one of ours. */
static const qexpr *record_expr(const mote_state *st, uint8_t slot, const qr_view *v)
{
    const query *q = &st->queries.slot[slot];
    const qexpr *x;
    if (v->type != QR_AGG_RECORD || v->expr >= q->num_exprs)
        return 0;
    x = &q->exprs[v->expr];
    return QUERY_IS_AGG_EXPR(x) && agg_state_size(x, q->wide) ? x : 0;
}

uint8_t proc_record_spills(const mote_state *st, uint8_t slot, const qr_view *v)
{
    const qexpr *x = record_expr(st, slot, v);
    return x && spills(&st->queries.slot[slot], x);
}

uint8_t proc_record_passes_on(mote_state *st, uint8_t slot, const qr_view *v)
{
    return proc_record_spills(st, slot, v) &&
           !groups_has_room(&st->run[slot].groups, proc_groups(st, slot), v->group);
}

uint8_t proc_merge(mote_state *st, uint8_t slot, const qr_view *v)
{
    const qexpr *x = record_expr(st, slot, v);
    agg_ctx c;
    uint8_t g;
    if (!x)
        return 1;
    g = claim_state(st, slot, v->expr, v->group);
    if (g == GROUPS_NONE)
        return !spills(&st->queries.slot[slot], x); /* to be passed on (spills()) */
    c = ctx_of(st, slot, v->expr);
    agg_merge(proc_state(st, slot, v->expr, g), &c, v->state);
    st->stats.records_merged++;
    return 1;
}

void proc_snoop(mote_state *st, uint8_t slot, const qr_view *v)
{
    query_run *run = &st->run[slot];
    const qexpr *x = record_expr(st, slot, v);
    uint8_t *tab = proc_groups(st, slot);
    uint16_t bit;
    uint8_t g;
    if (!x || (x->op != AGG_MIN && x->op != AGG_MAX) || run->emitted || v->epoch != run->epoch ||
        (st->flags & MOTE_F_NO_SNOOP))
        return;
    g = groups_find(&run->groups, tab, v->group);
    bit = (uint16_t)(1u << v->expr);
    if (g == GROUPS_NONE || !(groups_live(tab, g) & bit))
        return;
    if (snoop_dominates(x->op, st->queries.slot[slot].wide, proc_state(st, slot, v->expr, g),
                        v->state)) {
        /* MIN/MAX restart every epoch anyway */
        groups_set_live(tab, g, (uint16_t)(groups_live(tab, g) & ~bit));
        st->stats.records_suppressed++;
    }
}

uint8_t proc_snoops(const mote_state *st, const query *q)
{
    uint8_t e;
    if (st->flags & MOTE_F_NO_SNOOP)
        return 0;
    for (e = 0; e < q->num_exprs; e++)
        if (QUERY_IS_AGG_EXPR(&q->exprs[e]) &&
            (q->exprs[e].op == AGG_MIN || q->exprs[e].op == AGG_MAX))
            return 1;
    return 0;
}

/*
 * The records of one epoch go out in (expression, group slot) order, as many
 * at a time as the radio queue takes; the rest follow as it drains
 * (proc_emit_more), so no record is dropped for a full queue. run.emitted keeps
 * the place: 0 not started, p + 1 next position p, EMIT_DONE finished.
 */
#define EMIT_DONE 0xFFu

static uint8_t queue_records(mote_state *st, uint8_t slot, uint8_t pos, uint8_t drop)
{
    const query *q = &st->queries.slot[slot];
    query_run *run = &st->run[slot];
    uint8_t *tab = proc_groups(st, slot);
    uint8_t groups = run->groups.count, end = (uint8_t)(q->num_exprs * groups);
    for (; groups && pos < end; pos++) {
        uint8_t e = (uint8_t)(pos / groups), g = (uint8_t)(pos % groups);
        const qexpr *x = &q->exprs[e];
        uint16_t bit = (uint16_t)(1u << e);
        uint8_t size = QUERY_IS_AGG_EXPR(x) ? agg_wire_size(x, q->wide) : 0, *state;
        uint8_t qr[QR_LEN];
        agg_ctx c;
        if (size == 0 || !(groups_live(tab, g) & bit))
            continue;
        if (!drop && st->id != MOTE_ROOT_ID && radioq_count(&st->rq) >= radioq_len(&st->rq))
            return (uint8_t)(pos + 1u); /* the queue is full: resume here */
        c = ctx_of(st, slot, e);
        state = proc_state(st, slot, e, g);
        if (drop)
            st->stats.results_unsent++;
        else if (agg_epoch_has_data(state, &c) &&
            qr_encode_record(qr, q->qid, (uint8_t)(pos & 0x7Fu), run->epoch, mote_now(st),
                             groups_no(tab, g), e, state, size) &&
            tx_queue_result(st, qr, st->id, delta_key(agg_value(state, q->wide))))
            st->stats.results_sent++;
        if (!agg_end_epoch(state, &c))
            groups_set_live(tab, g, (uint16_t)(groups_live(tab, g) & ~bit));
    }
    return EMIT_DONE;
}

/*
 * The radio starts on the records once all that fit are queued. Started on each as it
 * was queued, it took the first away alone before the next could join its bundle
 * (txpath.c, gather) wherever the gate was open at once -- a child of the root, and
 * every node beside a tuple query -- so each expression cost a frame. 100-node grid on
 * sinr, `COUNT(*), MAX(light)` at 4 s beside `SELECT nodeid`, seeds 1-10
 * (bench/beside.py): COUNT's mean error 50.0 -> 23.0 nodes with the SELECT at 8 s,
 * 8.8 -> 1.2 at 32 s; the SELECT's yield .733 -> .917 at 8 s.
 */
static uint8_t emit_from(mote_state *st, uint8_t slot, uint8_t pos, uint8_t drop)
{
    uint8_t next = queue_records(st, slot, pos, drop);
    if (!drop)
        tx_pump(st);
    return next;
}

void proc_emit(mote_state *st, uint8_t slot)
{
    st->run[slot].emitted = emit_from(st, slot, 0, 0);
}

void proc_emit_more(mote_state *st)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++) {
        uint8_t at = st->run[i].emitted;
        if (st->queries.slot[i].status >= QUERY_RUNNING && at != 0 && at != EMIT_DONE)
            st->run[i].emitted = emit_from(st, i, (uint8_t)(at - 1u), 0);
    }
}

void proc_emit_abandon(mote_state *st, uint8_t slot)
{
    uint8_t at = st->run[slot].emitted;
    if (at != 0 && at != EMIT_DONE) /* reset what never went, so it is not counted twice */
        st->run[slot].emitted = emit_from(st, slot, (uint8_t)(at - 1u), 1);
}
