/*
 * cc1000.h - the Mica2's CC1000 radio, as the AVR platform sees it.
 *
 * Mechanism: the driver owns the radio's pins (PALE/PCLK/PDATA for the
 * registers, DCLK/DIO on the SPI port in slave mode for the data) and works a
 * byte at a time in its interrupt handlers; everything the rest of the image
 * is told goes through cc1000_poll(), called from the main loop, so the core is
 * never entered from an interrupt. One packet is sent at a time: CSMA with a
 * noise-floor estimate from RSSI (ADC0), a random backoff, the frame (preamble,
 * sync word, TOS_Msg, CRC-16), then the wait for a software ack if unicast.
 *
 * Upcalls (implemented by hal_avr.c, called only from cc1000_poll()):
 *   avr_radio_frame_start  the frame's start symbol went out (time sync stamps);
 *   avr_radio_received     a frame with a good CRC; 1 = ack it if unicast to us;
 *   avr_radio_send_done    the send ended; acked is the link-layer ack.
 */
#ifndef MOTE_AVR_CC1000_H
#define MOTE_AVR_CC1000_H

#include <stdint.h>

void cc1000_init(void);                 /* program registers, calibrate, start in RX (listening) */
void cc1000_listen(uint8_t on);         /* 1: receiver on; 0: radio core powered down (sleep) */
uint8_t cc1000_send(const uint8_t *tos_msg, uint8_t len); /* 1 accepted, 0 busy */
uint8_t cc1000_busy(void);              /* 1 while a byte-level activity is under way */
void cc1000_poll(void);                 /* from the main loop (never an ISR): delivers the upcalls */

void avr_radio_frame_start(uint8_t *tos_msg, uint8_t len);
uint8_t avr_radio_received(const uint8_t *tos_msg, uint8_t len);
void avr_radio_send_done(uint8_t acked);
uint16_t avr_radio_rx_started_ms(void);

#endif /* MOTE_AVR_CC1000_H */
