#include "crc16.h"

uint16_t crc16_update(uint16_t crc, uint8_t byte)
{
    uint8_t bit;

    crc = (uint16_t)(crc ^ (uint16_t)byte << 8);
    for (bit = 0; bit < 8; bit++) {
        if (crc & 0x8000u) {
            crc = (uint16_t)(crc << 1 ^ 0x1021u);
        } else {
            crc = (uint16_t)(crc << 1);
        }
    }
    return crc;
}

uint16_t crc16_block(uint16_t crc, const uint8_t *bytes, uint16_t len)
{
    uint16_t i;

    for (i = 0; i < len; i++) {
        crc = crc16_update(crc, bytes[i]);
    }
    return crc;
}
