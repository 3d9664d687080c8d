/*
 * mote.h - one node's TinyDB runtime, as seen from a platform.
 *
 * All state of one node lives in one `mote_state` block whose size is fixed
 * at compile time (<= MOTE_STATE_MAX bytes so it fits the ATmega128 next to
 * a stack). The platform owns the memory: it may place thousands of these in
 * one contiguous array (the emulator does), so the type is opaque here and
 * its size is asked with mote_state_size().
 *
 * Every entry point runs to completion, never blocks and never allocates.
 */
#ifndef MOTE_CORE_MOTE_H
#define MOTE_CORE_MOTE_H

#include <stddef.h>
#include <stdint.h>

#include "../hal/hal.h"
#include "mote_stats.h"
#include "mote_type.h"

/* The AVR profile's state must leave the mica2's 4 KB room for the platform and a stack. */
#ifndef MOTE_STATE_MAX
#ifdef MOTE_PROFILE_AVR
#define MOTE_STATE_MAX 2048u
#else
#define MOTE_STATE_MAX 3176u /* 3072 + 32 for the bundled tuples of result/bundle.h + 24 for the
                                 neighbours' reverse link estimates (net/routing.h) + 16 for
                                 the result queue's packed counts (net/radioq.h) + 24 for the
                                 route generations (net/routing.h) + 8 for whether each
                                 query was answered (core/runs.c, echo_unanswered) */
#endif
#endif
#define MOTE_ROOT_ID 0u

size_t mote_state_size(void);

/* Reset `st` (mote_state_size() bytes) to a freshly booted node `id`. */
void mote_init(mote_state *st, uint16_t id, const mote_hal *hal);

/* The node's AM group (default TOS_DEFAULT_GROUP, 0x7D): radio packets of another
 * group are ignored, and the node's own carry it. A real mote takes it from its image
 * (TOS_AM_GROUP, patched by `mote flash`); call after mote_init. */
void mote_set_am_group(mote_state *st, uint8_t group);

/* Stimuli from the platform. */
void mote_on_alarm(mote_state *st);
/* Returns 0 if the node refuses the packet: a radio with selective acks (hal.h)
 * must not acknowledge it. */
uint8_t mote_on_radio_rx(mote_state *st, const uint8_t *tos_msg, uint8_t len);
/* `outcome`: HAL_SEND_UNACKED, HAL_SEND_ACKED or HAL_SEND_ABANDONED (hal.h). */
void mote_on_send_done(mote_state *st, uint8_t outcome);
/* The start symbol of the node's own frame (the one radio_send handed over) is on
 * the air and its payload is still to go: the core may rewrite tos_msg's time
 * stamps in place (hal.h). */
void mote_on_frame_start(mote_state *st, uint8_t *tos_msg, uint8_t len);
void mote_on_uart_rx(mote_state *st, const uint8_t *bytes, uint16_t len);

/*
 * Observers, for the emulator, tests and diagnostics. They never change the
 * node. mote_query_status returns the slot status of query.h (0 = unknown,
 * 1 assembling, 2 running, 3 draining).
 */
uint16_t mote_id(const mote_state *st);
uint16_t mote_parent(const mote_state *st);   /* 0xFFFF if none, 0x007E at the root */
uint8_t mote_depth(const mote_state *st);     /* 0xFF if unrouted */
uint32_t mote_logical_time(const mote_state *st);
uint8_t mote_power_state(const mote_state *st); /* 1 if CPU and radio are on */
void mote_get_stats(const mote_state *st, mote_stats *out);
uint8_t mote_query_status(const mote_state *st, uint8_t qid);
uint16_t mote_query_epoch(const mote_state *st, uint8_t qid);
/* Logical time at which epoch 1 of query qid starts here (core/schedule.h), 0 if
 * the node does not hold the query or knows no epoch base for it yet. */
uint32_t mote_query_start(const mote_state *st, uint8_t qid);

#endif /* MOTE_CORE_MOTE_H */
