/*
 * arith.h - selections and the arithmetic applied to a field (wire-format §8).
 *
 * TinyDB evaluates everything in 16-bit signed arithmetic: the field's bytes
 * are assembled little-endian into an int16 (longer fields truncated), the
 * expression's `fieldOp fieldConst` is applied, and the result is compared
 * with the constant as int16. Results wrap modulo 2^16 as on the AVR; a
 * division or modulo by zero leaves the value unchanged (the mote would trap
 * or return garbage; there is no error channel on the data path).
 *
 * A query in the wide layout (query.wide, ops/agg.h) takes the field's value
 * as read (int32) and applies the same operators in 32-bit signed arithmetic
 * (arith_apply32): C's truncating / and %, arithmetic >>, a zero divisor leaves
 * the value unchanged, results wrap modulo 2^32 (never undefined behaviour).
 */
#ifndef MOTE_OPS_ARITH_H
#define MOTE_OPS_ARITH_H

#include <stdint.h>

enum field_op {
    FOP_NOOP = 0,
    FOP_TIMES = 1,
    FOP_DIVIDE = 2,
    FOP_ADD = 3,
    FOP_SUBTRACT = 4,
    FOP_MOD = 5,
    FOP_RSHIFT = 6,
    FOP_COUNT = 7
};

enum sel_op {
    SEL_EQ = 0,
    SEL_NEQ = 1,
    SEL_GT = 2,
    SEL_GE = 3,
    SEL_LT = 4,
    SEL_LE = 5,
    SEL_COUNT = 6
};

/* Wrap any 32-bit result to int16 without implementation-defined conversion. */
static inline int16_t wrap16(int32_t v)
{
    int32_t low = (int32_t)((uint32_t)v & 0xFFFFu);
    return (int16_t)(low >= 0x8000 ? low - 0x10000 : low);
}

/* Arithmetic shift right of a signed value (>> on negatives is implementation-defined in C). */
static inline int32_t asr32(int32_t v, uint8_t bits)
{
    if (bits >= 31)
        return v < 0 ? -1 : 0;
    return v < 0 ? -(int32_t)(((uint32_t)(-(v + 1)) >> bits) + 1u) : (int32_t)((uint32_t)v >> bits);
}

/* Wrap any 32-bit pattern to int32 without implementation-defined conversion. */
static inline int32_t wrap32(uint32_t u)
{
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

/* TinyDB's 16-bit field arithmetic (narrow layout). */
int16_t arith_apply(uint8_t op, int16_t value, int16_t constant);

/* The same operators in 32-bit signed arithmetic (wide layout). */
int32_t arith_apply32(uint8_t op, int32_t value, int32_t constant);

/* Numeric selection: (lhs <op> rhs); narrow callers pass int16 values. */
uint8_t sel_compare(uint8_t op, int32_t lhs, int32_t rhs);

/*
 * String selection as the mote does it: sign of strcmp(constant, field)
 * mapped onto the operator (equal -> EQ/LE/GE; constant < field -> GT/GE/NEQ;
 * constant > field -> LT/LE/NEQ). Both strings are at most `n` bytes, NUL
 * terminated earlier if shorter.
 */
uint8_t sel_string(uint8_t op, const char *constant, const uint8_t *field, uint8_t n);

#endif /* MOTE_OPS_ARITH_H */
