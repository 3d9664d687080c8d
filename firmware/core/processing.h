/*
 * processing.h - one query's data path on one node, per epoch.
 *
 *   proc_sample  at the epoch start: run the expressions in order over a lazily
 *                sampled reading; a failing selection ends the tuple; aggregate
 *                expressions update the state of the reading's group; a query
 *                without aggregates emits the tuple.
 *   proc_merge   a child's aggregate record (qrType 3) joins the same group's
 *                state (TAG), instead of being forwarded.
 *   proc_snoop   a sibling's MIN/MAX record overheard on its way to our parent
 *                may make ours redundant (ops/snoop.h).
 *   proc_emit    in the node's transmit interval: one record per aggregate
 *                expression per group that reports this epoch, each its own
 *                message, as fast as the radio queue takes them
 *                (proc_emit_more continues); each state is reset once sent.
 *
 * A query's share of the node's arena holds its group table (ops/groups.h),
 * then its aggregate states as [expression][group slot], each agg_state_size()
 * bytes in the query's layout (query.wide, ops/agg.h); proc_layout assigns the
 * offsets when a query starts; the layout comes with the
 * query (its trailer, query/trailer.h) and never changes while it runs.
 */
#ifndef MOTE_CORE_PROCESSING_H
#define MOTE_CORE_PROCESSING_H

#include <stdint.h>

#include "../result/result.h"
#include "mote_type.h"

/* The query's group table (ops/groups.h): the start of its arena share. */
uint8_t *proc_groups(mote_state *st, uint8_t slot);
/* Bytes of arena the query in `slot` needs with `groups` group slots; sets state offsets. */
uint16_t proc_layout(mote_state *st, uint8_t slot, uint8_t groups);

void proc_sample(mote_state *st, uint8_t slot);
/* A child's record: merged into the node's state (returns 1, also when it is dropped),
 * or 0 when its group has no slot here and it must be passed on as it is (processing.c). */
uint8_t proc_merge(mote_state *st, uint8_t slot, const qr_view *v);
/* 1 if a record of this query may travel on as it is, unmerged, for an ancestor or
 * the gateway to merge: the wide layout, an aggregate without memory across epochs. */
uint8_t proc_record_spills(const mote_state *st, uint8_t slot, const qr_view *v);
/* 1 if proc_merge would pass this record on (no group slot left here): it then needs
 * a place in the radio queue, as a forwarded tuple does. No side effects. */
uint8_t proc_record_passes_on(mote_state *st, uint8_t slot, const qr_view *v);
void proc_snoop(mote_state *st, uint8_t slot, const qr_view *v);
void proc_emit(mote_state *st, uint8_t slot);

/* Records an emission left for lack of queue room, now that it may have some. */
void proc_emit_more(mote_state *st);

/* A new epoch begins with records of the last still waiting for room: they are
 * given up (counted in results_unsent) and their states reset. */
void proc_emit_abandon(mote_state *st, uint8_t slot);

/* 1 if the query has a MIN/MAX whose records siblings may suppress (worth listening
 * for), and snooping is on (the `snoop` command, core/commands.h). */
uint8_t proc_snoops(const mote_state *st, const query *q);

/* Arena bytes of (expression e, group slot g) of the query in `slot`. */
uint8_t *proc_state(mote_state *st, uint8_t slot, uint8_t e, uint8_t g);

#endif /* MOTE_CORE_PROCESSING_H */
