/*
 * cc1000.c - CC1000 driver for the Mica2/Mica2dot (ATmega128). See cc1000.h
 * for the mechanism; this file keeps to: the ISR moves bytes and sets flags,
 * cc1000_poll() calls up.
 */
#include "cc1000.h"

#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/pgmspace.h>
#include <util/delay.h>

#include "../hal/hal.h"
#include "../net/crc16.h"

extern uint16_t TOS_LOCAL_ADDRESS;

/* Contract 2 pins. PCLK and PDATA are PD6/PD7 on both boards. */
#if defined(MOTE_PLATFORM_MICA2DOT)
#define PALE_BIT PD5
#define CHP_PIN PINE
#define CHP_BIT PE7
#else
#define PALE_BIT PD4
#define CHP_PIN PINA
#define CHP_BIT PA6
#endif
#define PCLK_BIT PD6
#define PDATA_BIT PD7
#define MISO_BIT PB3

/* Register addresses and bits (CC1000 datasheet, configuration registers). */
enum {
    R_MAIN = 0x00, R_FREQ_2A = 0x01, R_CURRENT = 0x09, R_PA_POW = 0x0B, R_CAL = 0x0E,
    R_FSCTRL = 0x13, R_PRESCALER = 0x1C, R_TEST4 = 0x42
};
#define CAL_START 0x80u
#define CAL_WAIT 0x20u
#define CAL_COMPLETE 0x08u
#define CAL_ITERATE 0x06u
/* MAIN: RXTX F_REG RX_PD TX_PD FS_PD CORE_PD BIAS_PD RESET_N */
#define MAIN_RX 0x11u        /* RX on frequency A, synthesizer, core and bias on */
#define MAIN_TX 0xE1u        /* TX on frequency B */
#define MAIN_RESET 0x3Au     /* core on, everything else down, RESET_N low */
#define MAIN_CORE_ON 0x3Bu   /* crystal running, bias off */
#define MAIN_BIAS_ON 0x39u
#define MAIN_POWER_DOWN 0x3Fu

/*
 * Presets: registers 0x01..0x12 in address order, then the TX CURRENT value.
 * 433.002 MHz and 915.998 MHz channels, 38.4 kbaud Manchester (19.2 kbit/s),
 * the settings TinyOS 1.x shipped for the Mica2 (CC1000Const.h), except LOCK:
 * LOCK_SELECT = 1 puts "PLL locked" (continuous) on CHP_OUT for the
 * calibration check instead of TinyOS's Manchester-violation flag.
 */
#define PRESET_LEN 19u
#ifdef CC1000_915MHZ
static const uint8_t PRESET[PRESET_LEN] PROGMEM = {
    0x7C, 0x00, 0x00, 0x7B, 0xF9, 0xAE, 0x02, 0x38, 0x8C, 0x32,
    0x80, 0x40, 0x10, 0x26, 0xA1, 0x6B, 0x55, 0x10, 0xF3};
#else
static const uint8_t PRESET[PRESET_LEN] PROGMEM = {
    0x58, 0x00, 0x00, 0x57, 0xF6, 0x85, 0x03, 0x55, 0x44, 0x02,
    0x0F, 0x60, 0x10, 0x26, 0x1C, 0x6B, 0x55, 0x70, 0x81};
#endif
#define PRESET_RX_CURRENT (R_CURRENT - R_FREQ_2A)
#define PRESET_PA_POW (R_PA_POW - R_FREQ_2A)
#define PRESET_TX_CURRENT 18u

