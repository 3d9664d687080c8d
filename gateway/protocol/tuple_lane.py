"""Tuple results at the speed of ``struct``: the fast lane of ``mote decode`` and of the
session.

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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import field_offset
from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.packet import (
    DEFAULT_FIELD_TYPES,
    DecodedPacket,
    ResultSchema,
    decode_packet,
)
from motebase.gateway.protocol.result import FIELD_VALUE, QrType, QueryResult, TupleData
from motebase.gateway.protocol.tos import (
    MHOP_HEADER_LEN,
    TINYDB_PAYLOAD_LEN,
    TOS_HEADER_LEN,
    AmType,
    MultihopHeader,
    TosHeader,
)

RESULT_AT = TOS_HEADER_LEN + MHOP_HEADER_LEN
#: Where a packet's qrType is, and where its numFields and notNull end: the shape key's
#: bytes besides the AM header and the length (TupleLane._shape, csrc/fastlane.c).
QR_TYPE_AT = RESULT_AT + (field_offset(QueryResult, ["qrType"]) or 0)
_TUPLE_AT = RESULT_AT + (field_offset(QueryResult, ["d"]) or 0)
NOT_NULL_END = _TUPLE_AT + (field_offset(TupleData, ["fields"]) or 0)
_RESULT_AMS = (AmType.QUERY_RESULT, AmType.DIRECTED_DATA)

#: A leaf of the flattened layout: where it goes (the path of names: ``header``, ``mhop``
#: or ``body`` first, as in DecodedPacket), and its length if it is bytes, else 0.
_Leaf = tuple[tuple[str, ...], int]


class _NotFlat(Exception):
    """A construct the lane does not flatten: the shape stays with the full decoder."""


class TupleShape:
    """One shape's structs, JSON template and dict layout, checked against the full
    decoder."""

    def __init__(self, packet: bytes, field_types: Sequence[int]) -> None:
        self.am = packet[2]
        leaves: list[_Leaf] = []
        formats: list[str] = []
        parts: list[tuple[cs.Construct, tuple[str, ...]]] = [
            (TosHeader, ("header",)),
            (MultihopHeader, ("mhop",)),
            (cs.Struct(*QueryResult.subcons[:-1]), ("body",)),
            (cs.Struct(*TupleData.subcons[:-1]), ("body", "d")),
        ]
        for con, prefix in parts:
            _flatten_into(con, prefix, leaves, formats)
        not_null = int.from_bytes(packet[NOT_NULL_END - 4 : NOT_NULL_END], "little")
        self.num_fields = packet[NOT_NULL_END - 5]
        for i in range(self.num_fields):
            if not (not_null >> i) & 1:
                continue  # NULL: no bytes, None (null in the JSON)
            if i >= len(field_types) or field_types[i] not in FIELD_VALUE:
                raise _NotFlat(f"field {i}")
            value = FIELD_VALUE[field_types[i]]
            _flatten_into(value, ("body", "d", "values", str(i)), leaves, formats)
        # Bytes a byte at a time for the JSON's %02x, whole for the dicts.
        self.unpack_json = _unpacker(leaves, formats, "B")
        offsets = _leaf_offsets(leaves, formats)
        self._holes = _hole_offsets(leaves, formats, offsets)
        self.unpack = _unpacker(leaves, formats, "s")
        self.size = len(packet)
        #: tuple_runs.py's numpy record type of the shape, made there on first use.
        self.record_type: Any = None
        #: The flattened layout (path, offset, bytes length or 0, struct code), for that type.
        self.leaves = [
            (".".join(path), at, size, code)
            for (path, size), code, at in zip(leaves, formats, offsets, strict=True)
        ]
        self.template = _template(self.am, leaves, self.num_fields)
        self.layout = {
            part: [(path[-1], i) for i, (path, _) in enumerate(leaves) if path[:-1] == (part,)]
            for part in ("header", "mhop", "body")
        }
        self.d_layout = [
            (path[-1], i) for i, (path, _) in enumerate(leaves) if path[:-1] == ("body", "d")
        ]
        slots = {
            path[-1]: i for i, (path, _) in enumerate(leaves) if path[:3] == ("body", "d", "values")
        }
        self.values = [slots.get(str(i)) for i in range(self.num_fields)]

    def line(self, packet: bytes) -> str:
        return self.template % self.unpack_json(packet)

    def holes(self) -> list[tuple[int, str]]:
        """Where each value of :meth:`line`'s template comes from: its offset in the
        packet and its struct code, ``x`` for a byte of a bytes leaf (printed ``%02x``)."""
        return self._holes

    def decoded(self, packet: bytes) -> DecodedPacket:
        v = self.unpack(packet)
        d: dict[str, Any] = {name: v[i] for name, i in self.d_layout}
        d["values"] = [None if i is None else v[i] for i in self.values]
        body: dict[str, Any] = {name: v[i] for name, i in self.layout["body"]}
        body["d"] = d
        header = {name: v[i] for name, i in self.layout["header"]}
        mhop = {name: v[i] for name, i in self.layout["mhop"]}
        return DecodedPacket(self.am, header, body, mhop)


def _unpacker(
    leaves: list[_Leaf], formats: list[str], bytes_code: str
) -> Callable[[bytes], tuple[Any, ...]]:
    """``unpack_from`` of the leaves' struct, bytes leaves as ``{length}{bytes_code}``."""
    codes = (
        f"{size}{bytes_code}" if size else f for (_, size), f in zip(leaves, formats, strict=True)
    )
    return struct.Struct("<" + "".join(codes)).unpack_from


