/*
 * stops.h - what a node remembers of stopped queries, and how it stops stragglers.
 *
 * A DEL travels the down wave (core/schedule.h) like a query part, and a node
 * that misses every copy (a lossy link, asleep, rebooted, joined late) would
 * run the query for ever, sampling and sending results nobody assembles --
 * while the gateway might give the id to a new query. So:
 *   - every node keeps the ids of the last STOPS_REMEMBERED queries it stopped
 *     (or heard stopped), in a ring;
 *   - a node that stops a query, or passes on a DEL for one it did not hold,
 *     sends it again STOPS_ECHOES times, a control period apart (stops_echo):
 *     a child that lost the first copy to a lossy link most likely hears one;
 *   - a node that hears a result of a remembered query -- addressed to it or
 *     overheard -- broadcasts a DEL for it at once, outside the down wave's
 *     slot, while the straggler that just sent still listens (not held back to a
 *     control period after the last DEL, which it would sleep through: seen on
 *     a lossy 1-s grid, where stragglers ran 5-6 epochs on), so a straggler is
 *     told by whoever hears it;
 *   - a DEL from upstream for a query the node does not know is remembered
 *     and passed on once, so it reaches stragglers below nodes that already
 *     forgot the query;
 *   - the root is the authority: a result or a query request (AM 104) for a
 *     query it does not run makes it remember that id and stop it.
 * A late part of a remembered query from a neighbour that is not upstream
 * must not revive it (TinyDB's mStoppedQid guard, mote.c); the PC reusing the
 * id, through upstream, removes it from the ring. The root reports the ring
 * as busy ids in its status reply, so the gateway does not reuse an id while
 * its results may still arrive (core/commands.h).
 */
#ifndef MOTE_CORE_STOPS_H
#define MOTE_CORE_STOPS_H

#include <stdint.h>

#include "../net/airtime.h"
#include "mote_type.h"

/* What a node remembers of the queries it stopped, and when its next DELs may go. */
#define STOPS_REMEMBERED 4u
typedef struct stop_memory {
    uint32_t del_after;             /* no DEL of ours before then: one per control period */
    uint8_t qid[STOPS_REMEMBERED];  /* ring, QUERY_NO_QID where empty */
    uint8_t head;                   /* next place to write */
    uint8_t due;                    /* bit i: a DEL for qid[i] should go */
    uint8_t echoes;                 /* bits 2i..2i+1: DELs for qid[i] still to repeat */
    uint32_t reply_after;           /* long waves: no reply to a straggler before then */
} stop_memory;

void stops_init(mote_state *st);
uint8_t stops_has(const mote_state *st, uint8_t qid);
void stops_remember(mote_state *st, uint8_t qid);

/* The DEL for remembered `qid` has just gone down: repeat it STOPS_ECHOES times. */
#define STOPS_ECHOES 2u
/* How long after hearing a straggler its DEL may leave outside the down slot. */
#define STOPS_REPLY_MS RADIO_SEND_MS
/* Replies to stragglers at most this often: they go at once, not a control period after
 * the last DEL, when the straggler that just sent sleeps again. */
#define STOPS_REPLY_GAP_MS (4u * RADIO_SEND_MS)
void stops_echo(mote_state *st, uint8_t qid);
void stops_forget(mote_state *st, uint8_t qid);

/* A result of query `qid`, which this node does not run, was heard: if the id is
 * remembered as stopped (or this is the root), a DEL for it is due. */
void stops_on_straggler(mote_state *st, uint8_t qid);

/* In a long down wave (core/schedule.h), echoes wait for the node's own slot: it must
 * wake for it (core/mote.c, rearm). */
uint8_t stops_wave_waiting(const mote_state *st);

/* Queue a due DEL when the control queue has room and the period allows. */
void stops_pump(mote_state *st);

/* The remembered ids, newest first; returns how many were written (<= max). */
uint8_t stops_list(const mote_state *st, uint8_t *out, uint8_t max);

#endif /* MOTE_CORE_STOPS_H */
