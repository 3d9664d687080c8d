/*
 * adc.h - the sensors: the MTS300 board's light, temperature and microphone,
 * the accelerometer and magnetometer, and the battery voltage.
 *
 * Mechanism: one blocking 10-bit conversion per read (the core reads sensors
 * synchronously, hal.h), against AREF as TinyOS 1.x's mica2 ADC did. A sensor's
 * power pin is raised for its read only: light and temperature share ADC1 and
 * are told apart by which of PE5 (PHOTO_CTL) and PE6 (TEMP_CTL) is high, as on
 * the MTS300 (TinyOS 1.x sensorboards/micasb). Voltage is the 1.23 V bandgap
 * measured against the supply (ADC channel 30): a raw reading that falls as the
 * battery rises, as TinyDB's `voltage` attribute reported it.
 * Values are returned raw (0..1023): the catalog's range for these attributes.
 */
#ifndef MOTE_AVR_ADC_H
#define MOTE_AVR_ADC_H

#include <stdint.h>

void adc_init(void);
/* attr: a catalog id (query/catalog.h); attributes without a sensor read 0. */
int16_t adc_read_attr(uint8_t attr);

#endif /* MOTE_AVR_ADC_H */