#define PREAMBLE_LEN 28u     /* data frames, as TinyOS 1.x and the emulator (28 + 2 sync) */
#define ACK_PREAMBLE_LEN 6u
#define FLUSH_LEN 2u         /* receivers at a bit offset need the byte after the CRC */
#define PREAMBLE_MIN 2u      /* alternating bytes in a row before looking for the sync word */
#define SYNC_TRIES 3u        /* non-preamble bytes searched for the sync word */
#define SYNC_WORD 0x33CCu
#define ACK_0 0xABu
#define ACK_1 0xBAu
#define INITIAL_BACKOFF_MASK 31u     /* 1..32 byte times, as medium.c */
#define CONGESTION_BACKOFF_MASK 15u  /* 1..16 */
#define MAX_BACKOFFS 32u             /* MEDIUM_MAX_BACKOFFS */
#define ACK_DEADLINE (CC1000_ACK_WAIT_BYTES - 16u) /* ack's 10 bytes + air and turnaround */
#define FLOOR_EVERY 64u              /* idle byte times between noise samples (27 ms) */
#define FLOOR_N 5u
#define FLOOR_REJECTS 8u             /* carrier-like samples in a row taken as the new floor */
#define FLOOR_INIT 288u              /* first guess, ADC counts (TinyOS's squelch init) */
#define CLEAR_MARGIN 24u             /* ADC counts: ~70 mV at 3 V, ~3.6 dB of RSSI */
#define DB_PER_20_COUNTS 3           /* the same slope: 0.15 dB a count */
#define NO_SAMPLE 0xFFFFu
#define CAL_POLLS 400u               /* x 100 us: 40 ms per calibration at most */
#define ADC_PRESCALE (_BV(ADPS2) | _BV(ADPS1)) /* /64: 115 kHz at 7.37 MHz, 62 kHz at 4 MHz */

enum { ST_OFF, ST_HUNT, ST_SYNC, ST_DATA, ST_HOLD, ST_TX };
enum { TXP_NONE, TXP_BACKOFF, TXP_ON_AIR, TXP_ACKWAIT };
enum { KIND_DATA, KIND_ACK };
/* flags shared with the main loop */
#define F_RX_READY 0x01u
#define F_FS_PENDING 0x02u
#define F_FS_BUSY 0x04u
#define F_SEND_DONE 0x08u
#define F_ACKED 0x10u
#define F_ACK_REQ 0x20u
#define F_ABANDONED 0x40u /* the send gave up on a busy channel */

typedef struct radio {
    volatile uint8_t state;
    volatile uint8_t flags;
    uint8_t tx_phase;
    uint8_t tx_kind;
    uint8_t pre;      /* alternating bytes heard in a row */
    uint8_t tries;    /* SYNC: non-preamble bytes without the sync word */
    uint8_t shift;    /* bit offset of the sync word in the byte stream */
    uint8_t prev;     /* last raw byte */
    uint16_t win;     /* raw bytes before `prev`, for the sync search */
    uint8_t idx;      /* RX: bytes stored; TX: bytes written to SPDR */
    uint8_t total;    /* RX: header + data bytes expected */
    uint8_t stretch;  /* preamble bytes added while frame_start runs */
    uint8_t hold;     /* byte times since the held frame ended */
    uint8_t backoff;
    uint8_t polls;
    uint8_t ackwait;
    uint8_t floor_tick;
    uint8_t floor_i;
    uint8_t floor_rejects;
    uint8_t rx_len;
    int8_t rx_snr;    /* dB the held frame stood over the floor, at its sync word; 0 unknown */
    uint8_t tx_len;
    uint16_t crc;
    uint16_t rx_crc;
    uint16_t floor_est;
    uint16_t rng;
    uint16_t floor[FLOOR_N];
    cc1000_stats stats;
    uint8_t rx_buf[CC1000_MSG_MAX];
    uint8_t tx_buf[CC1000_MSG_MAX];
} radio;

static radio r;

/* ---- configuration port ------------------------------------------------ */

static void put_bit(uint8_t one)
{
    if (one) {
        PORTD |= _BV(PDATA_BIT);
    } else {
        PORTD &= (uint8_t)~_BV(PDATA_BIT);
    }
    PORTD &= (uint8_t)~_BV(PCLK_BIT); /* the chip samples PDATA on this edge */
    PORTD |= _BV(PCLK_BIT);
}

static void put_byte(uint8_t v)
{
    uint8_t i;
    for (i = 0; i < 8u; i++) {
        put_bit(v & 0x80u);
        v = (uint8_t)(v << 1);
    }
}

