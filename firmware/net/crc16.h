/*
 * crc16.h - the CRC of TinyOS 1.x serial frames.
 *
 * CRC-16/XMODEM: polynomial 0x1021, initial value 0, MSB first, no reflection,
 * no final XOR (tos/system/crc.h). Updated one byte at a time so a receiver can
 * run it while bytes arrive; no table, because on the ATmega128 a 512-byte
 * table would cost RAM or a flash-read per byte for little gain at 57600 baud.
 *
 * Check value: crc16_block(CRC16_INIT, "123456789", 9) == 0x31C3.
 */
#ifndef MOTE_NET_CRC16_H
#define MOTE_NET_CRC16_H

#include <stdint.h>

#define CRC16_INIT 0x0000u

uint16_t crc16_update(uint16_t crc, uint8_t byte);
uint16_t crc16_block(uint16_t crc, const uint8_t *bytes, uint16_t len);

#endif /* MOTE_NET_CRC16_H */
