/*
 * attrs.c - the firmware catalog (firmware/query/catalog.h) seen from the
 * emulator: attribute names for Python, and the per-sample energy and time
 * the HAL charges, so the cost figures live in one place only.
 */
#include <string.h>

#include "emu.h"
#include "firmware/query/catalog.h"
#include "sensors.h"

uint32_t emu_attr_id(const char *name)
{
    uint8_t wire[CATALOG_NAME_LEN] = {0};
    size_t n = strlen(name);
    if (n > CATALOG_NAME_LEN)
        return CATALOG_NULL_ATTR;
    memcpy(wire, name, n);
    return catalog_lookup(wire);
}

int emu_attr_is_sensor(uint32_t attr)
{
    return attr < CATALOG_COUNT && catalog_get((uint8_t)attr)->source == CATALOG_SRC_SENSOR;
}

void emu_attrs_default_costs(emu_sensors *s)
{
    uint8_t a;
    for (a = 0; a < CATALOG_COUNT && a < SENSORS_MAX_ATTRS; a++) {
        const catalog_entry *c = catalog_get(a);
        if (c->source == CATALOG_SRC_SENSOR)
            sensors_set_cost(s, a, (double)c->energy_nj * 1e-9, c->time_us);
    }
}
