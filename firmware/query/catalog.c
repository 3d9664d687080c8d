/*
 * catalog.c - built-in attribute table.
 *
 * Types: wire-format §10.2 (mote registrations) and catalog.xml (Java). Where
 * the two differ the Java catalog wins, because the gateway decodes tuples
 * with it (A10): freeram is UINT16 in both, qual/depth UINT8.
 *
 * Cost metadata: the per-sample energy and time of the paper's (TODS 2005)
 * Table III sensor classes, the same figures as the gateway's planner catalog
 * (gateway/data/catalog.json; tests/test_catalog_consistency.py keeps the two
 * equal). They are recalled approximations, not measurements: the optimizer
 * only needs their ratios, the emulator charges them as sensing energy.
 *   light, temp, microphone, battery voltage: 90 nJ, 0.9 ms (one ADC read);
 *   accelerometer (ADXL202): 4.8 uJ, 17.9 ms (start-up dominated);
 *   magnetometer (HMC1002): 259.5 uJ, 17.9 ms;
 *   attributes answered from the node's own state cost nothing.
 */
#include "catalog.h"

#define ADC_MAX 1023 /* 10-bit ADC of the ATmega128 */

static const catalog_entry CATALOG[CATALOG_COUNT] = {
    /* name     type              source             const  nJ      us     min  max */
    {"nodeid", TOS_TYPE_UINT16, CATALOG_SRC_NODE, 1, 0, 0, 0, 65535},
    {"light", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 90, 900, 0, ADC_MAX},
    {"temp", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 90, 900, 0, ADC_MAX},
    {"parent", TOS_TYPE_UINT16, CATALOG_SRC_NODE, 0, 0, 0, 0, 65535},
    {"accel_x", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 4800, 17900, 0, ADC_MAX},
    {"accel_y", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 4800, 17900, 0, ADC_MAX},
    {"mag_x", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 259500, 17900, 0, ADC_MAX},
    {"mag_y", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 259500, 17900, 0, ADC_MAX},
    {"noise", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 90, 900, 0, ADC_MAX},
    {"voltage", TOS_TYPE_UINT16, CATALOG_SRC_SENSOR, 0, 90, 900, 0, ADC_MAX},
    {"freeram", TOS_TYPE_UINT16, CATALOG_SRC_NODE, 0, 0, 0, 0, 4096},
    {"qual", TOS_TYPE_UINT8, CATALOG_SRC_NODE, 0, 0, 0, 0, 255},
    {"depth", TOS_TYPE_UINT8, CATALOG_SRC_NODE, 0, 0, 0, 0, 255},
    {"group", TOS_TYPE_UINT8, CATALOG_SRC_NODE, 1, 0, 0, 0, 255},
    {"timelo", TOS_TYPE_UINT32, CATALOG_SRC_NODE, 0, 0, 0, 0, 2147483647L},
    {"timehi", TOS_TYPE_UINT32, CATALOG_SRC_NODE, 0, 0, 0, 0, 2147483647L},
};

const catalog_entry *catalog_get(uint8_t attr) { return &CATALOG[attr]; }

static uint8_t ascii_lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

static uint8_t name_matches(const char *entry, const uint8_t *wire)
{
    uint8_t i;
    for (i = 0; i < CATALOG_NAME_LEN; i++) {
        uint8_t a = (uint8_t)entry[i];
        uint8_t b = ascii_lower(wire[i]);
        if (a != b)
            return 0;
        if (a == 0)
            return 1;
    }
    return 1; /* all 8 bytes used, no terminator: still a full match */
}

uint8_t catalog_lookup(const uint8_t name[CATALOG_NAME_LEN])
{
    uint8_t id;
    if (name[0] == 0)
        return CATALOG_NULL_ATTR;
    for (id = 0; id < CATALOG_COUNT; id++)
        if (name_matches(CATALOG[id].name, name))
            return id;
    return CATALOG_NULL_ATTR;
}

uint8_t tos_type_size(uint8_t type)
{
    switch (type) {
    case TOS_TYPE_INT8:
    case TOS_TYPE_UINT8:
        return 1;
    case TOS_TYPE_INT16:
    case TOS_TYPE_UINT16:
        return 2;
    case TOS_TYPE_INT32:
    case TOS_TYPE_UINT32:
    case TOS_TYPE_TIMESTAMP:
        return 4;
    case TOS_TYPE_STRING:
    case TOS_TYPE_BYTES:
        return 8;
    default:
        return 0;
    }
}

uint8_t catalog_wire_size(uint8_t attr)
{
    return attr < CATALOG_COUNT ? tos_type_size(CATALOG[attr].type) : 0;
}
