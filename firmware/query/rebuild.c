#include "rebuild.h"

#include "../net/le16.h"
#include "assembly.h"
#include "catalog.h"

/* Offsets inside the expression union u (§5.3), as assembly.c reads them. */
#define EXPR_EX 2u
#define EXPR_FIELD_OP 15u
#define EXPR_FIELD_CONST 17u
#define EXPR_IS_STRING 0x40u
#define NO_GROUPING 0xFFFFu
#define FIELD_TYPE 9u

static void put_i16(uint8_t *p, int16_t v) { le16_put(p, (uint16_t)v); }

static void encode_field(const query *q, uint8_t idx, uint8_t *u)
{
    uint8_t attr = q->fields[idx], i;
    const catalog_entry *e;
    if (attr >= CATALOG_COUNT)
        return; /* unknown here, so unknown to every mote: an empty name */
    e = catalog_get(attr);
    for (i = 0; i < CATALOG_NAME_LEN; i++)
        u[i] = (uint8_t)e->name[i];
    u[FIELD_TYPE] = e->type;
}

static void encode_expr(const qexpr *e, uint8_t idx, uint8_t *u)
{
    uint8_t *ex = u + EXPR_EX, i;
    u[1] = idx;
    put_i16(u + EXPR_FIELD_OP, (int16_t)e->field_op);
    put_i16(u + EXPR_FIELD_CONST, e->field_const);
    switch (e->kind) {
    case QEXPR_STRING_SEL:
        u[0] = QEXPR_SEL | EXPR_IS_STRING;
        ex[0] = e->op;
        put_i16(ex + 1, e->field);
        for (i = 0; i < QUERY_STRING_LEN; i++)
            ex[3 + i] = (uint8_t)e->u.str[i];
        break;
    case QEXPR_SEL:
        u[0] = QEXPR_SEL;
        put_i16(ex, e->field);
        ex[2] = e->op;
        put_i16(ex + 3, e->u.value);
        break;
    default: /* QEXPR_AGG, QEXPR_TEMPORAL_AGG */
        u[0] = e->kind;
        put_i16(ex, e->field);
        le16_put(ex + 2, e->u.agg.group_field == QUERY_NO_GROUP ? NO_GROUPING
                                                                : e->u.agg.group_field);
        put_i16(ex + 4, (int16_t)e->u.agg.group_op);
        put_i16(ex + 6, e->u.agg.group_const);
        ex[8] = e->op;
        ex[9] = e->u.agg.arg0;
        ex[10] = e->u.agg.arg1;
        break;
    }
}

uint8_t qpart_rebuild(const query *q, uint8_t part, uint8_t idx, uint16_t fwd, uint8_t *msg)
{
    uint8_t i;
    switch (part) {
    case QPART_FIELD:
        if (idx >= q->num_fields || (q->fields_missing & (1u << idx)))
            return 0;
        break;
    case QPART_EXPR:
        if (idx >= q->num_exprs || (q->exprs_missing & (1u << idx)))
            return 0;
        break;
    case QPART_BUFFER:
        if (!(q->parts & QPART_GOT_BUFFER))
            return 0;
        break;
    case QPART_EVENT:
        if (!(q->parts & QPART_GOT_EVENT))
            return 0;
        break;
    case QPART_NEPOCHS:
        if (!(q->parts & QPART_GOT_NEPOCHS))
            return 0;
        break;
    default:
        return 0;
    }
    for (i = 0; i < QMSG_LEN; i++)
        msg[i] = 0;
    msg[QMSG_QID] = q->qid;
    le16_put(msg + QMSG_FWD_NODE, fwd);
    msg[QMSG_MSG_TYPE] = QMSG_ADD;
    msg[QMSG_NUM_FIELDS] = q->num_fields;
    msg[QMSG_NUM_EXPRS] = q->num_exprs;
    msg[QMSG_FROM_BUFFER] = q->from_buffer;
    msg[QMSG_FLAGS] = q->flags;
    put_i16(msg + QMSG_EPOCH, q->epoch_units);
    msg[QMSG_PART] = part;
    msg[QMSG_IDX] = idx;
    if (part == QPART_FIELD)
        encode_field(q, idx, msg + QMSG_U);
    else if (part == QPART_EXPR)
        encode_expr(&q->exprs[idx], idx, msg + QMSG_U);
    else if (part == QPART_NEPOCHS)
        le16_put(msg + QMSG_U, q->num_epochs);
    return 1;
}
