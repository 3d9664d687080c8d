#include "snoop.h"

#include "agg.h"

uint8_t snoop_dominates(uint8_t op, const uint8_t *mine, const uint8_t *theirs)
{
    switch (op) {
    case AGG_MAX:
        return agg_value(theirs) >= agg_value(mine);
    case AGG_MIN:
        return agg_value(theirs) <= agg_value(mine);
    default:
        return 0;
    }
}
