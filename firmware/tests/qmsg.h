/*
 * qmsg.h - test-only builders of AM 101 QueryMessage bytes (wire-format §5),
 * written from the spec tables, independent of the code under test.
 */
#ifndef MOTE_TESTS_QMSG_H
#define MOTE_TESTS_QMSG_H

#include <stdint.h>
#include <string.h>

#define T_QMSG_LEN 40

static inline void t_put16(uint8_t *p, int v)
{
    p[0] = (uint8_t)(v & 0xFF);
    p[1] = (uint8_t)((v >> 8) & 0xFF);
}

/* Common header: qid, fwdNode 0x007E, ADD, counts, fromBuffer 0xFF, flags, epoch units. */
static inline void t_header(uint8_t *m, int qid, int nf, int ne, int flags, int epoch, int part, int idx)
{
    memset(m, 0, T_QMSG_LEN);
    m[0] = (uint8_t)qid;
    t_put16(m + 1, 0x007E);
    m[3] = 0;
    m[4] = (uint8_t)nf;
    m[5] = (uint8_t)ne;
    m[6] = 0xFF;
    m[7] = (uint8_t)flags;
    t_put16(m + 8, epoch);
    m[10] = (uint8_t)part;
    m[11] = (uint8_t)idx;
}

static inline void t_field(uint8_t *m, int qid, int nf, int ne, int epoch, int idx, const char *name)
{
    t_header(m, qid, nf, ne, 0, epoch, 0, idx);
    strncpy((char *)m + 19, name, 8);
    m[28] = 4;
}

/* Numeric selection: field op value, with fieldOp/fieldConst. */
static inline void t_sel(uint8_t *m, int qid, int nf, int ne, int epoch, int idx, int field, int op,
                  int value, int fop, int fconst)
{
    t_header(m, qid, nf, ne, 0, epoch, 1, idx);
    m[19] = 0;
    t_put16(m + 21, field);
    m[23] = (uint8_t)op;
    t_put16(m + 24, value);
    t_put16(m + 34, fop);
    t_put16(m + 36, fconst);
}

static inline void t_strsel(uint8_t *m, int qid, int nf, int ne, int epoch, int idx, int field, int op,
                     const char *s)
{
    t_header(m, qid, nf, ne, 0, epoch, 1, idx);
    m[19] = 0x40;
    m[21] = (uint8_t)op;
    t_put16(m + 22, field);
    strncpy((char *)m + 24, s, 8);
}

/* Aggregate: opType 1 (or 2 if temporal args given), field, grouping (-1 none). */
static inline void t_agg(uint8_t *m, int qid, int nf, int ne, int epoch, int idx, int agg, int field,
                  int group_field, int gop, int gconst, int arg0, int arg1, int fop, int fconst)
{
    t_header(m, qid, nf, ne, 0, epoch, 1, idx);
    m[19] = (uint8_t)(agg >= 6 ? 2 : 1);
    t_put16(m + 21, field);
    t_put16(m + 23, group_field);
    t_put16(m + 25, gop);
    t_put16(m + 27, gconst);
    m[29] = (uint8_t)agg;
    m[30] = (uint8_t)arg0;
    m[31] = (uint8_t)arg1;
    t_put16(m + 34, fop);
    t_put16(m + 36, fconst);
}

/* motebase's trailer in bytes 40..48 of a 49-byte part (query/trailer.h), spelled
 * out from its layout: 'm' 'b' version flags base(u32) check. */
#define T_QMSG_TRAILED_LEN 49
static inline void t_trailer(uint8_t *m, int flags, uint32_t base)
{
    int i;
    uint8_t x = 0x5A;
    m[40] = 'm';
    m[41] = 'b';
    m[42] = 1;
    m[43] = (uint8_t)flags;
    for (i = 0; i < 4; i++)
        m[44 + i] = (uint8_t)(base >> (8 * i));
    for (i = 40; i < 48; i++)
        x ^= m[i];
    m[48] = x;
}

#endif /* MOTE_TESTS_QMSG_H */
