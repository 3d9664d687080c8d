#include "assembly.h"

#include "../net/le16.h"
#include "../ops/agg.h"
#include "../ops/arith.h"
#include "../result/result.h"
#include "catalog.h"

/* Offsets inside the expression union u (§5.3). */
#define EXPR_KIND 0u
#define EXPR_EX 2u
#define EXPR_FIELD_OP 15u
#define EXPR_FIELD_CONST 17u
#define EXPR_KIND_MASK 0x3Fu
#define EXPR_IS_STRING 0x40u
#define NO_GROUPING 0xFFFFu

static int16_t get_i16(const uint8_t *p)
{
    uint16_t u = le16_get(p);
    return (int16_t)(u >= 0x8000u ? (int32_t)u - 0x10000 : (int32_t)u);
}

static uint16_t low_bits(uint8_t n) { return n >= 16 ? 0xFFFFu : (uint16_t)((1u << n) - 1u); }

void qtable_init(query_table *t)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++)
        qtable_free(t, i);
}

void qtable_free(query_table *t, uint8_t slot)
{
    query *q = &t->slot[slot];
    q->qid = QUERY_NO_QID;
    q->status = QUERY_FREE;
    q->num_fields = q->num_exprs = 0;
}

uint8_t qtable_find(const query_table *t, uint8_t qid)
{
    uint8_t i;
    for (i = 0; i < QUERY_SLOTS; i++)
        if (t->slot[i].status != QUERY_FREE && t->slot[i].qid == qid)
            return i;
    return QUERY_SLOTS;
}

/* Decode an expression part into *e; 0 if malformed for a query of num_fields fields. */
static uint8_t parse_expr(qexpr *e, const uint8_t *u, uint8_t num_fields)
{
    const uint8_t *ex = u + EXPR_EX;
    uint8_t kind = u[EXPR_KIND] & EXPR_KIND_MASK, i;
    int16_t field, fop = get_i16(u + EXPR_FIELD_OP);
    if (fop < 0 || fop >= FOP_COUNT)
        return 0;
    e->field_op = (uint8_t)fop;
    e->field_const = get_i16(u + EXPR_FIELD_CONST);
    if (kind == QEXPR_SEL && (u[EXPR_KIND] & EXPR_IS_STRING)) {
        e->kind = QEXPR_STRING_SEL;
        e->op = ex[0];
        field = get_i16(ex + 1);
        for (i = 0; i < QUERY_STRING_LEN; i++)
            e->u.str[i] = (char)ex[3 + i];
    } else if (kind == QEXPR_SEL) {
        e->kind = QEXPR_SEL;
        field = get_i16(ex);
        e->op = ex[2];
        e->u.value = get_i16(ex + 3);
    } else if (kind == QEXPR_AGG || kind == QEXPR_TEMPORAL_AGG) {
        uint16_t grouping = le16_get(ex + 2);
        int16_t gop = get_i16(ex + 4);
        e->kind = kind;
        field = get_i16(ex);
        e->op = ex[8];
        if (grouping != NO_GROUPING && grouping >= num_fields)
            return 0;
        if (gop < 0 || gop >= FOP_COUNT)
            return 0;
        e->u.agg.group_field = grouping == NO_GROUPING ? QUERY_NO_GROUP : (uint8_t)grouping;
        e->u.agg.group_op = (uint8_t)gop;
        e->u.agg.group_const = get_i16(ex + 6);
        e->u.agg.arg0 = ex[9];
        e->u.agg.arg1 = ex[10];
        e->u.agg.state_off = 0;
        if (agg_check(e->op, e->u.agg.arg0, e->u.agg.arg1) == AGG_WINDOW_TOO_LARGE)
            return 0;
    } else {
        return 0;
    }
    if (field < 0 || field >= num_fields)
        return 0;
    e->field = (uint8_t)field;
    return e->kind == QEXPR_SEL || e->kind == QEXPR_STRING_SEL ? e->op < SEL_COUNT : 1;
}

