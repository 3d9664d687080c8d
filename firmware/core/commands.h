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
 *   reset                                 drop every query, empty the queue
 *   setrate <uint8 qid> <int16 units>     new epoch duration of a query
 * Unknown names and bad parameters are counted and otherwise ignored, as an
 * unmodified TinyDB mote would.
 *
 * StatusMessage: fromBase u8 | numQueries u8 | queries[8]. A request
 * (fromBase != 0) is answered with fromBase 0 and the running query ids: on
 * the UART if it came from there, else broadcast.
 */
#ifndef MOTE_CORE_COMMANDS_H
#define MOTE_CORE_COMMANDS_H

#include <stdint.h>

#include "mote_state.h"

#define CMD_HEADER_LEN 6u
#define STATUS_LEN 10u
#define STATUS_MAX_QUERIES 8u

void cmd_receive(mote_state *st, const uint8_t *data, uint8_t len);
void status_receive(mote_state *st, const uint8_t *data, uint8_t len, uint8_t from_uart);

/* Shared by RATE_MSG and `setrate`: 0 if qid is not running or units invalid. */
uint8_t cmd_set_rate(mote_state *st, uint8_t qid, int16_t units);

#endif /* MOTE_CORE_COMMANDS_H */