/* Callers in the main loop hold interrupts off: the ISR writes registers too. */
static void reg_write(uint8_t addr, uint8_t data)
{
    PORTD &= (uint8_t)~_BV(PALE_BIT);
    put_byte((uint8_t)(addr << 1 | 1u)); /* R/W = 1: write */
    PORTD |= _BV(PALE_BIT);
    put_byte(data);
    PORTD |= _BV(PDATA_BIT);
}

static uint8_t reg_read(uint8_t addr)
{
    uint8_t i, v = 0;
    PORTD &= (uint8_t)~_BV(PALE_BIT);
    put_byte((uint8_t)(addr << 1)); /* R/W = 0: read */
    DDRD &= (uint8_t)~_BV(PDATA_BIT);
    PORTD &= (uint8_t)~_BV(PDATA_BIT);
    PORTD |= _BV(PALE_BIT);
    for (i = 0; i < 8u; i++) {
        PORTD &= (uint8_t)~_BV(PCLK_BIT); /* the chip drives the next bit */
        __asm__ __volatile__("nop\n\tnop"); /* the pin synchroniser's 1.5 cycles */
        v = (uint8_t)(v << 1 | ((PIND >> PDATA_BIT) & 1u));
        PORTD |= _BV(PCLK_BIT);
    }
    PORTD |= _BV(PDATA_BIT);
    DDRD |= _BV(PDATA_BIT);
    return v;
}

static uint8_t preset(uint8_t i)
{
    return pgm_read_byte(&PRESET[i]);
}

static void rx_mode(void)
{
    reg_write(R_CURRENT, preset(PRESET_RX_CURRENT));
    reg_write(R_MAIN, MAIN_RX);
    DDRB &= (uint8_t)~_BV(MISO_BIT);
}

static void tx_mode(void)
{
    reg_write(R_MAIN, MAIN_TX);
    reg_write(R_CURRENT, preset(PRESET_TX_CURRENT));
    reg_write(R_PA_POW, preset(PRESET_PA_POW));
    DDRB |= _BV(MISO_BIT);
}

/* Datasheet calibration: CAL_START, wait for CAL_COMPLETE, CAL_START off. */
static void calibrate(void)
{
    uint16_t n;
    reg_write(R_CAL, CAL_START | CAL_WAIT | CAL_ITERATE);
    for (n = 0; n < CAL_POLLS; n++) {
        if (reg_read(R_CAL) & CAL_COMPLETE) {
            break;
        }
        _delay_us(100);
    }
    if (n == CAL_POLLS) {
        r.stats.cal_timeouts++;
    }
    reg_write(R_CAL, CAL_WAIT | CAL_ITERATE);
}

/* ---- helpers shared by ISR and main loop --------------------------------- */

static uint16_t rand16(void)
{
    uint16_t x = r.rng;
    x ^= (uint16_t)(x << 7);
    x ^= (uint16_t)(x >> 9);
    x ^= (uint16_t)(x << 8);
    r.rng = x;
    return x;
}

/*
 * One RSSI conversion on ADC0, NO_SAMPLE if adc.c has one running. ADIE is
 * off during ours so adc.c's handler never sees it; ADCSRA and ADMUX come
 * back as they were, with our ADIF cleared (written 1). ADIF is not used as
 * "adc.c has a result unread": simavr 1.6 stores a written 1 instead of
 * clearing the flag, which would lock RSSI out for good. The one window
 * left, between adc.c seeing ADSC fall and reading ADC, is a few cycles.
 */
static uint16_t rssi_read(void)
{
    uint8_t sra = ADCSRA, mux = ADMUX;
    uint16_t v;
    if (sra & _BV(ADSC)) {
        return NO_SAMPLE;
    }
    ADMUX = (uint8_t)(mux & (_BV(REFS1) | _BV(REFS0)));
    if (sra & _BV(ADEN)) {
        ADCSRA = (uint8_t)((sra & ~_BV(ADIE)) | _BV(ADSC));
    } else {
        ADCSRA = (uint8_t)(_BV(ADEN) | _BV(ADSC) | ADC_PRESCALE);
    }
    while (ADCSRA & _BV(ADSC)) {
    }
    v = ADC;
    ADMUX = mux;
    ADCSRA = (uint8_t)(sra | _BV(ADIF));
    return v;
}

