"""Tuple results to JSON lines at the speed of ``struct``: the fast lane of ``mote decode``.

Nearly every packet a basestation hears is a QueryResult tuple of one query, and all of
them have one of a few shapes: the same AM type, length, ``qrType``, ``numFields`` and
``notNull``. For each shape the construct layouts (protocol/tos.py, protocol/result.py)
are flattened once into one ``struct.Struct``, and the JSON line into one ``%`` template,
so a packet costs one unpack and one format instead of five construct parses.

The full decoder (:func:`~motebase.gateway.protocol.packet.decode_packet`) stays the
definition. The first packet of a shape is decoded both ways; the lane takes the shape
only if the two JSON lines are identical, and leaves every other shape -- aggregate
records, strings, malformed packets, anything the flattening does not cover -- to the
full decoder. No layout is written here a second time: offsets and formats come from the
construct definitions.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import field_offset
from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.packet import DEFAULT_FIELD_TYPES, decode_packet
from motebase.gateway.protocol.result import FIELD_VALUE, QrType, QueryResult, TupleData
from motebase.gateway.protocol.tos import (
    MHOP_HEADER_LEN,
    TOS_HEADER_LEN,
    AmType,
    MultihopHeader,
    TosHeader,
)

_RESULT_AT = TOS_HEADER_LEN + MHOP_HEADER_LEN
_QR_TYPE_AT = _RESULT_AT + (field_offset(QueryResult, ["qrType"]) or 0)
_TUPLE_AT = _RESULT_AT + (field_offset(QueryResult, ["d"]) or 0)
_NOT_NULL_END = _TUPLE_AT + (field_offset(TupleData, ["fields"]) or 0)
_RESULT_AMS = (AmType.QUERY_RESULT, AmType.DIRECTED_DATA)

#: A leaf of the flattened layout: where it goes in the JSON (the path of names), and its
#: length if it is bytes (unpacked a byte at a time and printed as hex, like the full
#: decoder's ``jsonable``), else 0.
_Leaf = tuple[tuple[str, ...], int]


class _NotFlat(Exception):
    """A construct the lane does not flatten: the shape stays with the full decoder."""


def _flatten(con: cs.Construct, path: tuple[str, ...], leaves: list[_Leaf]) -> str:
    """The struct format of ``con`` (little-endian, no padding), its leaves appended."""
    while isinstance(con, cs.Renamed):
        con = con.subcon
    if isinstance(con, cs.Struct):
        return "".join(_flatten(sub, (*path, sub.name), leaves) for sub in con.subcons)
    if isinstance(con, cs.FormatField):
        leaves.append((path, 0))
        return con.fmtstr.lstrip("<>=!")
    if isinstance(con, cs.Bytes) and isinstance(con.length, int) and con.length > 0:
        leaves.append((path, con.length))
        return f"{con.length}B"
    raise _NotFlat(type(con).__name__)


class _Shape:
    """One shape's struct and JSON template, checked against the full decoder."""

    def __init__(self, packet: bytes, field_types: Sequence[int]) -> None:
        leaves: list[_Leaf] = []
        fmt = _flatten(TosHeader, (), leaves) + _flatten(MultihopHeader, (), leaves)
        fmt += _flatten(cs.Struct(*QueryResult.subcons[:-1]), ("body",), leaves)
        fmt += _flatten(cs.Struct(*TupleData.subcons[:-1]), ("body", "d"), leaves)
        not_null = int.from_bytes(packet[_NOT_NULL_END - 4 : _NOT_NULL_END], "little")
        num_fields = packet[_NOT_NULL_END - 5]
        for i in range(num_fields):
            if not (not_null >> i) & 1:
                continue  # NULL: no bytes, null in the JSON
            if i >= len(field_types) or field_types[i] not in FIELD_VALUE:
                raise _NotFlat(f"field {i}")
            fmt += _flatten(FIELD_VALUE[field_types[i]], ("body", "d", "values", str(i)), leaves)
        self.unpack = struct.Struct("<" + fmt).unpack_from
        self.template = _template(packet[2], leaves, num_fields)

    def line(self, packet: bytes) -> str:
        return self.template % self.unpack(packet)


def _template(am: int, leaves: list[_Leaf], fields: int) -> str:
    """The JSON line with a ``%`` hole per leaf, in ``DecodedPacket.to_json_dict``'s
    order: AM, header and multihop fields at the top, the QueryResult under ``body``, its
    ``fields`` values by field index with null for NULL."""
    marks = [f"\x00{i}\x00" for i in range(len(leaves))]
    out: dict[str, Any] = {"am": am, "am_name": AmType(am).name}
    for (path, _), mark in zip(leaves, marks, strict=True):
        node = out
        for name in path[:-1]:
            node = node.setdefault(name, {})
        node[path[-1]] = mark
    d = out["body"]["d"]
    present = d.pop("values", {})
    d["values"] = [present.get(str(i)) for i in range(fields)]
    text = json.dumps(out).replace("%", "%%")
    for (_, size), mark in zip(leaves, marks, strict=True):
        hole = '"' + "%02x" * size + '"' if size else "%d"
        text = text.replace(json.dumps(mark), hole, 1)
    return text


class TupleLane:
    """JSON lines of tuple results by shape, as ``mote decode`` prints them (see the
    module docstring). :meth:`line` returns None for a packet it leaves to the full
    decoder."""

    def __init__(self, field_types: Sequence[int] | None, max_payload: int) -> None:
        self.field_types = tuple(field_types) if field_types else DEFAULT_FIELD_TYPES
        self.max_payload = max_payload
        self._shapes: dict[bytes, _Shape | None] = {}

    def line(self, packet: bytes) -> str | None:
        key = packet[2:5] + packet[_QR_TYPE_AT : _QR_TYPE_AT + 1]
        key += packet[_NOT_NULL_END - 5 : _NOT_NULL_END] + len(packet).to_bytes(2, "little")
        try:
            shape = self._shapes[key]
        except KeyError:
            shape = self._shapes[key] = self._learn(packet)
        return None if shape is None else shape.line(packet)

    def _learn(self, packet: bytes) -> _Shape | None:
        if (
            len(packet) < _NOT_NULL_END
            or packet[2] not in _RESULT_AMS
            or packet[_QR_TYPE_AT] != QrType.NOT_AGG
        ):
            return None
        try:
            shape = _Shape(packet, self.field_types)
            full = decode_packet(packet, field_types=self.field_types, max_payload=self.max_payload)
            same = json.dumps(full.to_json_dict()) == shape.line(packet)
        except (_NotFlat, DecodeError, struct.error):
            return None
        return shape if same else None
