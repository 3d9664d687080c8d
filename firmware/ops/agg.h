/*
 * agg.h - TAG aggregate partial states (wire-format §9), in two layouts.
 *
 * Layouts. A query's states are either "narrow" (query.wide == 0: TinyDB 1.x,
 * §9.3, 16-bit values, what an unmodified mote sends and the Java tools read)
 * or "wide" (query.wide == 1: motebase motes on both ends). TinyDB's 16-bit
 * states overflow in ordinary deployments (100 nodes of light 200-800 sum past
 * 2^15; a WINAVG's sum over w epochs even sooner), so the wide layout carries
 * 32 bits. Record state after groupNo i16 and exprIdx u8, little-endian, packed:
 *
 *   op                      narrow (§9.3)                 wide
 *   SUM, COUNT              value i16, id i16 (4)         value i32 / count u32 (4)
 *   MIN, MAX                value i16, id i16 (4)         value i32, id u16 (6)
 *   AVG                     sum i16, count u16 (4)        sum i32, count u32 (8)
 *   EXPAVG                  value i16, epochsLeft u8 (3)  sum i32, count u32 (8)
 *   WINSUM/WINCNT           lastResult {value, id} (4),   value i32 / count u32 (4)
 *                           head, tail, size, nvals,
 *                           epochsLeft, ring of
 *                           max(w-s, 1) int16 (9 + 2n)
 *   WINMIN/WINMAX           as WINSUM                     value i32, id u16 (6)
 *   WINAVG                  lastResult {sum, count} (4),  sum i32, count u32 (8)
 *                           meta (5), ring of max(w-s, 1)
 *                           {sum i16, count u16} (9 + 4n)
 *
 * In wide mode the per-reading arithmetic and selections are 32-bit too
 * (arith.h); a wide EXPAVG sends the epoch's own {sum, count}, like AVG, and
 * the gateway smooths across epochs (gateway/finalize.py expavg_step), which
 * keeps it exact where TinyDB's fixed-point recursion on each mote is not.
 *
 * RAM vs wire. A state lives in the arena as agg_state_size() bytes whose first
 * agg_wire_size() bytes are exactly the record state above, so emitting a
 * record is a byte copy and a child's record is merged by reading its bytes in
 * place. Only windows keep more than they send: their ring (which in wide mode
 * never goes on the wire) and six private bytes of bookkeeping after it.
 *
 * Life of a state over one epoch: agg_update() for the local reading and
 * agg_merge() for every child record, then agg_epoch_has_data() decides
 * whether a record goes out, then agg_end_epoch() resets what does not carry
 * over and says whether the state still holds anything.
 *
 * Windows, WINxxx(w, s), both layouts: a record is reported at every epoch e
 * with e % s == 0 (aligned on epoch numbers so parents and children close
 * theirs together) over the readings of epochs e-w+1 .. e, and only if that
 * window has at least one reading. Each epoch pushes the node's own
 * contribution of that epoch (present or absent) into a ring of the last w - s
 * epochs -- per epoch, not per reading, so epochs whose WHERE failed, or that
 * a node skipped, still age the window. lastResult accumulates the open window;
 * when it has been reported it restarts from the ring (the overlap with the
 * next window). With w <= s there is no ring: only the last w epochs of each
 * slide are folded in. A child's record (its subtree's whole window) is folded
 * into the open window only: the child's ring stays the child's. Deviations
 * from TinyDB 1.x (design.md §2): ring values are 16-bit (not uint8, A13);
 * w - s is bounded so a narrow state fits a record (AGG_RING_MAX_*, the same
 * bound in both layouts, since assembly checks before the layout is known);
 * w == 0 and s == 0 are refused (TinyDB would never report, or divide by zero).
 * A narrow record's ring holds the node's own last w - s epochs, oldest at head,
 * absent epochs as the operation's identity (SUM 0, MIN 0x7FFF, ...); no
 * reader needs it.
 */
#ifndef MOTE_OPS_AGG_H
#define MOTE_OPS_AGG_H

#include <stdint.h>

#include "../query/query.h"

enum agg_id {
    AGG_NOOP = 0,
    AGG_SUM = 1,
    AGG_MIN = 2,
    AGG_MAX = 3,
    AGG_COUNT = 4,
    AGG_AVG = 5,
    AGG_EXPAVG = 6,
    AGG_WINAVG = 7,
    AGG_WINSUM = 8,
    AGG_WINMIN = 9,
    AGG_WINMAX = 10,
    AGG_WINCNT = 11
};

/* A record carries 28 bytes: group (2), expression index (1), state. */
#define AGG_STATE_MAX 25u
#define AGG_WIN_HEADER 9u     /* narrow: lastResult (4) + head, tail, size, nvals, epochsLeft */
#define AGG_RING_MAX_AVG 4u   /* {sum, count} entries: 9 + 4*4 = 25 */
#define AGG_RING_MAX_VALUE 8u /* int16 entries: 9 + 8*2 = 25 */
/* RAM bytes of the largest state: a wide WINAVG, 8 + 5 + 4 * 8 + 6. */
#define AGG_RAM_MAX 51u

enum agg_check {
    AGG_OK = 0,
    AGG_UNSUPPORTED = 1,     /* id not wired (DELTA, TREND, ...): accepted, never reports (as TinyDB) */
    AGG_WINDOW_TOO_LARGE = 2 /* window refused -- w - s too large for a record, or w == 0 or
                                s == 0: the query is refused */
};

/* A window's arguments as agg_check() sees them; independent of the layout. */
uint8_t agg_check(uint8_t op, uint8_t arg0, uint8_t arg1);

/* RAM bytes of a checked expression's state in layout `wide` (0 if unsupported). */
uint8_t agg_state_size(const qexpr *e, uint8_t wide);

/* Bytes of that state a record carries: a prefix of the RAM state (0 if unsupported). */
uint8_t agg_wire_size(const qexpr *e, uint8_t wide);

/* Aggregates whose state carries over epochs: the windows, and EXPAVG when narrow. */
uint8_t agg_is_temporal(uint8_t op, uint8_t wide);

/* What every state operation needs besides the bytes. */
typedef struct agg_ctx {
    const qexpr *e; /* the aggregate expression: op, window and slide or new bits */
    uint8_t wide;   /* layout: query.wide */
    uint16_t self;  /* this node's id (MIN/MAX holder) */
    uint16_t epoch; /* the query's current epoch */
} agg_ctx;

/* A fresh state for a group first seen in c->epoch. */
void agg_init(uint8_t *st, const agg_ctx *c);
/* The local reading v (field arithmetic applied; int16 range when narrow). */
void agg_update(uint8_t *st, const agg_ctx *c, int32_t v);
/* A child's record state (its first agg_wire_size() bytes are read). */
void agg_merge(uint8_t *st, const agg_ctx *c, const uint8_t *child);

/* At delivery: does this state report in c->epoch? */
uint8_t agg_epoch_has_data(uint8_t *st, const agg_ctx *c);
/* After delivery: 0 if the state holds nothing any more (its slot may be released). */
uint8_t agg_end_epoch(uint8_t *st, const agg_ctx *c);

/*
 * The state's first value at full width (MIN/MAX/SUM/COUNT value, AVG sum,
 * a window's lastResult value): int16 range when narrow. Snooping compares it;
 * the radio queue's DELTA policy scores on it (clamped to int16 there).
 */
int32_t agg_value(const uint8_t *st, uint8_t wide);

#endif /* MOTE_OPS_AGG_H */
