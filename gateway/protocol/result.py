"""QueryResult (42 bytes, AM 240/107 after the multihop header), wire format §7.

``d`` is a 28-byte union chosen by ``qrType``:

* 2 (tuple): ``{"qid", "numFields", "notNull", "fields": 22 raw bytes}``. The field values
  have the sizes of the attributes' wire types (QueryField codes, :class:`WireType`), so
  :func:`decode_tuple_values` needs the query's field types. Like Java's QueryResult it
  walks field i = 0..numFields-1: bit i of ``notNull`` clear means NULL and takes no bytes.
* 3 (aggregate record): ``{"groupNo", "exprIdx", "state": 25 raw bytes}``; decode the state
  with :func:`motebase.gateway.protocol.aggregates.decode_state`.
* anything else: ``{"raw": 28 bytes}``.

Integer values decode with the signedness of their declared type (Java reads INTTWO as
unsigned; nothing on the wire depends on that choice).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, fixed_cstring, padded_union, parse
from motebase.gateway.protocol.errors import DecodeError, EncodeError

QUERY_RESULT_LEN = 42
RESULT_UNION_LEN = 28
TUPLE_DATA_LEN = 22
AGG_STATE_LEN = 25


class QrType(IntEnum):
    UNDEFINED = 0
    IS_AGG = 1  # internal to the mote, never on the air
    NOT_AGG = 2  # tuple
    AGG_SINGLE_FIELD = 3  # one aggregate group record


class WireType(IntEnum):
    """Attribute type codes (Java ``QueryField``; mote ``TOSType``), wire format §10.1."""

    INTONE = 1
    UINTONE = 2
    INTTWO = 3
    UINTTWO = 4
    INTFOUR = 5
    UINTFOUR = 6
    TIMESTAMP = 7
    STRING = 8
    BYTES = 9


FIELD_VALUE: dict[int, cs.Construct] = {
    WireType.INTONE: cs.Int8sl,
    WireType.UINTONE: cs.Int8ul,
    WireType.INTTWO: cs.Int16sl,
    WireType.UINTTWO: cs.Int16ul,
    WireType.INTFOUR: cs.Int32sl,
    WireType.UINTFOUR: cs.Int32ul,
    WireType.TIMESTAMP: cs.Int32ul,
    WireType.STRING: fixed_cstring(8),
    WireType.BYTES: cs.Bytes(8),
}
_FIELD_SIZE: dict[int, int] = {code: int(con.sizeof()) for code, con in FIELD_VALUE.items()}

TupleData = cs.Struct(
    "qid" / cs.Int8ul,
    "numFields" / cs.Int8ul,
    "notNull" / cs.Int32ul,
    "fields" / cs.Bytes(TUPLE_DATA_LEN),
)

AggRecord = cs.Struct(
    "groupNo" / cs.Int16sl,
    "exprIdx" / cs.Int8ul,
    "state" / cs.Bytes(AGG_STATE_LEN),
)

#: ``timeSyncData``: the sender's logical time in ms when the packet went out, TinyDB's
#: 40-bit time as its high byte then the low 32 bits (firmware/core/txpath.c stamp_time;
#: the motebase clock is 32-bit, so the high byte is 0).
TimeSyncStamp = cs.Struct("timeHigh" / cs.Int8ul, "timeLow" / cs.Int32ul)
TIME_SYNC_LEN = 5
assert TimeSyncStamp.sizeof() == TIME_SYNC_LEN
#: TimeSyncStamp as one struct, flattened from its fields' own formats.
_TIME_SYNC = struct.Struct(
    "<" + "".join(sub.subcon.fmtstr.lstrip("<>=!") for sub in TimeSyncStamp.subcons)
)
assert _TIME_SYNC.size == TIME_SYNC_LEN


def time_sync_ms(data: bytes) -> int | None:
    """The time in a ``timeSyncData`` field, in ms; None when the sender left it 0 (a mote
    that does not stamp what it sends over the serial line)."""
    if len(data) >= TIME_SYNC_LEN:  # one per result: a struct, not a construct parse
        high, low = _TIME_SYNC.unpack_from(data)
    else:  # too short: the construct's DecodeError says so
        stamp = parse("TimeSyncStamp", TimeSyncStamp, data)
        high, low = stamp["timeHigh"], stamp["timeLow"]
    return ((high << 32) | low) or None


QueryResult = cs.Struct(
    "qid" / cs.Int8ul,
    "result_idx" / cs.Int8sl,
    "epoch" / cs.Int16ul,
    "qrType" / cs.Int8ul,
    "timeSyncData" / cs.Bytes(TIME_SYNC_LEN),
    "clockCount" / cs.Int16sl,
    "lastDiff" / cs.Int16sl,
    "d" / padded_union(RESULT_UNION_LEN, cs.this.qrType, {2: TupleData, 3: AggRecord}),
)
assert QueryResult.sizeof() == QUERY_RESULT_LEN


def field_size(wire_type: int) -> int:
    size = _FIELD_SIZE.get(wire_type)
    if size is None:
        raise EncodeError("tuple", f"unknown wire type {wire_type}")
    return size


def decode_tuple_values(
    not_null: int, num_fields: int, data: bytes, field_types: Sequence[int]
) -> list[Any]:
    """Values of a tuple by field index, None for NULL fields (see the module docstring)."""
    present: list[int] = []
    offset = 0
    for i in range(num_fields):
        if not (not_null >> i) & 1:
            continue
        if i >= len(field_types):
            raise DecodeError("tuple", f"no wire type for field {i}", field=f"fields[{i}]")
        size = _FIELD_SIZE.get(field_types[i])
        if size is None:
            raise DecodeError("tuple", f"unknown wire type {field_types[i]}", field=f"fields[{i}]")
        if offset + size > len(data):
            raise DecodeError(
                "tuple",
                f"field {i} needs {size} bytes, only {len(data) - offset} left",
                field=f"fields[{i}]",
                offset=offset,
            )
        present.append(field_types[i])
        offset += size
    parsed = parse("tuple fields", _tuple_struct(tuple(present)), data[:offset])
    found = iter(parsed.values())
    return [next(found) if (not_null >> i) & 1 else None for i in range(num_fields)]


@functools.lru_cache(maxsize=256)
def _tuple_struct(present: tuple[int, ...]) -> cs.Construct:
    """The non-NULL fields of a tuple, in order, as one Struct built from FIELD_VALUE: a
    query's tuples share one or two of these, and `parse` compiles each once (codec.py),
    where a Struct built and parsed per field cost twenty times as much."""
    return cs.Struct(*(f"f{i}" / FIELD_VALUE[code] for i, code in enumerate(present)))


def encode_tuple_values(values: Sequence[Any], field_types: Sequence[int]) -> tuple[int, bytes]:
    """``(notNull, field bytes)`` for values by field index (None = NULL).

    More than 22 bytes of present values is refused (the original overflows, quirk A11).
    """
    if len(values) > 32:
        raise EncodeError("tuple", f"{len(values)} fields exceed the 32-bit notNull bitmap")
    not_null = 0
    data = b""
    for i, value in enumerate(values):
        if value is None:
            continue
        if i >= len(field_types):
            raise EncodeError("tuple", f"no wire type for field {i}", field=f"fields[{i}]")
        wire_type = field_types[i]
        if wire_type not in FIELD_VALUE:
            raise EncodeError("tuple", f"unknown wire type {wire_type}", field=f"fields[{i}]")
        not_null |= 1 << i
        data += build(f"tuple field {i}", cs.Struct("v" / FIELD_VALUE[wire_type]), {"v": value})
    if len(data) > TUPLE_DATA_LEN:
        raise EncodeError("tuple", f"{len(data)} bytes of values exceed {TUPLE_DATA_LEN}")
    return not_null, data


def parse_query_result(data: bytes) -> dict[str, Any]:
    return parse("QueryResult", QueryResult, data)


def build_query_result(
    result: Mapping[str, Any], field_types: Sequence[int] | None = None
) -> bytes:
    """42 bytes from a dict with the field names above.

    For a tuple, ``d`` may give ``values`` (by field index, None = NULL) together with
    ``field_types`` instead of ``notNull``/``fields``; ``numFields`` defaults to
    ``len(values)``. Missing ``timeSyncData``/``clockCount``/``lastDiff``/``result_idx``
    are zero.
    """
    full: dict[str, Any] = {
        "result_idx": 0,
        "timeSyncData": bytes(5),
        "clockCount": 0,
        "lastDiff": 0,
        **result,
    }
    d = dict(full.get("d", {}))
    if full.get("qrType") == QrType.NOT_AGG and "values" in d:
        if field_types is None:
            raise EncodeError("QueryResult", "tuple values need field_types", field="d.values")
        values = d.pop("values")
        d["notNull"], fields = encode_tuple_values(values, field_types)
        d["fields"] = fields.ljust(TUPLE_DATA_LEN, b"\0")
        d.setdefault("numFields", len(values))
        d.setdefault("qid", full.get("qid", 0))
    elif full.get("qrType") == QrType.AGG_SINGLE_FIELD and "state" in d:
        state = bytes(d["state"])
        if len(state) > AGG_STATE_LEN:
            raise EncodeError(
                "QueryResult", f"{len(state)}-byte state exceeds {AGG_STATE_LEN}", field="d.state"
            )
        d["state"] = state.ljust(AGG_STATE_LEN, b"\0")
    elif "raw" in d:
        d["raw"] = bytes(d["raw"]).ljust(RESULT_UNION_LEN, b"\0")
    full["d"] = d
    return build("QueryResult", QueryResult, full)
