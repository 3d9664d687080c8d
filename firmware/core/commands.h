/*
 * commands.h - named commands (AM 103) and status requests (AM 106), §15.
 *
 * CommandMsg: nodeid i16 (0xFFFF = every node) | seqNo u32 | NUL-terminated
 * name | parameters (integers little-endian, strings NUL-terminated). A
 * command is new when the low byte of seqNo is greater than the last one seen
 * or differs from it by more than 8 (so the counter may wrap); a new command
 * is rebroadcast, then executed if it targets this node. Commands:
 *   qpolicy <string naive|winavg|delta>   result queue policy
 *   qlen <uint8>                          result queue length
 *   nointerleave <uint8 0|1>              sample every field at epoch start
 *   snoop <uint8 0|1>                     MIN/MAX suppression by overheard siblings
 *                                         (paper §6.3.2; on at boot, and after reset)
 *   reset                                 drop every query, empty the queue
 *   setrate <uint8 qid> <int16 units>     new epoch duration of a query (as RATE)
 * Unknown names and bad parameters are counted and otherwise ignored, as an
 * unmodified TinyDB mote would.
 *
 * StatusMessage: fromBase u8 | numQueries u8 | queries[8]. A request
 * (fromBase != 0) is answered with fromBase 0 and the running query ids: on
 * the UART if it came from there, else broadcast. TinyDB sends the message in
 * a 49-byte payload and never reads past byte 10; a motebase mote fills those
 * bytes with an extension that tells the gateway whom it talks to:
 *   10 'm' | 11 'b' | 12 version | 13 capabilities | 14 n | 15.. n busy ids
 * capabilities bit 0: 32-bit partial states (the query trailer's flag);
 * bit 1: epoch bases and the down wave (core/schedule.h). Busy ids are
 * queries that stopped or drain but may still deliver results
 * (core/stops.h): the gateway must not give their ids to a new query yet.
 */
#ifndef MOTE_CORE_COMMANDS_H
#define MOTE_CORE_COMMANDS_H

#include <stdint.h>

#include "mote_type.h"

#define CMD_HEADER_LEN 6u
#define STATUS_LEN 10u
#define STATUS_MAX_QUERIES 8u
#define STATUS_EXT_VERSION 1u
#define STATUS_CAP_WIDE_STATES 0x01u
#define STATUS_CAP_EPOCH_BASE 0x02u
#define STATUS_MAX_BUSY 8u

void cmd_receive(mote_state *st, const uint8_t *data, uint8_t len);
void status_receive(mote_state *st, const uint8_t *data, uint8_t len, uint8_t from_uart);


#endif /* MOTE_CORE_COMMANDS_H */