/* A sample of the channel as CSMA and the floor take it: its low bits are real noise on
 * a mote, and stir the backoff generator. */
static uint16_t rssi_sample(void)
{
    uint16_t v = rssi_read();
    if (v != NO_SAMPLE)
        r.rng ^= v;
    return v;
}

static void floor_update(uint16_t s)
{
    uint16_t sorted[FLOOR_N];
    uint8_t i, j;
    r.floor[r.floor_i] = s;
    r.floor_i = (uint8_t)((r.floor_i + 1u) % FLOOR_N);
    for (i = 0; i < FLOOR_N; i++) {
        uint16_t v = r.floor[i];
        for (j = i; j > 0 && sorted[j - 1u] > v; j--) {
            sorted[j] = sorted[j - 1u];
        }
        sorted[j] = v;
    }
    /* A carrier only ever lowers the reading, so the floor is near the top of
     * the idle samples: the second highest ignores one noise spike, and up to
     * three samples that caught an undecodable frame cannot drag it down. */
    r.floor_est = sorted[FLOOR_N - 2u];
}

/* ---- byte machine (SPI interrupt) -------------------------------------- */

static void send_done(uint8_t acked)
{
    r.tx_phase = TXP_NONE;
    r.flags |= (uint8_t)(F_SEND_DONE | (acked ? F_ACKED : 0u));
    if (acked) {
        r.stats.tx_acked++;
    }
}

static void hunt(void)
{
    r.state = ST_HUNT;
    r.pre = 0;
}

static void start_tx(uint8_t kind)
{
    SPDR = 0xAA; /* shifted out by the chip's next 8 clocks */
    tx_mode();
    r.tx_kind = kind;
    r.idx = 1;
    r.stretch = 0;
    r.crc = CRC16_INIT;
    r.state = ST_TX;
    if (kind == KIND_DATA) {
        r.tx_phase = TXP_ON_AIR;
        r.flags |= F_FS_PENDING;
        r.stats.tx_frames++;
    }
}

static void tx_finished(void)
{
    rx_mode();
    hunt();
    if (r.tx_kind == KIND_ACK) {
        r.stats.acks_sent++;
    } else if (r.tx_buf[0] == 0xFFu && r.tx_buf[1] == 0xFFu) {
        send_done(0); /* broadcasts are never acked */
    } else {
        r.tx_phase = TXP_ACKWAIT;
        r.ackwait = CC1000_ACK_WAIT_BYTES;
    }
}

static uint8_t frame_byte(uint8_t j)
{
    uint8_t b;
    if (r.tx_kind == KIND_ACK) {
        return j == 0 ? ACK_0 : ACK_1;
    }
    if (j < r.tx_len) {
        b = r.tx_buf[j];
        r.crc = crc16_update(r.crc, b);
        return b;
    }
    return j == r.tx_len ? (uint8_t)r.crc : (uint8_t)(r.crc >> 8);
}

static void tx_byte(void)
{
    uint8_t pre = r.tx_kind == KIND_DATA ? PREAMBLE_LEN : ACK_PREAMBLE_LEN;
    uint8_t body = r.tx_kind == KIND_DATA ? (uint8_t)(r.tx_len + 2u) : 2u;
    uint8_t p = r.idx;
    uint8_t b;
    if (p < pre) {
        b = 0xAA;
    } else if (p == pre) {
        /* the core is stamping the frame: hold the payload back a little */
        if ((r.flags & F_FS_BUSY) && r.stretch < 8u) {
            r.stretch++;
            SPDR = 0xAA;
            return;
        }
        r.flags &= (uint8_t)~F_FS_PENDING; /* too late for the stamp: skip it */
        b = (uint8_t)(SYNC_WORD >> 8);
    } else if (p == pre + 1u) {
        b = (uint8_t)SYNC_WORD;
    } else if (p < pre + 2u + body) {
        b = frame_byte((uint8_t)(p - pre - 2u));
    } else if (p < pre + 2u + body + FLUSH_LEN) {
        b = 0xAA;
    } else {
        tx_finished();
        return;
    }
    SPDR = b;
    r.idx = (uint8_t)(p + 1u);
}

