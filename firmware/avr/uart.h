/*
 * uart.h - UART0, the link to the basestation (MIB510 serial port).
 *
 * Mechanism: interrupt driven, 8N1, 57,600 baud on the mica2 and 19,200 on the
 * mica2dot (TinyOS 1.x's rates). The receive interrupt puts bytes in a ring the
 * main loop drains into the core (mote_on_uart_rx); uart_write() copies already
 * framed bytes into a transmit ring the data-register-empty interrupt empties.
 * Both rings are fixed powers of two; a full transmit ring makes uart_write wait
 * for room (it runs in the main loop, never in an interrupt), a full receive ring
 * drops the byte, which the HDLC framing's CRC then rejects.
 */
#ifndef MOTE_AVR_UART_H
#define MOTE_AVR_UART_H

#include <stdint.h>

#define UART_RX_RING 64u  /* 11 ms at 57,600 baud: longer than the core's longest step */
#define UART_TX_RING 128u /* one framed TOS_Msg (115 B) and an ack */

void uart_init(void);
void uart_write(const uint8_t *bytes, uint16_t len);
/* Moves received bytes into buf (at most cap); returns how many. */
uint8_t uart_read(uint8_t *buf, uint8_t cap);
/* 1 if received bytes wait for uart_read. */
uint8_t uart_rx_available(void);
/* 1 while bytes wait to go out or the last one is still being shifted. */
uint8_t uart_tx_busy(void);

#endif /* MOTE_AVR_UART_H */
