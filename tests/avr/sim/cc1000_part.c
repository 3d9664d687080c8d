/* cc1000_part.c - see cc1000_part.h for the mechanism. */
#include "cc1000_part.h"

#include <string.h>

#include <simavr/avr_adc.h>
#include <simavr/avr_ioport.h>
#include <simavr/avr_spi.h>
#include <simavr/sim_cycle_timers.h>

enum { REG_MAIN = 0x00, REG_LOCK = 0x0D, REG_CAL = 0x0E };
enum { PH_IDLE, PH_ADDR, PH_WRITE, PH_READ };
#define MAIN_RXTX 0x80u
#define MAIN_F_REG 0x40u
#define MAIN_RX_PD 0x20u
#define MAIN_TX_PD 0x10u
#define MAIN_FS_PD 0x08u
#define MAIN_CORE_PD 0x04u
#define MAIN_BIAS_PD 0x02u
#define MAIN_RESET_N 0x01u
#define CAL_START 0x80u
#define CAL_COMPLETE 0x08u
#define SYNC_0 0x33u
#define SYNC_1 0xCCu
#define ACK_0 0xABu
#define ACK_1 0xBAu
#define HEADER_LEN 5u
#define DATA_MAX 49u /* the TOS_Msg payload limit on this air (firmware/net/mhop.h) */

void cc1000_air_init(cc1000_air *air)
{
    memset(air, 0, sizeof *air);
}

cc1000_wiring cc1000_mica2_wiring(void)
{
    cc1000_wiring w = {'D', 'D', 'D', 'A', 4, 6, 7, 6, 0};
    return w;
}

static uint8_t rand8(cc1000_part *p)
{
    p->rng ^= p->rng << 13;
    p->rng ^= p->rng >> 17;
    p->rng ^= p->rng << 5;
    return (uint8_t)(p->rng >> 11);
}

static int synth_on(const cc1000_part *p)
{
    uint8_t m = p->reg[REG_MAIN];
    return (m & MAIN_RESET_N) && !(m & (MAIN_CORE_PD | MAIN_BIAS_PD | MAIN_FS_PD));
}

static int locked(const cc1000_part *p)
{
    return synth_on(p) && !p->calibrating && p->calibrated[(p->reg[REG_MAIN] & MAIN_F_REG) ? 1 : 0];
}

int cc1000_part_mode(const cc1000_part *p)
{
    uint8_t m = p->reg[REG_MAIN];
    if (!locked(p))
        return 0;
    if (m & MAIN_RXTX)
        return (m & MAIN_TX_PD) ? 0 : 2;
    return (m & MAIN_RX_PD) ? 0 : 1;
}

static void update_chp(cc1000_part *p)
{
    uint8_t lock_select = p->reg[REG_LOCK] >> 4;
    avr_raise_irq(p->chp_irq, lock_select == 1 && locked(p));
}

static avr_cycle_count_t cal_done(avr_t *avr, avr_cycle_count_t when, void *param)
{
    cc1000_part *p = param;
    (void)avr;
    (void)when;
    p->calibrating = 0;
    p->calibrated[p->cal_freg] = 1;
    p->reg[REG_CAL] |= CAL_COMPLETE;
    update_chp(p);
    return 0;
}

