#include "adc.h"

#include <avr/io.h>
#include <util/delay.h>

#include "query/catalog.h"

#define CH_PHOTO_TEMP 1u
#define CH_MIC 2u
#define CH_ACCEL_X 3u
#define CH_ACCEL_Y 4u
#define CH_MAG_Y 5u
#define CH_MAG_X 6u
#define CH_BANDGAP 30u
#define CH_NONE 0xFFu

/* Sensor power: PHOTO_CTL PE5, TEMP_CTL PE6 (INT1/INT2 on the connector); MIC_CTL,
 * ACCEL_CTL, MAG_CTL on PW3..PW5 = PC3..PC5. */
#define PWR_E_MASK (_BV(PE5) | _BV(PE6))
#define PWR_C_MASK (_BV(PC3) | _BV(PC4) | _BV(PC5))
#define SENSOR_SETTLE_US 20u /* the photo/thermistor dividers settle in microseconds */

typedef struct adc_source {
    uint8_t channel;
    uint8_t pwr_e; /* PORTE bits to raise */
    uint8_t pwr_c; /* PORTC bits to raise */
} adc_source;

static adc_source source_of(uint8_t attr)
{
    adc_source s = {CH_NONE, 0, 0};
    switch (attr) {
    case ATTR_LIGHT:
        s.channel = CH_PHOTO_TEMP;
        s.pwr_e = _BV(PE5);
        break;
    case ATTR_TEMP:
        s.channel = CH_PHOTO_TEMP;
        s.pwr_e = _BV(PE6);
        break;
    case ATTR_NOISE:
        s.channel = CH_MIC;
        s.pwr_c = _BV(PC3);
        break;
    case ATTR_ACCEL_X:
    case ATTR_ACCEL_Y:
        s.channel = attr == ATTR_ACCEL_X ? CH_ACCEL_X : CH_ACCEL_Y;
        s.pwr_c = _BV(PC4);
        break;
    case ATTR_MAG_X:
    case ATTR_MAG_Y:
        s.channel = attr == ATTR_MAG_X ? CH_MAG_X : CH_MAG_Y;
        s.pwr_c = _BV(PC5);
        break;
    case ATTR_VOLTAGE:
        s.channel = CH_BANDGAP;
        break;
    default:
        break;
    }
    return s;
}

void adc_init(void)
{
    PORTE &= (uint8_t)~PWR_E_MASK;
    DDRE |= PWR_E_MASK;
    PORTC &= (uint8_t)~PWR_C_MASK;
    DDRC |= PWR_C_MASK;
    ADCSRA = 0; /* off between reads: it draws current even idle */
}

static uint16_t convert(uint8_t channel)
{
    uint16_t v;
    ADMUX = channel; /* REFS = 0: AREF */
    /* Prescaler 64: 115 kHz at 7.3728 MHz, 62.5 kHz at 4 MHz, inside 50..200 kHz. */
    ADCSRA = _BV(ADEN) | _BV(ADSC) | _BV(ADPS2) | _BV(ADPS1);
    while (ADCSRA & _BV(ADSC))
        ;
    v = ADCL;
    v |= (uint16_t)ADCH << 8;
    ADCSRA = 0;
    return v;
}

int16_t adc_read_attr(uint8_t attr)
{
    adc_source s = source_of(attr);
    uint16_t v;
    if (s.channel == CH_NONE)
        return 0;
    PORTE |= s.pwr_e;
    PORTC |= s.pwr_c;
    if (s.pwr_e | s.pwr_c)
        _delay_us(SENSOR_SETTLE_US);
    v = convert(s.channel);
    PORTE &= (uint8_t)~PWR_E_MASK;
    PORTC &= (uint8_t)~PWR_C_MASK;
    return (int16_t)v;
}
