/*
 * bundle.h - several tuples in one radio frame (AM_BUNDLE, motebase's own).
 *
 * Why: a tuple needs 15-20 of the 42 QueryResult bytes, yet every AM 240 frame
 * is a whole TOS_Msg, 86 bytes on the air with the CC1000's preamble, plus a
 * backoff and an ack. Near the root, where every tuple of a SELECT crosses one
 * link, that is the channel's limit (docs/radio.md). A relay with two tuples
 * queued for the same parent sends them in one frame, one ack.
 *
 * Frame: TOS header, the multihop header (the sender's seqno, hop count and
 * origin of the first item), then items. The first is whole:
 *     origin u16 | n u8 | QueryResult bytes 0..5 (qid, idx, epoch, qrType)
 *                       | QueryResult bytes 14.. (the tuple), n - 5 of them,
 * the tuple's trailing zero bytes left off. Each later one of the same query,
 * result index and tuple header (qid, numFields, notNull) as the first, whose
 * epoch is within 127 of the first's, is short:
 *     origin u16 | 0x80 + m u8 | epoch - first's epoch, s8 | the values, m bytes,
 * the rest taken from the first: four tuples of two 2-byte fields fit where two
 * whole ones did (three with a whole epoch each: the 25-node grid's SELECT at
 * 2 s delivered .922 of its tuples then, .944 now, seeds 1-10).
 * timeSyncData, clockCount and lastDiff (bytes 5..14) are not
 * carried: a tuple's are zero but for the time, which every hop stamps anew and
 * the root stamps last, so the root's AM 240 on the UART is byte for byte what
 * it would have been.
 *
 * Aggregate records travel so too, a node's records of one query and epoch in
 * one frame (core/txpath.c, gather): a MAX and a COUNT were two frames in one
 * interval, and on a 1,000-node grid on `sinr` each level's interval was that
 * much more crowded. A record item is always whole, and carries the record's
 * timeSyncData after its head:
 *     origin u16 | n u8 | QueryResult bytes 0..10 (qid .. timeSyncData)
 *                       | QueryResult bytes 14.. (the record), n - 10 of them,
 * the trailing zero bytes left off. The first item's time is stamped as the
 * frame goes on the air, as an AM 240's is, and children keep their clocks by it.
 *
 * Bundles go only to a parent whose beacons carry motebase's trailer
 * (net/routing.h): an unmodified TinyDB mote acks any frame addressed to it, and
 * would drop this. gateway/protocol/motebase.py holds the same layout for radio
 * captures.
 */
#ifndef MOTE_RESULT_BUNDLE_H
#define MOTE_RESULT_BUNDLE_H

#include <stdint.h>

#include "result.h"

#define BUNDLE_ITEM_HEADER 3u /* origin u16, n u8 */
#define BUNDLE_QR_HEAD 5u     /* qid, idx, epoch u16, qrType */
#define BUNDLE_RECORD_HEAD (QR_OFF_TIME + 5u) /* ...and a record's timeSyncData */
#define BUNDLE_SHORT 0x80u    /* n: a short item, m = n - BUNDLE_SHORT value bytes */
#define BUNDLE_SHORT_HEAD 1u  /* a short item's epoch, as a difference */
#define BUNDLE_EPOCH_REACH 127 /* ...of at most this much either way */
/* A tuple's smallest whole item: its 6-byte tuple header, no value. */
#define BUNDLE_ITEM_MIN (BUNDLE_ITEM_HEADER + BUNDLE_QR_HEAD + QR_TUPLE_HEADER)

/* Bytes `qr` takes as an item after `first` (NULL: as the first, whole); 0 if it
 * cannot travel in a bundle (neither a tuple nor a record, or clockCount/lastDiff not
 * zero). */
uint8_t bundle_item_size(const uint8_t qr[QR_LEN], const uint8_t *first);

/* Append `qr` from `origin` at out[0..room), short if `first` (the bundle's first
 * QueryResult, NULL for the first itself) allows. Returns the bytes written, 0
 * (nothing written) if it cannot travel in a bundle or does not fit. */
uint8_t bundle_put(uint8_t *out, uint8_t room, const uint8_t qr[QR_LEN], uint16_t origin,
                   const uint8_t *first);

/* Read the item at in[0..len) back into a whole QueryResult (time fields zero but a
 * record's timeSyncData); a short one needs `first`. Returns the bytes it took, 0 if
 * malformed. */
uint8_t bundle_get(const uint8_t *in, uint8_t len, uint8_t qr[QR_LEN], uint16_t *origin,
                   const uint8_t *first);

/* Items in a bundle body of `len` bytes; 0 if any is malformed. */
uint8_t bundle_count(const uint8_t *in, uint8_t len);

#endif /* MOTE_RESULT_BUNDLE_H */
