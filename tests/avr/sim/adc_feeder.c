#include "adc_feeder.h"

#include <string.h>

#include <simavr/avr_adc.h>
#include <simavr/sim_io.h>

#define PORTE_DATA_ADDR 0x23u /* I/O 0x03 */
#define PE5_PHOTO 0x20u
#define PE6_TEMP 0x40u
#define BANDGAP_MV 1230u

/* The smallest millivolt value simavr converts to `counts`: it computes mV * 1023 / vref. */
static uint32_t counts_to_mv(uint16_t counts)
{
    return ((uint32_t)counts * ADC_FEEDER_AREF_MV + 1022u) / 1023u;
}

static void on_conversion(struct avr_irq_t *irq, uint32_t value, void *param)
{
    adc_feeder_t *f = param;
    uint8_t pe = f->avr->data[PORTE_DATA_ADDR] & (PE5_PHOTO | PE6_TEMP);
    uint32_t mv = 0;
    (void)irq;
    (void)value;
    f->conversions++;
    if (pe == PE5_PHOTO) {
        mv = counts_to_mv(f->light);
        f->light_reads++;
    } else if (pe == PE6_TEMP) {
        mv = counts_to_mv(f->temp);
        f->temp_reads++;
    }
    avr_raise_irq(avr_io_getirq(f->avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC1), mv);
}

static avr_adc_t *find_adc(avr_t *avr)
{
    avr_io_t *io;
    for (io = avr->io_port; io; io = io->next)
        if (io->kind && strcmp(io->kind, "adc") == 0)
            return (avr_adc_t *)io; /* avr_adc_t begins with its avr_io_t */
    return NULL;
}

int adc_feeder_init(avr_t *avr, adc_feeder_t *f, uint16_t light, uint16_t temp)
{
    avr_adc_t *adc = find_adc(avr);
    unsigned i;
    if (!adc)
        return -1;
    f->avr = avr;
    f->light = light;
    f->temp = temp;
    f->conversions = f->light_reads = f->temp_reads = 0;
    for (i = 0; i < 8; i++) {
        adc->muxmode[i].kind = ADC_MUX_SINGLE;
        adc->muxmode[i].src = i;
    }
    adc->muxmode[30].kind = ADC_MUX_REF;
    adc->muxmode[30].src = BANDGAP_MV;
    adc->muxmode[31].kind = ADC_MUX_REF;
    adc->muxmode[31].src = 0;
    /* REFS1..0: 0 AREF, 1 AVCC, 3 internal 2.56 V (ATmega128 datasheet, ADMUX). */
    adc->ref_values[0] = ADC_VREF_AREF;
    adc->ref_values[1] = ADC_VREF_AVCC;
    adc->ref_values[3] = ADC_VREF_V256;
    avr->aref = avr->avcc = avr->vcc = ADC_FEEDER_AREF_MV;
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_OUT_TRIGGER),
                            on_conversion, f);
    return 0;
}