/* An idle byte time: noise floor and the pending send's backoff. */
static void idle_byte(void)
{
    uint16_t s;
    if (r.tx_phase == TXP_NONE || r.tx_phase == TXP_ACKWAIT) {
        if (r.pre == 0 && ++r.floor_tick >= FLOOR_EVERY) {
            s = rssi_sample();
            if (s != NO_SAMPLE) {
                r.floor_tick = 0;
                /* a carrier we could not decode (we were sending when its
                 * preamble went by) is not noise; a floor that really rose
                 * gets in after FLOOR_REJECTS samples in a row */
                if (s + CLEAR_MARGIN > r.floor_est || ++r.floor_rejects >= FLOOR_REJECTS) {
                    r.floor_rejects = 0;
                    floor_update(s);
                }
            }
        }
        return;
    }
    if (r.tx_phase != TXP_BACKOFF || --r.backoff != 0) {
        return;
    }
    s = r.pre == 0 ? rssi_sample() : 0u;
    if (s == NO_SAMPLE) {
        r.backoff = 1; /* ADC in use: sense on the next byte */
    } else if (s + CLEAR_MARGIN > r.floor_est) {
        start_tx(KIND_DATA);
    } else {
        r.stats.busy_polls++;
        if (++r.polls >= MAX_BACKOFFS) {
            r.stats.gave_up++;
            r.flags |= F_ABANDONED;
            send_done(0);
        } else {
            r.backoff = (uint8_t)(1u + (rand16() & CONGESTION_BACKOFF_MASK));
        }
    }
}

/* RSSI sample s against the idle floor, in dB (hal.h rx_snr_db): at least 1, or 0
 * when the ADC was busy. The voltage falls as the signal grows. */
static int8_t snr_of(uint16_t s)
{
    uint16_t db;
    if (s == NO_SAMPLE)
        return 0;
    db = s < r.floor_est ? (uint16_t)((r.floor_est - s) * DB_PER_20_COUNTS / 20u) : 0u;
    return (int8_t)(db < 1u ? 1u : db > 127u ? 127u : db);
}

static void sync_byte(uint8_t in)
{
    uint8_t off;
    uint32_t w = (uint32_t)r.win << 16 | (uint32_t)r.prev << 8 | in;
    for (off = 0; off < 8u; off++) {
        if ((uint16_t)(w >> off) == SYNC_WORD) {
            r.rx_snr = snr_of(rssi_read()); /* the sender's carrier, not noise */
            r.shift = off;
            r.state = ST_DATA;
            r.idx = 0;
            r.total = 5;
            r.crc = CRC16_INIT;
            break;
        }
    }
    r.win = (uint16_t)(r.win << 8 | r.prev);
    if (r.state == ST_SYNC && in != 0xAAu && in != 0x55u && ++r.tries >= SYNC_TRIES) {
        hunt();
    }
}

static void frame_end(void)
{
    if (r.crc == r.rx_crc) {
        r.stats.rx_ok++;
        r.rx_len = r.total;
        r.hold = 0;
        r.state = ST_HOLD;
        r.flags |= F_RX_READY;
    } else {
        r.stats.rx_crc_fail++;
        hunt();
    }
}

static void data_byte(uint8_t in)
{
    uint8_t b = (uint8_t)((uint16_t)((uint16_t)r.prev << 8 | in) >> r.shift);
    uint8_t i = r.idx;
    if (r.tx_phase == TXP_ACKWAIT) {
        if (i == 1) {
            if (b == ACK_1) {
                send_done(1);
            }
            hunt();
            return;
        }
        if (b == ACK_0) {
            r.idx = 1;
            return;
        }
        /* a data frame instead of our ack: nobody is acking, take the frame */
        send_done(0);
    }
    if (i < r.total) {
        if (i == 4u) {
            if (b > CC1000_MSG_MAX - 5u) {
                r.stats.rx_crc_fail++; /* a corrupt length */
                hunt();
                return;
            }
            r.total = (uint8_t)(5u + b);
        } else if (i == 1u && r.rx_buf[0] == ACK_0 && b == ACK_1) {
            hunt(); /* somebody else's ack */
            return;
        }
        r.rx_buf[i] = b;
        r.crc = crc16_update(r.crc, b);
    } else if (i == r.total) {
        r.rx_crc = b;
    } else {
        r.rx_crc |= (uint16_t)b << 8;
        frame_end();
        return;
    }
    r.idx = (uint8_t)(i + 1u);
}

