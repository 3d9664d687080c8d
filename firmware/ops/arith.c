#include "arith.h"

int16_t arith_apply(uint8_t op, int16_t value, int16_t constant)
{
    int32_t v = value, c = constant;
    switch (op) {
    case FOP_TIMES:
        return wrap16(v * c);
    case FOP_DIVIDE:
        return c == 0 ? value : wrap16(v / c);
    case FOP_ADD:
        return wrap16(v + c);
    case FOP_SUBTRACT:
        return wrap16(v - c);
    case FOP_MOD:
        return c == 0 ? value : wrap16(v % c);
    case FOP_RSHIFT:
        return c < 0 ? value : wrap16(asr32(v, (uint8_t)(c > 31 ? 31 : c)));
    default:
        return value;
    }
}

int32_t arith_apply32(uint8_t op, int32_t value, int32_t constant)
{
    uint32_t v = (uint32_t)value, c = (uint32_t)constant;
    switch (op) {
    case FOP_TIMES:
        return wrap32(v * c);
    case FOP_DIVIDE:
        if (constant == 0)
            return value;
        return constant == -1 ? wrap32(0u - v) : value / constant; /* INT32_MIN / -1 wraps */
    case FOP_ADD:
        return wrap32(v + c);
    case FOP_SUBTRACT:
        return wrap32(v - c);
    case FOP_MOD:
        if (constant == 0)
            return value;
        return constant == -1 ? 0 : value % constant;
    case FOP_RSHIFT:
        return constant < 0 ? value : asr32(value, (uint8_t)(constant > 31 ? 31 : constant));
    default:
        return value;
    }
}

uint8_t sel_compare(uint8_t op, int32_t lhs, int32_t rhs)
{
    switch (op) {
    case SEL_EQ:
        return lhs == rhs;
    case SEL_NEQ:
        return lhs != rhs;
    case SEL_GT:
        return lhs > rhs;
    case SEL_GE:
        return lhs >= rhs;
    case SEL_LT:
        return lhs < rhs;
    case SEL_LE:
        return lhs <= rhs;
    default:
        return 0;
    }
}

static int8_t bounded_strcmp(const char *a, const uint8_t *b, uint8_t n)
{
    uint8_t i;
    for (i = 0; i < n; i++) {
        uint8_t ca = (uint8_t)a[i], cb = b[i];
        if (ca != cb)
            return ca < cb ? -1 : 1;
        if (ca == 0)
            return 0;
    }
    return 0;
}

uint8_t sel_string(uint8_t op, const char *constant, const uint8_t *field, uint8_t n)
{
    int8_t cmp = bounded_strcmp(constant, field, n);
    switch (op) {
    case SEL_EQ:
        return cmp == 0;
    case SEL_NEQ:
        return cmp != 0;
    case SEL_GT:
        return cmp < 0;
    case SEL_GE:
        return cmp <= 0;
    case SEL_LT:
        return cmp > 0;
    case SEL_LE:
        return cmp >= 0;
    default:
        return 0;
    }
}