/* Everything about an ADD part that can be checked without the slot. */
static uint8_t part_is_valid(const uint8_t *msg, qexpr *parsed)
{
    uint8_t nf = msg[QMSG_NUM_FIELDS], ne = msg[QMSG_NUM_EXPRS], idx = msg[QMSG_IDX];
    int16_t epoch = get_i16(msg + QMSG_EPOCH);
    if (msg[QMSG_QID] == QUERY_NO_QID || nf == 0 || nf > QUERY_MAX_FIELDS ||
        ne > QUERY_MAX_EXPRS || epoch <= 0)
        return 0;
    switch (msg[QMSG_PART]) {
    case QPART_FIELD:
        return idx < nf;
    case QPART_EXPR:
        return idx < ne && parse_expr(parsed, msg + QMSG_U, nf);
    case QPART_BUFFER:
    case QPART_EVENT:
        return 1;
    case QPART_NEPOCHS:
        return get_i16(msg + QMSG_U) > 0;
    default:
        return 0;
    }
}

uint8_t qtable_add_is_valid(const uint8_t *msg, uint8_t len)
{
    qexpr parsed;
    return len >= QMSG_LEN && part_is_valid(msg, &parsed);
}

static uint8_t claim_slot(query_table *t, const uint8_t *msg)
{
    uint8_t i;
    query *q;
    for (i = 0; i < QUERY_SLOTS && t->slot[i].status != QUERY_FREE; i++)
        ;
    if (i == QUERY_SLOTS)
        return i;
    q = &t->slot[i];
    q->qid = msg[QMSG_QID];
    q->status = QUERY_ASSEMBLING;
    q->num_fields = msg[QMSG_NUM_FIELDS];
    q->num_exprs = msg[QMSG_NUM_EXPRS];
    q->fields_missing = low_bits(q->num_fields);
    q->exprs_missing = low_bits(q->num_exprs);
    q->flags = msg[QMSG_FLAGS];
    q->parts = 0;
    q->from_buffer = msg[QMSG_FROM_BUFFER];
    q->has_agg = 0;
    q->epoch_units = get_i16(msg + QMSG_EPOCH);
    q->num_epochs = 0;
    q->tuple_bytes = 0;
    q->epoch_base = 0;
    q->base_known = 0;
    q->wide = 0; /* until a trailer says so (query/trailer.h) */
    return i;
}

static uint8_t is_complete(const query *q)
{
    uint8_t buffer_type = (uint8_t)(q->flags >> QFLAG_BUFFER_SHIFT);
    if (q->fields_missing || q->exprs_missing)
        return 0;
    if (buffer_type != QBUFFER_RADIO && !(q->parts & QPART_GOT_BUFFER))
        return 0;
    if ((q->flags & QFLAG_HAS_EVENT) && !(q->parts & QPART_GOT_EVENT))
        return 0;
    return !(q->flags & QFLAG_HAS_FOR) || (q->parts & QPART_GOT_NEPOCHS);
}

/* Whole-query checks once every part is in; 0 if the query cannot run here. */
static uint8_t finish(query *q)
{
    uint8_t i;
    q->has_agg = 0;
    q->tuple_bytes = 0;
    for (i = 0; i < q->num_exprs; i++)
        if (QUERY_IS_AGG_EXPR(&q->exprs[i]))
            q->has_agg = 1;
    for (i = 0; i < q->num_fields; i++)
        q->tuple_bytes = (uint8_t)(q->tuple_bytes + catalog_wire_size(q->fields[i]));
    if (!q->has_agg && q->tuple_bytes > QR_TUPLE_VALUES_MAX)
        return 0; /* the tuple would overflow the result (A11) */
    q->status = QUERY_RUNNING;
    return 1;
}

