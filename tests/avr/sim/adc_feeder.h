/*
 * adc_feeder.h - the MTS300 sensor board as the ADC sees it.
 *
 * simavr's atmega128 declares no ADC multiplexer table, so every conversion
 * reads 0; the feeder fills it (single-ended ADC0..7, the 1.23 V bandgap on
 * channel 30, ground on 31) and the AREF reference. It then listens to the ADC's
 * conversion-start trigger and puts on ADC1 the light or the temperature value,
 * whichever sensor the firmware powered (PE5 PHOTO_CTL, PE6 TEMP_CTL; both or
 * neither: the rail floats, fed as 0 V). Values are given in ADC counts and fed
 * as the millivolts that convert back to exactly those counts.
 */
#ifndef MOTE_SIM_ADC_FEEDER_H
#define MOTE_SIM_ADC_FEEDER_H

#include <stdint.h>

#include <simavr/sim_avr.h>

#define ADC_FEEDER_AREF_MV 3000u /* two AA cells on the mica2, AREF tied to the supply */

typedef struct adc_feeder_t {
    avr_t *avr;
    uint16_t light, temp; /* ADC counts, 0..1023 */
    uint32_t conversions;
    uint32_t light_reads, temp_reads;
} adc_feeder_t;

/* 0 on success, -1 if the core has no ADC. */
int adc_feeder_init(avr_t *avr, adc_feeder_t *f, uint16_t light, uint16_t temp);

#endif /* MOTE_SIM_ADC_FEEDER_H */
