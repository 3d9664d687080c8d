/*
 * mhop.h - TOS_Msg and TOS_MHopMsg headers, AM ids, and address constants.
 *
 * A packet on the radio (and in the payload of a serial frame) is the 5-byte
 * TOS_Msg header followed by `length` data bytes (at most TOS_DATA_LENGTH = 49
 * in the TinyDBApp build). Multihop traffic (results AM 240 / 107, route
 * beacons AM 250) starts its data with the 7-byte TOS_MHopMsg header of
 * MintRoute; the QueryResult or RoutePacket follows at data[7].
 *
 *   TOS_Msg   : addr u16 | type u8 | group u8 | length u8 | data[length]
 *   TOS_MHopMsg: sourceaddr u16 | originaddr u16 | seqno i16 | hopcount u8
 *
 * All integers little-endian, no padding. The structs below are the decoded,
 * host-side view; bytes only ever cross the wire through the pack/unpack
 * functions (see wire-format spec §1 and §4.1).
 */
#ifndef MOTE_NET_MHOP_H
#define MOTE_NET_MHOP_H

#include <stdint.h>

/* Addresses and link constants (tos/types/AM.h, TinyDBApp Makefile). */
#define TOS_BCAST_ADDR 0xFFFFu
#define TOS_UART_ADDR 0x007Eu
#define TOS_DEFAULT_GROUP 0x7Du
#define TOS_HEADER_LEN 5u
#define TOS_DATA_LENGTH 49u
#define TOS_MSG_MAX (TOS_HEADER_LEN + TOS_DATA_LENGTH) /* 54: header + full payload */

/* Active Message ids (wire-format spec §3). */
#define AM_QUERY 101u
#define AM_COMMAND 103u
#define AM_QUERY_REQUEST 104u
#define AM_STATUS 106u
#define AM_DUMMY_RESULT 107u
#define AM_DATA 240u
/* motebase's own, radio only: tuples packed for one parent (result/bundle.h) */
#define AM_BUNDLE 241u
#define AM_ROUTE_BEACON 250u

/* MintRoute multihop header. */
#define MHOP_HEADER_LEN 7u
#define MHOP_PAYLOAD_MAX (TOS_DATA_LENGTH - MHOP_HEADER_LEN) /* 42 = sizeof(QueryResult) */
#define MHOP_HOPCOUNT_INVALID 0xFFu /* sender has no route (ROUTE_INVALID) */

/* A result frame: one QueryResult (AM 240) or a bundle of tuples. */
static inline uint8_t am_is_result(uint8_t type) { return type == AM_DATA || type == AM_BUNDLE; }

typedef struct tos_header {
    uint16_t addr;  /* destination: node id, TOS_BCAST_ADDR or TOS_UART_ADDR */
    uint8_t type;   /* AM id */
    uint8_t group;  /* AM group, TOS_DEFAULT_GROUP */
    uint8_t length; /* valid data bytes following the header */
} tos_header;

typedef struct mhop_header {
    uint16_t sourceaddr; /* last hop, rewritten at every forward */
    uint16_t originaddr; /* node that produced the payload */
    int16_t seqno;       /* per-hop sequence number of sourceaddr */
    uint8_t hopcount;    /* depth of sourceaddr, MHOP_HOPCOUNT_INVALID if unrouted */
} mhop_header;

void tos_header_pack(const tos_header *h, uint8_t out[TOS_HEADER_LEN]);
void tos_header_unpack(tos_header *h, const uint8_t in[TOS_HEADER_LEN]);

/*
 * Decode the header of a received packet of `len` bytes and check it is whole:
 * len >= 5, length <= TOS_DATA_LENGTH and 5 + length <= len.
 * Returns 1 if the packet is usable, 0 (h untouched) if not.
 */
uint8_t tos_msg_parse(tos_header *h, const uint8_t *msg, uint16_t len);

void mhop_header_pack(const mhop_header *h, uint8_t out[MHOP_HEADER_LEN]);
void mhop_header_unpack(mhop_header *h, const uint8_t in[MHOP_HEADER_LEN]);

#endif /* MOTE_NET_MHOP_H */
