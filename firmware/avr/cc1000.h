/*
 * cc1000.h - the Mica2's CC1000 radio: registers, byte stream, CSMA, acks.
 *
 * Mechanism:
 *   - The chip is programmed over its 3-wire configuration port (PALE, PCLK,
 *     PDATA bit-banged on port D): 7 address bits, a write bit, 8 data bits,
 *     all MSB first, sampled by the chip on PCLK's falling edge. Init writes
 *     the frequency preset (433 MHz, or 915 MHz with -DCC1000_915MHZ),
 *     calibrates the PLL for the RX (A) and the TX (B) frequency (CAL_START,
 *     poll CAL_COMPLETE, bounded) and starts listening.
 *   - The data path is the AVR SPI in SLAVE mode: in RX and TX the chip's DCLK
 *     clocks one byte per 8 bit times at 19.2 kbit/s (416.7 us; the chip
 *     Manchester-codes on air). The SPI interrupt is the byte clock of the whole
 *     driver: it moves one byte, counts backoffs and ack waits in byte times,
 *     and sets flags. It never calls up.
 *   - On air: 28 preamble bytes 0xAA, sync word 0x33CC, the TOS_Msg (addr LE,
 *     type, group, length, data), CRC-16 (net/crc16.h) low byte first. A
 *     receiver counts preamble bytes (0xAA or 0x55: its byte boundary is at any
 *     bit offset from the sender's), finds the sync word at whichever offset it
 *     lies, then shifts every later byte by that offset.
 *   - CSMA: a send waits an initial backoff of 1..32 byte times, then samples
 *     RSSI (ADC0). CC1000 RSSI voltage FALLS as the signal grows, so the
 *     channel is clear while the sample stays above the noise floor estimate
 *     minus a margin. The floor is the second highest of the last 5 idle
 *     samples (one every 64 idle byte times; TinyOS 1.x kept a running median
 *     of its idle samples, but a sample that caught a frame can only be low,
 *     so the top of the window is the robust end). A busy
 *     channel, or a preamble being heard, costs a congestion backoff of 1..16
 *     byte times; the 32nd busy poll gives up (send_done(0)), as the
 *     emulator's medium does (emu/csrc/medium.c, same units in byte times).
 *   - Acks are selective: a unicast to TOS_LOCAL_ADDRESS is acked only after
 *     avr_radio_received() returned 1, which runs in the main loop. The ISR
 *     holds the received frame (no second receive buffer) and counts the
 *     bytes since its end; if the main loop answers within the sender's wait
 *     it sends the ack (6 preamble bytes, sync, 0xAB 0xBA), else it stays
 *     silent. The sender listens CC1000_ACK_WAIT_BYTES byte times for it.
 *   - The ADC is shared with adc.c: an RSSI conversion (~110 us, blocking)
 *     is run from the ISR only when no other conversion is running (ADSC
 *     clear), with ADMUX and ADCSRA restored after; adc.c must read its
 *     result promptly once ADSC falls.
 *
 * Sizes: one receive and one send buffer of CC1000_MSG_MAX bytes each.
 */
#ifndef MOTE_AVR_CC1000_H
#define MOTE_AVR_CC1000_H

#include <stdint.h>

#define CC1000_MSG_MAX 54u /* TOS_MSG_MAX of net/mhop.h: 5-byte header + 49 data */

/*
 * Ack wait: 72 byte times = 30 ms after the sender's last CRC byte. The ack
 * is decided by the core in the main loop (selective acks), so the wait must
 * cover the longest main-loop step that may be running when the frame ends
 * (a UART frame or an epoch's sampling, a few ms on the 7.37 MHz AVR) plus
 * the ack's own 10 bytes (4.2 ms) and the ISR's turnaround.
 */
#ifndef CC1000_ACK_WAIT_BYTES
#define CC1000_ACK_WAIT_BYTES 72u
#endif

void cc1000_init(void);                 /* program registers, calibrate, start in RX (listening) */
void cc1000_listen(uint8_t on);         /* 1: receiver on; 0: radio core powered down (sleep) */
uint8_t cc1000_send(const uint8_t *tos_msg, uint8_t len); /* 1 accepted, 0 busy; CSMA, backoff, ack wait */
uint8_t cc1000_busy(void);              /* 1 while a byte-level activity is under way: do not sleep deeper than idle */
void cc1000_poll(void);                 /* called from main loop (never an ISR): delivers the events below */

/* Upcalls, implemented by hal_avr.c, called only from cc1000_poll(): */
void avr_radio_frame_start(uint8_t *tos_msg, uint8_t len);  /* own frame's start symbol went out */
uint8_t avr_radio_received(const uint8_t *tos_msg, uint8_t len); /* CRC ok; return 1 = ack it (if unicast to us) */
void avr_radio_send_done(uint8_t acked);
uint16_t avr_radio_rx_started_ms(void);  /* not needed: hal.rx_started_ms may stay NULL */

/* Counters for tests and diagnostics; read with interrupts off or accept tearing. */
typedef struct cc1000_stats {
    uint16_t rx_ok;       /* frames with a good CRC */
    uint16_t rx_crc_fail; /* frames whose CRC failed */
    uint16_t tx_frames;   /* frames put on air (acks not counted) */
    uint16_t tx_acked;
    uint16_t acks_sent;
    uint16_t busy_polls;  /* CSMA polls that found the channel busy */
    uint16_t gave_up;     /* sends dropped after CC1000_MAX_BACKOFFS busy polls */
    uint16_t cal_timeouts;/* calibrations that never reported CAL_COMPLETE */
} cc1000_stats;

void cc1000_get_stats(cc1000_stats *out);
uint16_t cc1000_noise_floor(void); /* ADC counts, for diagnostics */
int8_t cc1000_rx_snr_db(void);     /* the frame being delivered: dB over the floor, 0 unknown */

#endif /* MOTE_AVR_CC1000_H */
