#include "hal_avr.h"

#include "adc.h"
#include "cc1000.h"
#include "leds.h"
#include "timer.h"
#include "uart.h"

#if !defined(MOTE_NO_OBSERVER) || !defined(MOTE_SELECTIVE_ACKS) || !defined(MOTE_NO_RX_STARTED) || \
    !defined(MOTE_HAS_RX_SNR)
#error "build with the facts this HAL fixes (firmware/avr/CMakeLists.txt)"
#endif

static mote_state *node;
static mote_hal hal;
static uint8_t radio_on;
static uint8_t uart_enabled;
static uint16_t lfsr;

static uint32_t now_ms(void *ctx)
{
    (void)ctx;
    return timer_now_ms();
}

static void set_alarm(void *ctx, uint32_t at_ms)
{
    (void)ctx;
    timer_set_alarm(at_ms);
}

static uint8_t radio_send(void *ctx, const uint8_t *tos_msg, uint8_t len)
{
    (void)ctx;
    return cc1000_send(tos_msg, len);
}

static void uart_send(void *ctx, const uint8_t *bytes, uint16_t len)
{
    (void)ctx;
    if (uart_enabled)
        uart_write(bytes, len);
}

static int16_t sensor_read(void *ctx, uint8_t attr)
{
    (void)ctx;
    return adc_read_attr(attr);
}

static void power(void *ctx, uint8_t part, uint8_t on)
{
    (void)ctx;
    if (part != MOTE_PWR_RADIO || on == radio_on)
        return; /* the CPU's sleep is the main loop's business */
    radio_on = on;
    cc1000_listen(on);
}

static void leds(void *ctx, uint8_t bits)
{
    (void)ctx;
    leds_set(bits);
}

/* Galois LFSR, taps 16 14 13 11: period 65535. Seeded by the node id so neighbours
 * booted together draw different backoffs and beacon phases. */
static uint16_t rand16(void *ctx)
{
    uint8_t i;
    (void)ctx;
    for (i = 0; i < 16u; i++)
        lfsr = (uint16_t)((lfsr >> 1) ^ (-(uint16_t)(lfsr & 1u) & 0xB400u));
    return lfsr;
}

static int8_t rx_snr_db(void *ctx)
{
    (void)ctx;
    return cc1000_rx_snr_db();
}

const mote_hal *hal_avr_bind(mote_state *st, uint16_t id, uint8_t uart_on)
{
    node = st;
    uart_enabled = uart_on;
    lfsr = (uint16_t)(id ^ 0xACE1u);
    if (lfsr == 0)
        lfsr = 0xACE1u;
    hal.ctx = 0;
    hal.now_ms = now_ms;
    hal.set_alarm = set_alarm;
    hal.radio_send = radio_send;
    hal.uart_send = uart_send;
    hal.sensor_read = sensor_read;
    hal.power = power;
    /* The next four are built in as well (firmware/avr/CMakeLists.txt, hal/hal.h): the
     * core reads them as constants, and must agree with what is set here. */
    hal.selective_acks = 1; /* the CC1000 driver acks only what avr_radio_received accepts */
    hal.leds = leds;
    hal.rand16 = rand16;
    hal.observe = 0;
    hal.rx_started_ms = 0;
    hal.rx_snr_db = rx_snr_db;
    radio_on = 1; /* cc1000_init leaves the receiver on */
    return &hal;
}

uint8_t hal_avr_radio_on(void)
{
    return radio_on;
}

void avr_radio_frame_start(uint8_t *tos_msg, uint8_t len)
{
    mote_on_frame_start(node, tos_msg, len);
}

uint8_t avr_radio_received(const uint8_t *tos_msg, uint8_t len)
{
    return mote_on_radio_rx(node, tos_msg, len);
}

void avr_radio_send_done(uint8_t acked)
{
    mote_on_send_done(node, acked);
}

uint16_t avr_radio_rx_started_ms(void)
{
    return (uint16_t)timer_now_ms();
}
