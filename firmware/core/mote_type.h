/*
 * mote_type.h - the node's state, as an opaque type.
 *
 * The core's module headers declare their functions on `mote_state` through this
 * alone: its fields, the slices the modules declare put together, are mote_state.h's,
 * which only the modules' .c files include; and the platforms' API (mote.h) stays above
 * every module.
 */
#ifndef MOTE_CORE_MOTE_TYPE_H
#define MOTE_CORE_MOTE_TYPE_H

typedef struct mote_state mote_state;

#endif /* MOTE_CORE_MOTE_TYPE_H */
