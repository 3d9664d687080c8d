/*
 * snoop.h - suppression by overheard sibling records (paper §6.3.2).
 *
 * For monotonic exemplary aggregates (MIN, MAX) a partial state that a sibling
 * already sent to the same parent and that is at least as extreme as ours
 * makes our record useless for this epoch: the parent keeps the sibling's
 * value whatever we send. Ties suppress too (the sibling's record already
 * carries the value). Other aggregates are never suppressed: every
 * contribution counts.
 */
#ifndef MOTE_OPS_SNOOP_H
#define MOTE_OPS_SNOOP_H

#include <stdint.h>

/*
 * 1 if `theirs` (a sibling's record state for aggregate `op`) makes `mine`
 * redundant; both in the query's layout (`wide`, ops/agg.h), values compared
 * at full width.
 */
uint8_t snoop_dominates(uint8_t op, uint8_t wide, const uint8_t *mine, const uint8_t *theirs);

#endif /* MOTE_OPS_SNOOP_H */