static void reg_store(cc1000_part *p, uint8_t addr, uint8_t v)
{
    p->cnt.reg_writes++;
    if (addr >= CC1000_PART_NREG)
        return;
    if (addr == REG_MAIN && !(v & MAIN_RESET_N)) {
        memset(p->reg, 0, sizeof p->reg);
        p->calibrated[0] = p->calibrated[1] = 0;
        if (p->calibrating)
            avr_cycle_timer_cancel(p->avr, cal_done, p);
        p->calibrating = 0;
    }
    if (addr == REG_CAL) {
        if ((v & CAL_START) && !p->calibrating && synth_on(p)) {
            p->calibrating = 1;
            p->cal_freg = (p->reg[REG_MAIN] & MAIN_F_REG) ? 1 : 0;
            p->calibrated[p->cal_freg] = 0;
            p->cnt.calibrations++;
            avr_cycle_timer_register_usec(p->avr, CC1000_PART_CAL_US, cal_done, p);
        } else if (!(v & CAL_START) && p->calibrating) {
            avr_cycle_timer_cancel(p->avr, cal_done, p); /* aborted */
            p->calibrating = 0;
        }
        v = (uint8_t)((v & ~CAL_COMPLETE) | (p->calibrating ? 0 : (p->reg[REG_CAL] & CAL_COMPLETE)));
        if (v & CAL_START && p->calibrating)
            v &= (uint8_t)~CAL_COMPLETE;
    }
    p->reg[addr] = v;
    update_chp(p);
}

static void drive_pdata(cc1000_part *p, uint8_t bit)
{
    p->driving = 1;
    avr_raise_irq(p->pdata_irq, bit);
    p->driving = 0;
}

static void on_pale(avr_irq_t *irq, uint32_t value, void *param)
{
    cc1000_part *p = param;
    uint8_t v = value & 1u;
    (void)irq;
    if (p->pale && !v) {
        p->phase = PH_ADDR;
        p->nbits = 0;
        p->shift = 0;
    } else if (!p->pale && v && p->phase == PH_ADDR) {
        if (p->nbits == 8) {
            p->addr = p->shift >> 1;
            p->phase = (p->shift & 1u) ? PH_WRITE : PH_READ;
            p->rd_val = p->addr < CC1000_PART_NREG ? p->reg[p->addr] : 0;
            if (p->phase == PH_READ)
                p->cnt.reg_reads++;
        } else {
            p->phase = PH_IDLE;
        }
        p->nbits = 0;
        p->shift = 0;
    }
    p->pale = v;
}

static void on_pclk(avr_irq_t *irq, uint32_t value, void *param)
{
    cc1000_part *p = param;
    uint8_t v = value & 1u;
    (void)irq;
    if (p->pclk && !v && p->nbits < 8) { /* falling edge */
        switch (p->phase) {
        case PH_ADDR:
            p->shift = (uint8_t)(p->shift << 1 | p->pdata);
            p->nbits++;
            break;
        case PH_WRITE:
            p->shift = (uint8_t)(p->shift << 1 | p->pdata);
            if (++p->nbits == 8) {
                reg_store(p, p->addr, p->shift);
                p->phase = PH_IDLE;
            }
            break;
        case PH_READ:
            drive_pdata(p, (p->rd_val >> (7 - p->nbits)) & 1u);
            if (++p->nbits == 8)
                p->phase = PH_IDLE;
            break;
        default:
            break;
        }
    }
    p->pclk = v;
}

static void on_pdata(avr_irq_t *irq, uint32_t value, void *param)
{
    cc1000_part *p = param;
    (void)irq;
    if (!p->driving)
        p->pdata = value & 1u;
}

static void on_spi_out(avr_irq_t *irq, uint32_t value, void *param)
{
    cc1000_part *p = param;
    (void)irq;
    p->spi_out = (uint8_t)value;
}

/* CRC-16/XMODEM: polynomial 0x1021, initial 0, MSB first (TinyOS 1.x crc.h). */
static uint16_t crc_xmodem(uint16_t crc, uint8_t b)
{
    unsigned i;
    crc ^= (uint16_t)b << 8;
    for (i = 0; i < 8u; i++)
        crc = (uint16_t)((crc & 0x8000u) ? (unsigned)crc << 1 ^ 0x1021u : (unsigned)crc << 1);
    return crc;
}

enum { FRAMED_NONE, FRAMED_DATA, FRAMED_ACK, FRAMED_BAD };

