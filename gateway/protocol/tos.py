"""TOS_Msg (mica/mica2 "avrmote" family) and MintRoute's multihop header, wire format §1, §3, §4.1.

On the serial line a packet is the 5-byte header followed by exactly ``length`` data
bytes; the radio CRC and the local bookkeeping fields after it never leave the mote.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, parse
from motebase.gateway.protocol.errors import DecodeError, EncodeError

#: ``TOSH_DATA_LENGTH`` of the TinyDBApp build (``MSG_SIZE=49``).
TINYDB_PAYLOAD_LEN = 49
#: ``TOSH_DATA_LENGTH`` of a stock TinyOS 1.x build.
TINYOS_PAYLOAD_LEN = 29

BCAST_ADDR = 0xFFFF
UART_ADDR = 0x007E
DEFAULT_GROUP = 0x7D
#: MintRoute's hopcount of a sender without a parent.
ROUTE_INVALID = 0xFF


class AmType(IntEnum):
    """Active Message types TinyDB uses (wire format §3)."""

    UART_MSG = 1
    QUERY = 101
    COMMAND = 103
    QUERY_REQUEST = 104
    EVENT = 105
    STATUS = 106
    DIRECTED_DATA = 107  # root's heartbeat result, multihop header + QueryResult
    QUERY_RESULT = 240  # multihop header + QueryResult
    MULTIHOP_ROUTE = 250  # MintRoute beacon: multihop header + RoutePacket


TosHeader = cs.Struct(
    "addr" / cs.Int16ul,
    "type" / cs.Int8ul,
    "group" / cs.Int8ul,
    "length" / cs.Int8ul,
)
TOS_HEADER_LEN = TosHeader.sizeof()

MultihopHeader = cs.Struct(
    "sourceaddr" / cs.Int16ul,  # last hop, rewritten at every forward
    "originaddr" / cs.Int16ul,
    "seqno" / cs.Int16sl,
    "hopcount" / cs.Int8ul,
)
MHOP_HEADER_LEN = MultihopHeader.sizeof()


def parse_tos_packet(
    data: bytes, *, max_payload: int = TINYDB_PAYLOAD_LEN
) -> tuple[dict[str, Any], bytes]:
    """Split a serial packet into its header fields and its ``length`` data bytes.

    Extra bytes after ``length`` (e.g. a fixed-size legacy packet) are ignored.
    """
    header = parse("TOS_Msg", TosHeader, data)
    length = header["length"]
    if length > max_payload:
        raise DecodeError(
            "TOS_Msg",
            f"length {length} exceeds the payload size {max_payload}",
            field="length",
            offset=4,
        )
    data_bytes = data[TOS_HEADER_LEN : TOS_HEADER_LEN + length]
    if len(data_bytes) < length:
        raise DecodeError(
            "TOS_Msg",
            f"truncated: length says {length} data bytes, got {len(data_bytes)}",
            field="data",
            offset=TOS_HEADER_LEN + len(data_bytes),
        )
    return header, data_bytes


def build_tos_packet(
    addr: int,
    am: int,
    group: int,
    data: bytes,
    length: int | None = None,
    *,
    max_payload: int = TINYDB_PAYLOAD_LEN,
) -> bytes:
    """Header + data as a serial packet. ``length`` pads ``data`` with zeros (e.g. 49 for a
    radio-sized TinyDB message); it defaults to ``len(data)``."""
    if length is None:
        length = len(data)
    if length < len(data):
        raise EncodeError(
            "TOS_Msg", f"{len(data)} data bytes do not fit length {length}", field="length"
        )
    if length > max_payload:
        raise EncodeError(
            "TOS_Msg", f"length {length} exceeds the payload size {max_payload}", field="length"
        )
    header = build(
        "TOS_Msg", TosHeader, {"addr": addr, "type": am, "group": group, "length": length}
    )
    return header + data.ljust(length, b"\0")


def parse_mhop(data: bytes) -> tuple[dict[str, Any], bytes]:
    """Split multihop data into the 7-byte header and the payload after it."""
    return parse("TOS_MHopMsg", MultihopHeader, data), data[MHOP_HEADER_LEN:]


def build_mhop(
    sourceaddr: int, originaddr: int, seqno: int, hopcount: int, payload: bytes
) -> bytes:
    header = {
        "sourceaddr": sourceaddr,
        "originaddr": originaddr,
        "seqno": seqno,
        "hopcount": hopcount,
    }
    return build("TOS_MHopMsg", MultihopHeader, header) + payload
