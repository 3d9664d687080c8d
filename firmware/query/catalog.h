/*
 * catalog.h - the attributes a mote can sample, by fixed id.
 *
 * Queries name attributes (8-byte NUL-padded strings, matched
 * case-insensitively as in tos/lib/Attributes/Attr.nc); assembly maps each
 * name once to one of the ids below, and from then on only ids are used. The
 * ids are motebase's own (TinyDB never puts them on the wire) and are the
 * argument of hal.sensor_read(ctx, attr) for attributes marked
 * CATALOG_SRC_SENSOR; the other sources are answered by the core itself.
 *
 * Wire types follow wire-format §10.1/§10.2 and the Java catalog.xml, so a
 * tuple's field sizes agree with the gateway's decoder. Cost figures are the
 * per-sample energy and time of the paper's Table III (see catalog.c for
 * which are approximations).
 */
#ifndef MOTE_QUERY_CATALOG_H
#define MOTE_QUERY_CATALOG_H

#include <stdint.h>

enum catalog_attr {
    ATTR_NODEID = 0,
    ATTR_LIGHT = 1,
    ATTR_TEMP = 2,
    ATTR_PARENT = 3,
    ATTR_ACCEL_X = 4,
    ATTR_ACCEL_Y = 5,
    ATTR_MAG_X = 6,
    ATTR_MAG_Y = 7,
    ATTR_NOISE = 8,
    ATTR_VOLTAGE = 9,
    ATTR_FREERAM = 10,
    ATTR_QUAL = 11,
    ATTR_DEPTH = 12,
    ATTR_GROUP = 13,
    ATTR_TIMELO = 14,
    ATTR_TIMEHI = 15,
    CATALOG_COUNT = 16
};

/* A query field whose name this mote does not know: always NULL, 0 bytes. */
#define CATALOG_NULL_ATTR 0x80u

/* TOSType codes (wire-format §10.1). */
enum tos_type {
    TOS_TYPE_VOID = 0,
    TOS_TYPE_INT8 = 1,
    TOS_TYPE_UINT8 = 2,
    TOS_TYPE_INT16 = 3,
    TOS_TYPE_UINT16 = 4,
    TOS_TYPE_INT32 = 5,
    TOS_TYPE_UINT32 = 6,
    TOS_TYPE_TIMESTAMP = 7,
    TOS_TYPE_STRING = 8,
    TOS_TYPE_BYTES = 9
};

/* Where a value comes from. */
enum catalog_source {
    CATALOG_SRC_SENSOR = 0, /* hal.sensor_read(ctx, id) */
    CATALOG_SRC_NODE = 1    /* the core's own state (id, routing, clock, memory) */
};

#define CATALOG_NAME_LEN 8u

typedef struct catalog_entry {
    char name[CATALOG_NAME_LEN]; /* lower case, NUL padded */
    uint8_t type;                /* enum tos_type */
    uint8_t source;              /* enum catalog_source */
    uint8_t constant;            /* value never changes while the node runs */
    uint32_t energy_nj;          /* energy per sample, nanojoules */
    uint16_t time_us;            /* time per sample, microseconds */
    int32_t min, max;            /* value range (optimizer metadata) */
} catalog_entry;

/* Entry for a valid id (< CATALOG_COUNT). */
const catalog_entry *catalog_get(uint8_t attr);

/*
 * Look up an 8-byte, NUL-padded wire name (not necessarily terminated),
 * case-insensitively. Returns the id, or CATALOG_NULL_ATTR if unknown.
 */
uint8_t catalog_lookup(const uint8_t name[CATALOG_NAME_LEN]);

/* Bytes the attribute occupies in a tuple (0 for CATALOG_NULL_ATTR). */
uint8_t catalog_wire_size(uint8_t attr);

/* Size in bytes of a value of TOSType `type` in a tuple (§10.1). */
uint8_t tos_type_size(uint8_t type);

#endif /* MOTE_QUERY_CATALOG_H */