ISR(SPI_STC_vect)
{
    uint8_t in = SPDR; /* once: reading hands the byte over */
    uint8_t st = r.state;
    if (r.tx_phase == TXP_ACKWAIT && st != ST_TX && --r.ackwait == 0) {
        send_done(0);
        hunt();
        return;
    }
    switch (st) {
    case ST_HUNT:
        if (in == 0xAAu || in == 0x55u) {
            if (++r.pre >= PREAMBLE_MIN) {
                r.state = ST_SYNC;
                r.tries = 0;
                r.win = 0;
            }
        } else {
            r.pre = 0;
        }
        if (r.state == ST_HUNT) {
            idle_byte();
        }
        break;
    case ST_SYNC:
        sync_byte(in);
        break;
    case ST_DATA:
        data_byte(in);
        break;
    case ST_HOLD:
        if (r.hold < 255u) {
            r.hold++;
        }
        if (r.flags & F_ACK_REQ) {
            r.flags &= (uint8_t)~F_ACK_REQ;
            start_tx(KIND_ACK);
        }
        break;
    case ST_TX:
        tx_byte();
        break;
    default:
        break;
    }
    r.prev = in;
}

/* ---- main-loop API ----------------------------------------------------- */

/* Interrupts off, and back to what the caller had (it may run with them off). */
static uint8_t lock(void)
{
    uint8_t s = SREG;
    cli();
    return s;
}

static void spi_on(void)
{
    uint8_t junk;
    SPCR = (uint8_t)(_BV(SPIE) | _BV(SPE)); /* slave, mode 0, MSB first */
    junk = SPSR;
    junk = SPDR;
    (void)junk;
}

void cc1000_init(void)
{
    uint8_t sreg;
    uint8_t i;
    sreg = lock();
    DDRD |= (uint8_t)(_BV(PALE_BIT) | _BV(PCLK_BIT) | _BV(PDATA_BIT));
    PORTD |= (uint8_t)(_BV(PALE_BIT) | _BV(PCLK_BIT) | _BV(PDATA_BIT));
    DDRB &= (uint8_t)~(_BV(PB1) | _BV(PB2) | _BV(MISO_BIT)); /* SCK, MOSI in: the chip clocks */
    reg_write(R_MAIN, MAIN_RESET);
    reg_write(R_MAIN, MAIN_CORE_ON);
    _delay_ms(2); /* crystal start-up */
    for (i = 0; i < PRESET_LEN - 1u; i++) {
        reg_write((uint8_t)(R_FREQ_2A + i), preset(i));
    }
    reg_write(R_FSCTRL, 0x01);    /* FS_RESET_N */
    reg_write(R_PRESCALER, 0x00);
    reg_write(R_TEST4, 0x3F);     /* loop filter for 38.4 kbaud */
    reg_write(R_PA_POW, 0x00);    /* no RF out while the PLL calibrates */
    reg_write(R_CURRENT, preset(PRESET_RX_CURRENT));
    reg_write(R_MAIN, MAIN_RX);
    calibrate();
    reg_write(R_MAIN, MAIN_TX);
    reg_write(R_CURRENT, preset(PRESET_TX_CURRENT));
    calibrate();
    rx_mode();
    reg_write(R_PA_POW, preset(PRESET_PA_POW));
    for (i = 0; i < FLOOR_N; i++) {
        r.floor[i] = FLOOR_INIT;
    }
    r.floor_est = FLOOR_INIT;
    r.rng = (uint16_t)(TOS_LOCAL_ADDRESS * 0x9E37u + 0x2F1Bu);
    if (r.rng == 0) {
        r.rng = 1;
    }
    hunt();
    spi_on();
    SREG = sreg;
}

