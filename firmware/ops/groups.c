#include "groups.h"

void groups_reset(group_table *g, uint8_t cap)
{
    uint8_t i;
    g->cap = cap > GROUPS_MAX ? GROUPS_MAX : cap;
    g->count = 0;
    for (i = 0; i < GROUPS_MAX; i++) {
        g->no[i] = 0;
        g->live[i] = 0;
    }
}

uint8_t groups_find(const group_table *g, int16_t no)
{
    uint8_t i;
    for (i = 0; i < g->count; i++)
        if (g->no[i] == no)
            return i;
    return GROUPS_NONE;
}

uint8_t groups_claim(group_table *g, int16_t no, uint8_t *fresh)
{
    uint8_t i = groups_find(g, no);
    *fresh = 0;
    if (i != GROUPS_NONE)
        return i;
    if (g->count < g->cap) {
        i = g->count++;
    } else {
        for (i = 0; i < g->count && g->live[i] != 0; i++)
            ;
        if (i == g->count)
            return GROUPS_NONE;
    }
    g->no[i] = no;
    g->live[i] = 0;
    *fresh = 1;
    return i;
}
