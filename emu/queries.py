"""TinySQL to the framed bytes a PC sends a basestation: AM 101 QueryMessages, protocol 66.

The compiler and the byte layouts are the gateway's (``motebase.gateway.plan``,
``motebase.gateway.protocol``); this is only the last step, packaging each QueryMessage
as a broadcast TOS_Msg of the TinyDBApp payload size and framing it.
"""

from __future__ import annotations

from motebase.gateway.protocol.framing import frame_packet
from motebase.gateway.protocol.tos import (
    BCAST_ADDR,
    DEFAULT_GROUP,
    TINYDB_PAYLOAD_LEN,
    AmType,
    build_tos_packet,
)


def query_frames(sql: str, qid: int = 1) -> list[bytes]:
    """One serial frame per QueryMessage of ``sql``, in the order the Java tools send them."""
    from motebase.gateway.encoder import encode_query
    from motebase.gateway.plan import compile_query

    return [
        frame_packet(
            build_tos_packet(BCAST_ADDR, AmType.QUERY, DEFAULT_GROUP, message, TINYDB_PAYLOAD_LEN)
        )
        for message in encode_query(compile_query(sql), qid)
    ]