static int framer_body(cc1000_framer *f, uint8_t b)
{
    uint8_t i = f->idx++;
    if (i == 0)
        f->first = b;
    if (i == 1 && f->first == ACK_0 && b == ACK_1) {
        f->in_frame = 0;
        return FRAMED_ACK;
    }
    if (i == 4) {
        if (b > DATA_MAX) {
            f->in_frame = 0;
            return FRAMED_BAD;
        }
        f->total = (uint8_t)(HEADER_LEN + b);
    }
    if (i < f->total) {
        f->crc = crc_xmodem(f->crc, b);
    } else if (i == f->total) {
        f->got_crc = b;
    } else {
        f->in_frame = 0;
        return (uint16_t)(f->got_crc | b << 8) == f->crc ? FRAMED_DATA : FRAMED_BAD;
    }
    return FRAMED_NONE;
}

/* One byte at the senders' boundaries; what it completed, if anything. */
static int framer_feed(cc1000_framer *f, uint8_t b)
{
    int done = FRAMED_NONE;
    if (f->in_frame) {
        done = framer_body(f, b);
    } else if (b == SYNC_1 && f->prev == SYNC_0 && f->pre >= 2u) {
        f->in_frame = 1;
        f->idx = 0;
        f->total = HEADER_LEN;
        f->crc = 0;
    } else if (b == 0xAAu || b == 0x55u) {
        f->pre = (uint8_t)(f->pre < 255u ? f->pre + 1u : f->pre);
    } else if (b != SYNC_0) {
        f->pre = 0;
    }
    if (f->in_frame == 0 && done != FRAMED_NONE)
        f->pre = 0;
    f->prev = b;
    return done;
}

static void count_tx(cc1000_part *p, uint8_t b)
{
    int done = framer_feed(&p->tx_framer, b);
    p->cnt.frames_tx += done == FRAMED_DATA;
    p->cnt.acks_tx += done == FRAMED_ACK;
}

static void count_rx(cc1000_part *p, uint8_t b)
{
    int done = framer_feed(&p->rx_framer, b);
    p->cnt.frames_rx += done == FRAMED_DATA;
    p->cnt.acks_rx += done == FRAMED_ACK;
    p->cnt.bad_frames_rx += done == FRAMED_BAD;
}

/* What this part hears at tick t: count of other senders, and the byte. */
static uint32_t air_hear(cc1000_part *p, uint64_t t, uint8_t *out)
{
    cc1000_air *air = p->air;
    uint32_t k, senders = 0;
    uint8_t b = 0;
    for (k = 0; k < air->n; k++) {
        if (k == p->node || air->slot_tick[k][t % CC1000_AIR_HIST] != t + 1)
            continue;
        b ^= air->slot_byte[k][t % CC1000_AIR_HIST];
        senders++;
    }
    if (senders == 0)
        b = rand8(p);
    else if (senders > 1)
        b ^= (uint8_t)(rand8(p) | 1u);
    *out = b;
    return senders;
}

/* Whether another part sends at tick n (or, with `recent`, at n - 1): RSSI
 * follows the carrier within a byte, unlike the decoded bytes. */
static int carrier(const cc1000_part *p, uint64_t n, int recent)
{
    const cc1000_air *air = p->air;
    uint32_t k;
    for (k = 0; k < air->n; k++) {
        const uint64_t *t = air->slot_tick[k];
        if (k != p->node && (t[n % CC1000_AIR_HIST] == n + 1 ||
                             (recent && t[(n - 1) % CC1000_AIR_HIST] == n)))
            return 1;
    }
    return 0;
}

static uint32_t rssi_mv(double dbm)
{
    double v = (-49.2 - dbm) / 51.3;
    return v <= 0.0 ? 0u : (uint32_t)(v * 1000.0);
}

static avr_cycle_count_t tick_cycle(const avr_t *avr, uint64_t n)
{
    return (avr_cycle_count_t)(n * 8u * (uint64_t)avr->frequency / CC1000_PART_BIT_RATE);
}

