/*
 * agg.h - TAG aggregate partial states (wire-format §9), kept in wire bytes.
 *
 * A partial state lives in RAM exactly as it travels in an aggregate record
 * (§9.3 layouts, little-endian, packed), so emitting a record is a byte copy
 * and merging a child's record reads its bytes in place. Per (expression,
 * group) the caller owns agg_state_size() bytes; these functions only
 * interpret them.
 *
 * Life of a state over one epoch:  agg_update() for the local reading and
 * agg_merge() for every child record, then agg_epoch_has_data() decides
 * whether a record goes out (windowed aggregates only every `slide` epochs),
 * then agg_end_epoch() resets what does not carry over.
 *
 * Windowed aggregates (WINAVG/WINSUM/WINMIN/WINMAX/WINCNT, args window w and
 * slide s) keep a ring of the last w - s epoch contributions so a window of w
 * epochs is reported every s epochs. Deviations from TinyDB 1.x (design.md §2):
 * ring values are 16-bit (not uint8, A13); a state never exceeds the 25 bytes a
 * record can carry, so w - s is bounded (AGG_RING_MAX_*); windows are aligned
 * on epoch numbers (a window closes when epoch % s == 0) so that parent and
 * children close theirs together; merge folds the child's window result into
 * the current window only -- the child's ring stays the child's, since the
 * child will report those epochs again in its next window.
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
#define AGG_WIN_HEADER 9u     /* lastResult (4) + head, tail, size, nvals, epochsLeft */
#define AGG_RING_MAX_AVG 4u   /* {sum, count} entries: 9 + 4*4 = 25 */
#define AGG_RING_MAX_VALUE 8u /* int16 entries: 9 + 8*2 = 25 */

enum agg_check {
    AGG_OK = 0,
    AGG_UNSUPPORTED = 1,     /* id not wired (DELTA, TREND, ...): accepted, never reports (as TinyDB) */
    AGG_WINDOW_TOO_LARGE = 2 /* state would not fit a record: the query is refused */
};

uint8_t agg_check(uint8_t op, uint8_t arg0, uint8_t arg1);

/* Bytes of state for a checked expression (0 if unsupported). */
uint8_t agg_state_size(const qexpr *e);

/* Aggregates whose state carries over epochs (EXPAVG and the windows). */
uint8_t agg_is_temporal(uint8_t op);

/* A fresh state for a group first seen in `epoch` on node `self`. */
void agg_init(uint8_t *st, const qexpr *e, uint16_t self, uint16_t epoch);
void agg_update(uint8_t *st, const qexpr *e, int16_t v, uint16_t self);
void agg_merge(uint8_t *st, const qexpr *e, const uint8_t *child);

/* At delivery in `epoch`: does this state report now? */
uint8_t agg_epoch_has_data(uint8_t *st, const qexpr *e, uint16_t epoch);
void agg_end_epoch(uint8_t *st, const qexpr *e, uint16_t self);

/* The value the state reports (MIN/MAX/SUM/COUNT value, AVG sum) for snooping and tests. */
int16_t agg_value(const uint8_t *st);

#endif /* MOTE_OPS_AGG_H */
