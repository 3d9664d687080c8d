/*
 * txpath.h - everything a node sends, and when.
 *
 * Two sources share the one-packet-at-a-time radio: a small FIFO of control
 * packets (query and command forwards, status replies, route beacons), served
 * first, and the result queue (net/radioq.h, with its naive/winavg/delta
 * policy), which holds own and forwarded AM 240 results. Both drain only
 * while the send gate is open -- during one of the node's transmit intervals,
 * or always when no query runs -- so neighbours, which follow the same slotted
 * schedule, are awake to hear them (core/schedule.h).
 *
 * Results leave the root on the UART instead (TOS addr 0x007E, protocol-66
 * frame) as soon as they are produced: the serial line is always listening.
 * The multihop header and the time stamp are written at transmission.
 */
#ifndef MOTE_CORE_TXPATH_H
#define MOTE_CORE_TXPATH_H

#include <stdint.h>

#include "mote_state.h"

/* Queue a control packet (AM `am`, `len` data bytes) for the radio; counted if dropped. */
void tx_control(mote_state *st, uint16_t addr, uint8_t am, const uint8_t *data, uint8_t len);

/* Send a packet (AM `am`) to the UART right away, framed. */
void tx_uart(mote_state *st, uint8_t am, const uint8_t *data, uint8_t len);

/*
 * A QueryResult (42 bytes) produced by `origin` with its multihop `hopcount`
 * unknown yet: to the UART at the root, into the result queue elsewhere.
 * `value` is what the DELTA policy scores. Returns 1 if accepted.
 */
uint8_t tx_result(mote_state *st, const uint8_t *qr, uint16_t origin, int16_t value);

/* Start the next transmission if the radio is free and something may go. */
void tx_pump(mote_state *st);

/* The radio finished the packet in flight. */
void tx_done(mote_state *st);

/* 1 if the send gate is open (inside some query's transmit interval, or none running). */
uint8_t tx_gate(const mote_state *st);

/* WINAVG merge callback for the result queue (tuples of the same query only). */
uint8_t tx_winavg_merge(void *ctx, radioq_entry *dst, const radioq_entry *src);

#endif /* MOTE_CORE_TXPATH_H */