static avr_cycle_count_t on_tick(avr_t *avr, avr_cycle_count_t when, void *param)
{
    cc1000_part *p = param;
    uint64_t n = ++p->tick;
    int mode = cc1000_part_mode(p);
    uint8_t heard = 0, rx;
    uint32_t senders = 0;
    (void)when;
    if (n > CC1000_AIR_DELAY)
        senders = air_hear(p, n - CC1000_AIR_DELAY, &heard);
    else
        heard = rand8(p);
    if (mode == 2) {
        p->spi_out = 0;
        avr_raise_irq(p->spi_in_irq, 0); /* simavr answers with SPDR on SPI_IRQ_OUTPUT */
        if (carrier(p, n, 0))
            p->air->overlap_bytes++;
        p->air->slot_tick[p->node][n % CC1000_AIR_HIST] = n + 1;
        p->air->slot_byte[p->node][n % CC1000_AIR_HIST] = p->spi_out;
        p->cnt.bytes_tx++;
        count_tx(p, p->spi_out);
    } else if (mode == 1) {
        rx = p->bit_offset ? (uint8_t)(p->rx_prev << p->bit_offset | heard >> (8 - p->bit_offset))
                           : heard;
        p->cnt.bytes_rx++;
        if (senders > 1)
            p->cnt.collided_rx++;
        avr_raise_irq(p->spi_in_irq, rx);
        count_rx(p, heard);
    }
    if (mode != 2)
        memset(&p->tx_framer, 0, sizeof p->tx_framer);
    if (mode != 1)
        memset(&p->rx_framer, 0, sizeof p->rx_framer);
    p->rx_prev = heard;
    avr_raise_irq(p->rssi_irq, mode == 1 && carrier(p, n, 1) ? rssi_mv(p->signal_dbm)
                                                    : rssi_mv(p->noise_dbm) + (rand8(p) & 7u));
    return tick_cycle(avr, n + 1);
}

static avr_irq_t *pin(avr_t *avr, char port, uint8_t bit)
{
    return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit);
}

int cc1000_part_init(cc1000_part *p, avr_t *avr, cc1000_air *air, cc1000_wiring w,
                     uint8_t bit_offset, uint32_t seed)
{
    if (air->n >= CC1000_AIR_MAX)
        return -1;
    memset(p, 0, sizeof *p);
    p->avr = avr;
    p->air = air;
    p->node = air->n++;
    p->bit_offset = (uint8_t)(bit_offset & 7u);
    p->signal_dbm = -60.0;
    p->noise_dbm = -100.0;
    p->w = w;
    p->rng = seed ? seed : 0x1234567u;
    p->reg[REG_MAIN] = 0x3E; /* powered down, in reset */
    p->pale = p->pclk = p->pdata = 1;
    p->pdata_irq = pin(avr, w.pdata_port, w.pdata_bit);
    p->chp_irq = pin(avr, w.chp_port, w.chp_bit);
    p->spi_in_irq = avr_io_getirq(avr, AVR_IOCTL_SPI_GETIRQ(0), SPI_IRQ_INPUT);
    p->rssi_irq = avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + w.rssi_adc);
    if (!p->pdata_irq || !p->chp_irq || !p->spi_in_irq || !p->rssi_irq)
        return -1;
    avr_irq_register_notify(pin(avr, w.pale_port, w.pale_bit), on_pale, p);
    avr_irq_register_notify(pin(avr, w.pclk_port, w.pclk_bit), on_pclk, p);
    avr_irq_register_notify(p->pdata_irq, on_pdata, p);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_SPI_GETIRQ(0), SPI_IRQ_OUTPUT), on_spi_out, p);
    avr_raise_irq(p->rssi_irq, rssi_mv(p->noise_dbm));
    avr_cycle_timer_register(avr, tick_cycle(avr, 1) - avr->cycle, on_tick, p);
    return 0;
}