/* Store a validated part; returns 1 if it was new. */
static uint8_t store_part(query *q, const uint8_t *msg, const qexpr *parsed)
{
    uint8_t idx = msg[QMSG_IDX];
    uint16_t bit = (uint16_t)(1u << (idx & 15u));
    switch (msg[QMSG_PART]) {
    case QPART_FIELD:
        if (!(q->fields_missing & bit))
            return 0;
        q->fields[idx] = catalog_lookup(msg + QMSG_U);
        q->fields_missing &= (uint16_t)~bit;
        return 1;
    case QPART_EXPR:
        if (!(q->exprs_missing & bit))
            return 0;
        q->exprs[idx] = *parsed;
        q->exprs_missing &= (uint16_t)~bit;
        return 1;
    case QPART_BUFFER:
        if (q->parts & QPART_GOT_BUFFER)
            return 0;
        q->parts |= QPART_GOT_BUFFER;
        return 1;
    case QPART_EVENT:
        if (q->parts & QPART_GOT_EVENT)
            return 0;
        q->parts |= QPART_GOT_EVENT;
        return 1;
    default: /* QPART_NEPOCHS */
        if (q->parts & QPART_GOT_NEPOCHS)
            return 0;
        q->num_epochs = le16_get(msg + QMSG_U);
        q->parts |= QPART_GOT_NEPOCHS;
        return 1;
    }
}

static qasm_outcome receive_add(query_table *t, const uint8_t *msg, uint8_t *slot)
{
    qexpr parsed;
    query *q;
    uint8_t i = qtable_find(t, msg[QMSG_QID]);
    if (!part_is_valid(msg, &parsed))
        return QASM_REJECTED;
    if (i < QUERY_SLOTS) {
        q = &t->slot[i];
        *slot = i;
        if (q->status != QUERY_ASSEMBLING)
            return QASM_DUPLICATE;
        if (q->num_fields != msg[QMSG_NUM_FIELDS] || q->num_exprs != msg[QMSG_NUM_EXPRS])
            return QASM_REJECTED; /* disagrees with the parts already held */
    } else {
        i = claim_slot(t, msg);
        if (i == QUERY_SLOTS)
            return QASM_NO_SLOT;
        q = &t->slot[i];
        *slot = i;
    }
    if (!store_part(q, msg, &parsed))
        return QASM_DUPLICATE;
    if (!is_complete(q))
        return QASM_STORED;
    if (!finish(q)) {
        qtable_free(t, i);
        *slot = QUERY_SLOTS;
        return QASM_REJECTED;
    }
    return QASM_COMPLETED;
}

qasm_outcome qtable_receive(query_table *t, const uint8_t *msg, uint8_t len, uint8_t *slot)
{
    uint8_t i;
    int16_t epoch;
    *slot = QUERY_SLOTS;
    if (len < QMSG_LEN)
        return QASM_REJECTED;
    switch (msg[QMSG_MSG_TYPE]) {
    case QMSG_ADD:
    case QMSG_MODIFY:
        return receive_add(t, msg, slot);
    case QMSG_DEL:
        i = qtable_find(t, msg[QMSG_QID]);
        if (i == QUERY_SLOTS)
            return QASM_UNKNOWN_QID;
        *slot = i;
        if (t->slot[i].status == QUERY_DRAINING)
            return QASM_DUPLICATE;
        if (t->slot[i].status == QUERY_ASSEMBLING)
            qtable_free(t, i);
        else
            t->slot[i].status = QUERY_DRAINING;
        return QASM_DELETED;
    case QMSG_RATE:
        i = qtable_find(t, msg[QMSG_QID]);
        epoch = get_i16(msg + QMSG_EPOCH);
        if (i == QUERY_SLOTS)
            return QASM_UNKNOWN_QID;
        *slot = i;
        if (epoch <= 0)
            return QASM_REJECTED;
        if (t->slot[i].epoch_units == epoch)
            return QASM_DUPLICATE;
        t->slot[i].epoch_units = epoch;
        return QASM_RATE_CHANGED;
    case QMSG_DROP_TABLE:
        return QASM_IGNORED;
    default:
        return QASM_REJECTED;
    }
}
