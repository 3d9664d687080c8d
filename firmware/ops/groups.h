/*
 * groups.h - GROUP BY bookkeeping of one query: group number -> slot.
 *
 * A query's aggregate states are laid out as [expression][slot]; this table
 * says which group number each slot holds and which expressions have data in
 * it. It lives in bytes the caller provides -- the query's share of the state
 * arena (core/mote_state.h), sized by the memory free when the query starts --
 * GROUPS_SLOT_BYTES a slot: the group number (int16) and the expressions that
 * hold data in the slot (bit e of a uint16), little-endian, byte-addressed so
 * the table may sit at any offset. Lookup is a linear scan. When all slots are
 * taken a slot whose expressions are all empty is reused (TinyDB does the same
 * after a failed realloc); otherwise the caller is told (GROUPS_NONE).
 */
#ifndef MOTE_OPS_GROUPS_H
#define MOTE_OPS_GROUPS_H

#include <stdint.h>

#ifndef GROUPS_MAX
#define GROUPS_MAX 128u      /* slots a GROUP BY query asks for; fewer if memory is short */
#endif
#define GROUPS_SLOT_BYTES 4u
#define GROUPS_NONE 0xFFu

typedef struct group_table {
    uint8_t cap;   /* slots usable by this query (1 without GROUP BY) */
    uint8_t count; /* slots ever assigned */
} group_table;

/* `tab` holds cap x GROUPS_SLOT_BYTES bytes (cap <= GROUPS_MAX). */
void groups_reset(group_table *g, uint8_t *tab, uint8_t cap);

/* Slot of group `no`, or GROUPS_NONE. */
uint8_t groups_find(const group_table *g, const uint8_t *tab, int16_t no);

/*
 * Slot of group `no`, assigning one if needed; *fresh is set to 1 when the
 * slot's states must be initialised. GROUPS_NONE if no slot is available.
 */
uint8_t groups_claim(group_table *g, uint8_t *tab, int16_t no, uint8_t *fresh);

/* 1 if groups_claim would give `no` a slot (no side effects). */
uint8_t groups_has_room(const group_table *g, const uint8_t *tab, int16_t no);

/* Slot i's group number, and its expressions with data (bit e). */
int16_t groups_no(const uint8_t *tab, uint8_t i);
uint16_t groups_live(const uint8_t *tab, uint8_t i);
void groups_set_live(uint8_t *tab, uint8_t i, uint16_t live);

#endif /* MOTE_OPS_GROUPS_H */
