/*
 * cc1000_part.h - a simavr "part" for the Chipcon CC1000, as its MCU sees it.
 *
 * Written from the CC1000 datasheet, not from firmware/avr/cc1000.c.
 *
 * Mechanism:
 *   - Configuration port: the part hooks the AVR's PALE, PCLK and PDATA pin
 *     IRQs. A PALE fall starts an address phase; 7 address bits and the R/W
 *     bit are sampled on PCLK falls; PALE's rise ends it. A write then takes 8
 *     data bits on PCLK falls and stores the register after the 8th; a read
 *     drives PDATA with one bit (MSB first) on each PCLK fall.
 *   - MAIN is decoded for RESET_N (low: registers to their reset values and
 *     calibration lost), the power-down bits and RX/TX. CAL_START starts a
 *     calibration of the synthesizer's current frequency register (F_REG: A
 *     or B) that completes CC1000_PART_CAL_US later (CAL_COMPLETE set).
 *     The PLL is locked when core, bias and synthesizer are on and the
 *     selected frequency was calibrated; CHP_OUT shows it when LOCK_SELECT is 1.
 *   - Data: while locked in RX or TX, the part clocks the AVR's SPI (slave) one
 *     byte every 8/19200 s. Ticks are on a fixed grid from cycle 0 (tick n at
 *     n * F_CPU * 8 / 19200), the same on every part of an air, so nodes stepped
 *     in lockstep tick together. A tick raises SPI_IRQ_INPUT with the received
 *     byte; simavr 1.6's avr_spi.c, in slave mode, stores it for the next SPDR
 *     read (one read only: reading clears it), raises the SPI interrupt and
 *     answers on SPI_IRQ_OUTPUT with the byte the AVR last wrote to SPDR --
 *     the byte that was shifting out during the tick, which TX puts on air.
 *     Nothing in simavr checks SS, CPOL/CPHA or write collisions.
 *   - Air: a cc1000_air links N parts. It keeps each sender's bytes of the
 *     last CC1000_AIR_HIST ticks. A receiver at tick n hears tick
 *     n - CC1000_AIR_DELAY (so lockstep skew of up to a tick cannot reorder
 *     a byte), lossless: one sender's byte exactly, noise bytes when nobody
 *     sends, a garbled byte when two or more send (a collision). The receiver's
 *     bit clock sits `bit_offset` bits from the senders' byte boundaries, as a
 *     real receiver's does, so the firmware must find the sync word at any
 *     offset.
 *   - RSSI (ADC input): the CC1000's RSSI voltage falls as the input power
 *     rises, V = (-49.2 dBm - P) / 51.3 dBm/V at 433 MHz: the part sets the
 *     channel to the signal level while another part's byte is heard, else to
 *     the noise level with a few mV of jitter. RSSI follows the carrier of
 *     the current or previous tick (not the delayed decoded byte): energy
 *     detection is quicker than demodulation.
 *   - Frame counters: a framer per direction reads the byte stream at the
 *     senders' byte boundaries (what the part sends while in TX; what it
 *     hears, before its bit offset, while in RX): two or more 0xAA/0x55, the
 *     sync word 0x33CC, then an ack (0xAB 0xBA) or a TOS_Msg whose length byte
 *     sizes it and whose CRC-16 (XMODEM, low byte first) must match. They
 *     count what crossed the air, independently of what the firmware made of it.
 */
#ifndef CC1000_PART_H
#define CC1000_PART_H

#include <stdint.h>

#include <simavr/sim_avr.h>
#include <simavr/sim_irq.h>

#define CC1000_AIR_MAX 8u
#define CC1000_AIR_HIST 4u
#define CC1000_AIR_DELAY 2u
#define CC1000_PART_NREG 0x47u
#define CC1000_PART_CAL_US 11000u
#define CC1000_PART_BIT_RATE 19200u

typedef struct cc1000_air {
    uint32_t n;                                         /* parts attached */
    uint64_t slot_tick[CC1000_AIR_MAX][CC1000_AIR_HIST]; /* tick + 1 of each byte, 0: none */
    uint8_t slot_byte[CC1000_AIR_MAX][CC1000_AIR_HIST];
    uint64_t overlap_bytes; /* bytes sent while another part was sending */
} cc1000_air;

/* Where the chip is wired (Mica2: PALE D4, PCLK D6, PDATA D7, CHP_OUT A6, RSSI ADC0). */
typedef struct cc1000_wiring {
    char pale_port, pclk_port, pdata_port, chp_port;
    uint8_t pale_bit, pclk_bit, pdata_bit, chp_bit;
    uint8_t rssi_adc;
} cc1000_wiring;

typedef struct cc1000_counters {
    uint64_t reg_writes, reg_reads, calibrations;
    uint64_t bytes_tx, bytes_rx, collided_rx;
    uint64_t frames_tx, acks_tx;  /* whole data frames (CRC ok) and acks put on air */
    uint64_t frames_rx, acks_rx;  /* the same, heard intact while in RX */
    uint64_t bad_frames_rx;       /* synced, then a CRC mismatch or a corrupt length */
} cc1000_counters;

/* Private: one direction's frame parser (see "Frame counters"). */
typedef struct cc1000_framer {
    uint8_t in_frame, pre, prev, idx, total, first;
    uint16_t crc, got_crc;
} cc1000_framer;

typedef struct cc1000_part {
    avr_t *avr;
    cc1000_air *air;
    uint32_t node;
    uint8_t bit_offset;
    double signal_dbm, noise_dbm;
    cc1000_wiring w;
    uint8_t reg[CC1000_PART_NREG];
    cc1000_counters cnt;
    /* ---- private ---- */
    avr_irq_t *pdata_irq, *chp_irq, *spi_in_irq, *rssi_irq;
    uint8_t pale, pclk, pdata, driving;
    uint8_t phase, nbits, shift, addr, rd_val;
    uint8_t calibrated[2], calibrating, cal_freg;
    uint8_t spi_out, rx_prev;
    uint64_t tick;
    uint32_t rng;
    cc1000_framer tx_framer, rx_framer;
} cc1000_part;

void cc1000_air_init(cc1000_air *air);
cc1000_wiring cc1000_mica2_wiring(void);
/* Attach a part to `avr` and `air`; returns 0, or -1 if the air is full. */
int cc1000_part_init(cc1000_part *p, avr_t *avr, cc1000_air *air, cc1000_wiring w,
                     uint8_t bit_offset, uint32_t seed);
/* 1 while the PLL is locked in RX (2: in TX), 0 otherwise. */
int cc1000_part_mode(const cc1000_part *p);

#endif /* CC1000_PART_H */