void cc1000_listen(uint8_t on)
{
    uint8_t sreg;
    if (!on) {
        sreg = lock();
        if (r.state != ST_OFF) {
            SPCR = 0;
            if (r.tx_phase != TXP_NONE) {
                send_done(0);
            }
            r.flags &= (uint8_t)~(F_FS_PENDING | F_ACK_REQ);
            r.state = ST_OFF;
            reg_write(R_PA_POW, 0x00);
            reg_write(R_MAIN, MAIN_POWER_DOWN);
        }
        SREG = sreg;
        return;
    }
    if (r.state != ST_OFF) {
        return;
    }
    sreg = lock();
    reg_write(R_MAIN, MAIN_CORE_ON);
    SREG = sreg;
    _delay_ms(2);
    sreg = lock();
    reg_write(R_MAIN, MAIN_BIAS_ON);
    SREG = sreg;
    _delay_us(200);
    sreg = lock();
    rx_mode();
    reg_write(R_PA_POW, preset(PRESET_PA_POW));
    hunt();
    spi_on();
    SREG = sreg;
}

uint8_t cc1000_send(const uint8_t *tos_msg, uint8_t len)
{
    uint8_t sreg;
    uint8_t i, ok = 0;
    if (len < 5u || len > CC1000_MSG_MAX || (uint8_t)(5u + tos_msg[4]) > len) {
        return 0;
    }
    sreg = lock();
    if (r.state != ST_OFF && r.tx_phase == TXP_NONE && !(r.flags & F_SEND_DONE)) {
        for (i = 0; i < len; i++) {
            r.tx_buf[i] = tos_msg[i];
        }
        r.tx_len = (uint8_t)(5u + tos_msg[4]);
        r.polls = 0;
        r.backoff = (uint8_t)(1u + (rand16() & INITIAL_BACKOFF_MASK));
        r.tx_phase = TXP_BACKOFF;
        ok = 1;
    }
    SREG = sreg;
    return ok;
}

uint8_t cc1000_busy(void)
{
    return (uint8_t)(r.state != ST_OFF || r.flags != 0);
}

void cc1000_poll(void)
{
    uint8_t sreg;
    uint8_t go, ack;
    uint16_t addr;
    sreg = lock();
    go = (uint8_t)(r.flags & F_FS_PENDING);
    if (go) {
        r.flags = (uint8_t)((r.flags & ~F_FS_PENDING) | F_FS_BUSY);
    }
    SREG = sreg;
    if (go) {
        avr_radio_frame_start(r.tx_buf, r.tx_len);
        sreg = lock();
        r.flags &= (uint8_t)~F_FS_BUSY;
        SREG = sreg;
    }
    if (r.flags & F_RX_READY) {
        ack = avr_radio_received(r.rx_buf, r.rx_len);
        addr = (uint16_t)(r.rx_buf[0] | (uint16_t)r.rx_buf[1] << 8);
        sreg = lock();
        r.flags &= (uint8_t)~F_RX_READY;
        if (r.state == ST_HOLD) {
            if (ack && addr == TOS_LOCAL_ADDRESS && addr != 0xFFFFu && r.hold < ACK_DEADLINE) {
                r.flags |= F_ACK_REQ;
            } else {
                hunt();
            }
        }
        SREG = sreg;
    }
    if (r.flags & F_SEND_DONE) {
        sreg = lock();
        ack = (r.flags & F_ABANDONED) ? HAL_SEND_ABANDONED
              : (r.flags & F_ACKED)   ? HAL_SEND_ACKED
                                      : HAL_SEND_UNACKED;
        r.flags &= (uint8_t)~(F_SEND_DONE | F_ACKED | F_ABANDONED);
        SREG = sreg;
        avr_radio_send_done(ack);
    }
}

void cc1000_get_stats(cc1000_stats *out)
{
    uint8_t sreg;
    sreg = lock();
    *out = r.stats;
    SREG = sreg;
}

int8_t cc1000_rx_snr_db(void)
{
    return r.rx_snr; /* the held frame's: no new one is taken while it is held */
}

uint16_t cc1000_noise_floor(void)
{
    uint8_t sreg;
    uint16_t v;
    sreg = lock();
    v = r.floor_est;
    SREG = sreg;
    return v;
}
