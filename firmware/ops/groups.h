/*
 * groups.h - GROUP BY bookkeeping of one query: group number -> slot.
 *
 * A query's aggregate states are laid out as [expression][slot]; this table
 * says which group number each slot holds and which expressions have data in
 * it (bit e of `live`). Slots are few (GROUPS_MAX) so lookup is a linear scan.
 * When all slots are taken a slot whose expressions are all empty is reused
 * (TinyDB does the same after a failed realloc); otherwise the reading is
 * dropped and the caller counts it.
 */
#ifndef MOTE_OPS_GROUPS_H
#define MOTE_OPS_GROUPS_H

#include <stdint.h>

#define GROUPS_MAX 8u
#define GROUPS_NONE 0xFFu

typedef struct group_table {
    uint8_t cap;                /* slots usable by this query (1 without GROUP BY) */
    uint8_t count;              /* slots ever assigned */
    int16_t no[GROUPS_MAX];     /* group number per slot */
    uint16_t live[GROUPS_MAX];  /* bit e: expression e holds data in this slot */
} group_table;

void groups_reset(group_table *g, uint8_t cap);

/* Slot of group `no`, or GROUPS_NONE. */
uint8_t groups_find(const group_table *g, int16_t no);

/*
 * Slot of group `no`, assigning one if needed; *fresh is set to 1 when the
 * slot's states must be initialised. GROUPS_NONE if no slot is available.
 */
uint8_t groups_claim(group_table *g, int16_t no, uint8_t *fresh);

#endif /* MOTE_OPS_GROUPS_H */
