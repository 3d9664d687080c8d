#include "uart.h"

#include <avr/interrupt.h>
#include <avr/io.h>
#include <util/atomic.h>

#if defined(MOTE_PLATFORM_MICA2DOT)
#define UART_BAUD 19200UL
#else
#define UART_BAUD 57600UL
#endif
/* 7.3728 MHz / 16 / 57,600 - 1 = 7 exactly; 4 MHz / 16 / 19,200 - 1 = 12 (0.2 % off). */
#define UART_UBRR ((F_CPU + 8UL * UART_BAUD) / (16UL * UART_BAUD) - 1UL)

typedef char uart_rings_are_powers_of_two[((UART_RX_RING & (UART_RX_RING - 1u)) == 0u &&
                                           (UART_TX_RING & (UART_TX_RING - 1u)) == 0u) ? 1 : -1];

static uint8_t rx_ring[UART_RX_RING];
static volatile uint8_t rx_head, rx_tail; /* head: written by the ISR */
static uint8_t tx_ring[UART_TX_RING];
static volatile uint8_t tx_head, tx_tail; /* tail: advanced by the ISR */
static volatile uint8_t tx_shifting;      /* a byte left UDR0 and TXC0 has not come yet */

void uart_init(void)
{
    UBRR0H = (uint8_t)(UART_UBRR >> 8);
    UBRR0L = (uint8_t)UART_UBRR;
    UCSR0A = 0;
    UCSR0C = _BV(UCSZ01) | _BV(UCSZ00);
    UCSR0B = _BV(RXEN0) | _BV(TXEN0) | _BV(RXCIE0) | _BV(TXCIE0);
}

void uart_write(const uint8_t *bytes, uint16_t len)
{
    uint16_t i;
    for (i = 0; i < len; i++) {
        uint8_t next = (uint8_t)((tx_head + 1u) & (UART_TX_RING - 1u));
        while (next == tx_tail)
            ; /* the UDRE interrupt makes room */
        tx_ring[tx_head] = bytes[i];
        ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
        {
            tx_head = next;
            tx_shifting = 1;
            UCSR0B |= _BV(UDRIE0);
        }
    }
}

uint8_t uart_read(uint8_t *buf, uint8_t cap)
{
    uint8_t n = 0;
    while (n < cap && rx_tail != rx_head) {
        buf[n++] = rx_ring[rx_tail];
        rx_tail = (uint8_t)((rx_tail + 1u) & (UART_RX_RING - 1u));
    }
    return n;
}

uint8_t uart_rx_available(void)
{
    return rx_tail != rx_head;
}

uint8_t uart_tx_busy(void)
{
    return tx_shifting;
}

ISR(USART0_RX_vect)
{
    uint8_t c = UDR0;
    uint8_t next = (uint8_t)((rx_head + 1u) & (UART_RX_RING - 1u));
    if (next != rx_tail) {
        rx_ring[rx_head] = c;
        rx_head = next;
    }
}

ISR(USART0_UDRE_vect)
{
    if (tx_tail == tx_head) {
        UCSR0B &= (uint8_t)~_BV(UDRIE0);
        return;
    }
    UDR0 = tx_ring[tx_tail];
    tx_tail = (uint8_t)((tx_tail + 1u) & (UART_TX_RING - 1u));
}

ISR(USART0_TX_vect)
{
    if (tx_tail == tx_head)
        tx_shifting = 0;
}
