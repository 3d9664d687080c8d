#include "groups.h"

#include "../net/le16.h"

#define NO_AT(i) ((uint16_t)(i) * GROUPS_SLOT_BYTES)
#define LIVE_AT(i) (NO_AT(i) + 2u)

int16_t groups_no(const uint8_t *tab, uint8_t i)
{
    return le16_get_i(tab + NO_AT(i));
}

uint16_t groups_live(const uint8_t *tab, uint8_t i)
{
    return le16_get(tab + LIVE_AT(i));
}

void groups_set_live(uint8_t *tab, uint8_t i, uint16_t live)
{
    le16_put(tab + LIVE_AT(i), live);
}

void groups_reset(group_table *g, uint8_t *tab, uint8_t cap)
{
    uint16_t i;
    g->cap = cap > GROUPS_MAX ? GROUPS_MAX : cap;
    g->count = 0;
    for (i = 0; i < (uint16_t)g->cap * GROUPS_SLOT_BYTES; i++)
        tab[i] = 0;
}

uint8_t groups_find(const group_table *g, const uint8_t *tab, int16_t no)
{
    uint8_t i;
    for (i = 0; i < g->count; i++)
        if (groups_no(tab, i) == no)
            return i;
    return GROUPS_NONE;
}

/* A slot a new group may take: never used yet, or one whose expressions are all empty. */
static uint8_t free_slot(const group_table *g, const uint8_t *tab)
{
    uint8_t i;
    if (g->count < g->cap)
        return g->count;
    for (i = 0; i < g->count && groups_live(tab, i) != 0; i++)
        ;
    return i == g->count ? GROUPS_NONE : i;
}

uint8_t groups_has_room(const group_table *g, const uint8_t *tab, int16_t no)
{
    return groups_find(g, tab, no) != GROUPS_NONE || free_slot(g, tab) != GROUPS_NONE;
}

uint8_t groups_claim(group_table *g, uint8_t *tab, int16_t no, uint8_t *fresh)
{
    uint8_t i = groups_find(g, tab, no);
    *fresh = 0;
    if (i != GROUPS_NONE)
        return i;
    i = free_slot(g, tab);
    if (i == GROUPS_NONE)
        return GROUPS_NONE;
    if (i == g->count)
        g->count++;
    le16_put(tab + NO_AT(i), (uint16_t)no);
    groups_set_live(tab, i, 0);
    *fresh = 1;
    return i;
}
