#include "processing.h"

#include "../ops/agg.h"
#include "../ops/arith.h"
#include "../ops/snoop.h"
#include "sampling.h"
#include "txpath.h"

uint16_t proc_layout(mote_state *st, uint8_t slot, uint8_t groups)
{
    query *q = &st->queries.slot[slot];
    uint16_t off = 0;
    uint8_t e;
    for (e = 0; e < q->num_exprs; e++) {
        qexpr *x = &q->exprs[e];
        if (!QUERY_IS_AGG_EXPR(x))
            continue;
        x->u.agg.state_off = off;
        off = (uint16_t)(off + (uint16_t)agg_state_size(x) * groups);
    }
    return off;
}

uint8_t *proc_state(mote_state *st, uint8_t slot, uint8_t e, uint8_t g)
{
    const qexpr *x = &st->queries.slot[slot].exprs[e];
    return st->arena + st->run[slot].arena_off + x->u.agg.state_off +
           (uint16_t)g * agg_state_size(x);
}

static int16_t as16(int32_t v) { return wrap16(v); }

/* Group number of the reading for aggregate expression x; 0 without GROUP BY. */
static uint8_t group_of(sampler *s, const qexpr *x, int16_t *group)
{
    int32_t v;
    *group = 0;
    if (x->u.agg.group_field == QUERY_NO_GROUP)
        return 1;
    if (!sampler_get(s, x->u.agg.group_field, &v))
        return 0;
    *group = arith_apply(x->u.agg.group_op, as16(v), x->u.agg.group_const);
    return 1;
}

/* The group slot of `group` for expression e, initialising its state on first use. */
static uint8_t claim_state(mote_state *st, uint8_t slot, uint8_t e, int16_t group)
{
    query_run *run = &st->run[slot];
    const qexpr *x = &st->queries.slot[slot].exprs[e];
    uint16_t bit = (uint16_t)(1u << e);
    uint8_t fresh, g = groups_claim(&run->groups, group, &fresh);
    if (g == GROUPS_NONE) {
        st->stats.group_overflows++;
        return GROUPS_NONE;
    }
    if (!(run->groups.live[g] & bit)) {
        agg_init(proc_state(st, slot, e, g), x, st->id, run->epoch);
        run->groups.live[g] |= bit;
    }
    return g;
}

static uint8_t selection_passes(sampler *s, const qexpr *x)
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
    return sel_compare(x->op, arith_apply(x->field_op, as16(v), x->field_const), x->u.value);
}

static void update_aggregate(mote_state *st, uint8_t slot, sampler *s, uint8_t e)
{
    const qexpr *x = &st->queries.slot[slot].exprs[e];
    int32_t v;
    int16_t group;
    uint8_t g;
    if (agg_state_size(x) == 0 || !sampler_get(s, x->field, &v) || !group_of(s, x, &group))
        return;
    g = claim_state(st, slot, e, group);
    if (g != GROUPS_NONE)
        agg_update(proc_state(st, slot, e, g), x,
                   arith_apply(x->field_op, as16(v), x->field_const), st->id);
}

void proc_sample(mote_state *st, uint8_t slot)
{
    const query *q = &st->queries.slot[slot];
    sampler s;
    uint8_t e;
    if (st->id == MOTE_ROOT_ID && !q->has_agg)
        return; /* the basestation reports no tuples of its own (TinyDB 1.x) */
    sampler_start(&s, st, q);
    for (e = 0; e < q->num_exprs; e++) {
        const qexpr *x = &q->exprs[e];
        if (QUERY_IS_AGG_EXPR(x))
            update_aggregate(st, slot, &s, e);
        else if (!selection_passes(&s, x))
            return;
    }
    if (!q->has_agg) {
        uint8_t qr[QR_LEN];
        sampler_read_all(&s);
        if (qr_encode_tuple(qr, q, st->run[slot].epoch, mote_now(st), s.values) &&
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
    return QUERY_IS_AGG_EXPR(x) && agg_state_size(x) ? x : 0;
}

void proc_merge(mote_state *st, uint8_t slot, const qr_view *v)
{
    const qexpr *x = record_expr(st, slot, v);
    uint8_t g;
    if (!x)
        return;
    g = claim_state(st, slot, v->expr, v->group);
    if (g == GROUPS_NONE)
        return;
    agg_merge(proc_state(st, slot, v->expr, g), x, v->state);
    st->stats.records_merged++;
}

void proc_snoop(mote_state *st, uint8_t slot, const qr_view *v)
{
    query_run *run = &st->run[slot];
    const qexpr *x = record_expr(st, slot, v);
    uint16_t bit;
    uint8_t g;
    if (!x || (x->op != AGG_MIN && x->op != AGG_MAX) || run->emitted || v->epoch != run->epoch)
        return;
    g = groups_find(&run->groups, v->group);
    bit = (uint16_t)(1u << v->expr);
    if (g == GROUPS_NONE || !(run->groups.live[g] & bit))
        return;
    if (snoop_dominates(x->op, proc_state(st, slot, v->expr, g), v->state)) {
        run->groups.live[g] &= (uint16_t)~bit; /* MIN/MAX restart every epoch anyway */
        st->stats.records_suppressed++;
    }
}

uint8_t proc_snoops(const query *q)
{
    uint8_t e;
    for (e = 0; e < q->num_exprs; e++)
        if (QUERY_IS_AGG_EXPR(&q->exprs[e]) &&
            (q->exprs[e].op == AGG_MIN || q->exprs[e].op == AGG_MAX))
            return 1;
    return 0;
}

void proc_emit(mote_state *st, uint8_t slot)
{
    const query *q = &st->queries.slot[slot];
    query_run *run = &st->run[slot];
    uint8_t e, g, idx = 0;
    run->emitted = 1;
    for (e = 0; e < q->num_exprs; e++) {
        const qexpr *x = &q->exprs[e];
        uint16_t bit = (uint16_t)(1u << e);
        uint8_t size = QUERY_IS_AGG_EXPR(x) ? agg_state_size(x) : 0;
        if (size == 0)
            continue;
        for (g = 0; g < run->groups.count; g++) {
            uint8_t *state, qr[QR_LEN];
            if (!(run->groups.live[g] & bit))
                continue;
            state = proc_state(st, slot, e, g);
            if (agg_epoch_has_data(state, x, run->epoch) &&
                qr_encode_record(qr, q->qid, idx++, run->epoch, mote_now(st), run->groups.no[g],
                                 e, state, size) &&
                tx_result(st, qr, st->id, agg_value(state)))
                st->stats.results_sent++;
            if (agg_is_temporal(x->op))
                agg_end_epoch(state, x, st->id);
            else
                run->groups.live[g] &= (uint16_t)~bit;
        }
    }
}
