"""TinyOS 1.x / TinyDB wire protocol: framing, message layouts (construct), SerialForwarder.

construct definitions in this package are the single source of truth for byte layouts in
Python; other packages encode and decode through the ``build_*`` / ``parse_*`` helpers and
:func:`decode_packet`, never with ``struct``.
"""

from __future__ import annotations

from motebase.gateway.protocol.aggregates import AggOp, decode_state, encode_state, state_size
from motebase.gateway.protocol.command import (
    ALL_NODES,
    KNOWN_COMMANDS,
    build_command,
    parse_command,
)
from motebase.gateway.protocol.errors import DecodeError, EncodeError, ProtocolError
from motebase.gateway.protocol.event import build_event, parse_event
from motebase.gateway.protocol.framing import (
    Deframer,
    Frame,
    FramingStats,
    Protocol,
    crc16,
    frame_ack,
    frame_packet,
    frame_packet_ack,
    frame_unknown,
)
from motebase.gateway.protocol.packet import (
    AggregateSchema,
    DecodedPacket,
    ResultSchema,
    decode_packet,
    decode_result_body,
)
from motebase.gateway.protocol.query import (
    ArithOp,
    BufferType,
    ExprOpType,
    MsgType,
    QueryPart,
    SelOp,
    build_query_message,
    parse_query_message,
)
from motebase.gateway.protocol.request import build_query_request, parse_query_request
from motebase.gateway.protocol.result import (
    QrType,
    WireType,
    build_query_result,
    decode_tuple_values,
    parse_query_result,
)
from motebase.gateway.protocol.route import build_route_packet, parse_route_packet
from motebase.gateway.protocol.status import build_status, parse_status
from motebase.gateway.protocol.tos import (
    BCAST_ADDR,
    DEFAULT_GROUP,
    TINYDB_PAYLOAD_LEN,
    UART_ADDR,
    AmType,
    build_mhop,
    build_tos_packet,
    parse_mhop,
    parse_tos_packet,
)

__all__ = [
    "ALL_NODES",
    "BCAST_ADDR",
    "DEFAULT_GROUP",
    "KNOWN_COMMANDS",
    "TINYDB_PAYLOAD_LEN",
    "UART_ADDR",
    "AggOp",
    "AggregateSchema",
    "AmType",
    "ArithOp",
    "BufferType",
    "DecodeError",
    "DecodedPacket",
    "Deframer",
    "EncodeError",
    "ExprOpType",
    "Frame",
    "FramingStats",
    "MsgType",
    "Protocol",
    "ProtocolError",
    "QrType",
    "QueryPart",
    "ResultSchema",
    "SelOp",
    "WireType",
    "build_command",
    "build_event",
    "build_mhop",
    "build_query_message",
    "build_query_request",
    "build_query_result",
    "build_route_packet",
    "build_status",
    "build_tos_packet",
    "crc16",
    "decode_packet",
    "decode_result_body",
    "decode_state",
    "decode_tuple_values",
    "encode_state",
    "frame_ack",
    "frame_packet",
    "frame_packet_ack",
    "frame_unknown",
    "parse_command",
    "parse_event",
    "parse_mhop",
    "parse_query_message",
    "parse_query_request",
    "parse_query_result",
    "parse_route_packet",
    "parse_status",
    "parse_tos_packet",
    "state_size",
]