def _leaf_offsets(leaves: list[_Leaf], formats: list[str]) -> list[int]:
    """Where each leaf starts in the packet (little-endian, no padding)."""
    out: list[int] = []
    at = 0
    for (_, size), code in zip(leaves, formats, strict=True):
        out.append(at)
        at += size or struct.calcsize("<" + code)
    return out


def _hole_offsets(
    leaves: list[_Leaf], formats: list[str], offsets: list[int]
) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for (_, size), code, at in zip(leaves, formats, offsets, strict=True):
        if size:
            out.extend((at + k, "x") for k in range(size))
        else:
            out.append((at, code))
    return out


def _flatten_into(
    con: cs.Construct, path: tuple[str, ...], leaves: list[_Leaf], formats: list[str]
) -> None:
    """The leaves of ``con`` in wire order (little-endian, no padding) and each one's
    struct format (the length for bytes), appended."""
    while isinstance(con, cs.Renamed):
        con = con.subcon
    if isinstance(con, cs.Struct):
        for sub in con.subcons:
            _flatten_into(sub, (*path, sub.name), leaves, formats)
    elif isinstance(con, cs.FormatField):
        leaves.append((path, 0))
        formats.append(con.fmtstr.lstrip("<>=!"))
    elif isinstance(con, cs.Bytes) and isinstance(con.length, int) and con.length > 0:
        leaves.append((path, con.length))
        formats.append("")
    else:
        raise _NotFlat(type(con).__name__)


def _template(am: int, leaves: list[_Leaf], fields: int) -> str:
    """The JSON line with a ``%`` hole per leaf, in ``DecodedPacket.to_json_dict``'s
    order: AM, header and multihop fields at the top, the QueryResult under ``body``, its
    ``fields`` values by field index with null for NULL."""
    marks = [f"\x00{i}\x00" for i in range(len(leaves))]
    out: dict[str, Any] = {"am": am, "am_name": AmType(am).name}
    for (path, _), mark in zip(leaves, marks, strict=True):
        node = out
        for name in path[1:-1] if path[0] in ("header", "mhop") else path[:-1]:
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
    """Tuple results by shape (see the module docstring): as ``mote decode`` prints them
    (:meth:`line`) or as :func:`decode_packet` returns them (:meth:`decoded`). Both
    return None for a packet they leave to the full decoder."""

    def __init__(self, field_types: Sequence[int] | None, max_payload: int) -> None:
        self.field_types = tuple(field_types) if field_types else DEFAULT_FIELD_TYPES
        self.max_payload = max_payload
        self._shapes: dict[bytes, TupleShape | None] = {}

    def _shape(self, packet: bytes) -> TupleShape | None:
        key = packet[2:5] + packet[QR_TYPE_AT : QR_TYPE_AT + 1]
        key += packet[NOT_NULL_END - 5 : NOT_NULL_END] + len(packet).to_bytes(2, "little")
        try:
            return self._shapes[key]
        except KeyError:
            shape = self._shapes[key] = self._learn(packet)
            return shape

    def learned(self) -> list[tuple[bytes, TupleShape]]:
        """The shapes the lane takes, by key (:meth:`_shape`'s)."""
        return [(key, shape) for key, shape in self._shapes.items() if shape is not None]

    @property
    def shapes_seen(self) -> int:
        """How many shapes the lane has judged, taken or not: grows when one is learned."""
        return len(self._shapes)

    def shape(self, packet: bytes) -> TupleShape | None:
        """The packet's shape if the lane takes it."""
        return self._shape(packet)

    def line(self, packet: bytes) -> str | None:
        shape = self._shape(packet)
        return None if shape is None else shape.line(packet)

    def decoded(self, packet: bytes) -> DecodedPacket | None:
        shape = self._shape(packet)
        return None if shape is None else shape.decoded(packet)

    def _learn(self, packet: bytes) -> TupleShape | None:
        if (
            len(packet) < NOT_NULL_END
            or packet[2] not in _RESULT_AMS
            or packet[QR_TYPE_AT] != QrType.NOT_AGG
        ):
            return None
        try:
            shape = TupleShape(packet, self.field_types)
            full = decode_packet(packet, field_types=self.field_types, max_payload=self.max_payload)
            same = shape.decoded(packet) == full
            same = same and json.dumps(full.to_json_dict()) == shape.line(packet)
        except (_NotFlat, DecodeError, struct.error):
            return None
        return shape if same else None


class ResultDecoder:
    """:func:`decode_packet` with ``schemas`` (by qid, as a session keeps them), tuple
    results through one lane per query's field types. The session's hot path: nearly
    every packet it reads is a tuple result."""

    def __init__(self, schemas: Mapping[int, ResultSchema]) -> None:
        self.schemas = schemas
        self._lanes: dict[tuple[int, ...], TupleLane] = {}

    def decode(self, packet: bytes) -> DecodedPacket:
        lane = self._lane(packet)
        if lane is not None:
            decoded = lane.decoded(packet)
            if decoded is not None:
                return decoded
        return decode_packet(packet, schemas=self.schemas)

    def shape_of(self, packet: bytes) -> TupleShape | None:
        """The packet's shape if a lane takes it (:mod:`.tuple_runs` groups by it)."""
        lane = self._lane(packet)
        return None if lane is None else lane.shape(packet)

    def _lane(self, packet: bytes) -> TupleLane | None:
        if len(packet) <= RESULT_AT or packet[2] not in _RESULT_AMS:
            return None
        schema = self.schemas.get(packet[RESULT_AT])
        types = DEFAULT_FIELD_TYPES if schema is None else schema.field_types
        if not types:
            return None
        lane = self._lanes.get(types)
        if lane is None:
            lane = self._lanes[types] = TupleLane(types, TINYDB_PAYLOAD_LEN)
        return lane
