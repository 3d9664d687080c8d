/*
 * moteid.h - node indices and mote ids.
 *
 * The emulator indexes its nodes 0..N-1. Their mote ids (TOS_LOCAL_ADDRESS,
 * what packets carry) are the same, except that 126 is skipped: it is
 * TOS_UART_ADDR in TinyOS 1.x, which TinyDB reads as "from the PC" (the
 * QueryMessage fwdNode) and routing as the root's serial port, so no mote
 * may have it. Index i >= 126 is mote i + 1; 0xFFFF is the broadcast address.
 */
#ifndef EMU_MOTEID_H
#define EMU_MOTEID_H

#include <stdint.h>

#define EMU_RESERVED_ID 126u /* TOS_UART_ADDR */
#define EMU_MAX_NODES 65534u /* mote ids 0..65535 minus 126 and TOS_BCAST_ADDR */

static inline uint16_t emu_mote_id(uint32_t index)
{
    return (uint16_t)(index < EMU_RESERVED_ID ? index : index + 1u);
}

/* EMU_MAX_NODES if no node has the id. */
static inline uint32_t emu_node_index(uint16_t id)
{
    if (id == EMU_RESERVED_ID || id == 0xFFFFu)
        return EMU_MAX_NODES;
    return id < EMU_RESERVED_ID ? id : id - 1u;
}

#endif /* EMU_MOTEID_H */
