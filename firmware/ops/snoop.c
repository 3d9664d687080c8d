#include "snoop.h"

#include "agg.h"

uint8_t snoop_dominates(uint8_t op, uint8_t wide, const uint8_t *mine, const uint8_t *theirs)
{
    switch (op) {
    case AGG_MAX:
        return agg_value(theirs, wide) >= agg_value(mine, wide);
    case AGG_MIN:
        return agg_value(theirs, wide) <= agg_value(mine, wide);
    default:
        return 0;
    }
}
