"""motebase's extensions of TinyDB messages, carried where TinyDB never reads.

TinyDB sends its messages in 49-byte payloads but reads only the struct at their start: a
QueryMessage is 40 bytes, a StatusMessage 10. motebase motes put their extensions in the
rest (design.md §1: an unmodified mote ignores them), each opened by the magic ``mb`` and a
version, so stale bytes an unmodified mote left in its buffer do not pass for one.

Query trailer, bytes 40..48 of an AM 101 payload (firmware/query/trailer.h)::

    'm' 'b' | version 1 | flags | epoch base K u32 | check

``flags``: ``wide`` -- the query's aggregates use motebase's 32-bit partial states
(protocol/aggregates.py); ``has_base`` -- K is set: epoch e starts at (K + e - 1) x the
epoch length in the motes' logical time (firmware/core/schedule.h). ``check`` is the XOR of
the 8 bytes before it with 0x5A. The gateway sends the trailer (``wide``, no base: the root
chooses it) only to a root that announced itself as a motebase mote.

Status extension, bytes 10.. of a StatusMessage reply (firmware/core/commands.h)::

    'm' 'b' | version 1 | capabilities | numBusy | busy[numBusy]

``capabilities``: ``wide_states``, ``epoch_base``. ``busy``: queries that stopped or drain
but whose results may still arrive; the gateway must not reuse their ids yet.

Bundle, AM 241, radio only (firmware/result/bundle.h): a relay's queued tuples, or a
node's aggregate records of one query and epoch, for one motebase parent in one frame, after
the multihop header. Never on the serial line: the root writes each result as its own AM
240. The first item is whole; later tuples of the same query, result index and tuple header,
of an epoch within 127 of the first's, are short; records are always whole and carry their
timeSyncData (the first item's is stamped on the air)::

    whole tuple:  originaddr u16 | n u8 | qid | result_idx | epoch u16 | qrType 2
                  | tuple (n - 5)
    whole record: originaddr u16 | n u8 | qid | result_idx | epoch u16 | qrType 3
                  | timeSyncData (5) | record (n - 10)
    short:        originaddr u16 | 0x80 + m u8 | epoch - first's epoch, s8 | values (m)

The tuple and record bytes are the QueryResult's data part without its trailing zeros, a
short item's values those after the first's tuple header; a tuple's time, clockCount and
lastDiff are not carried (they are zero, but for the time every hop stamps anew), nor a
record's clockCount and lastDiff.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, parse
from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.query import QUERY_MESSAGE_LEN
from motebase.gateway.protocol.result import (
    AGG_STATE_LEN,
    QUERY_RESULT_LEN,
    RESULT_UNION_LEN,
    TIME_SYNC_LEN,
    TUPLE_DATA_LEN,
    AggRecord,
    QueryResult,
    TupleData,
)
from motebase.gateway.protocol.status import STATUS_LEN

MAGIC = b"mb"
VERSION = 1
CHECK_SEED = 0x5A
MAX_BUSY = 8


def _check(data: bytes) -> int:
    return reduce(lambda a, b: a ^ b, data, CHECK_SEED)


_TrailerBody = cs.Struct(
    "magic" / cs.Const(MAGIC),
    "version" / cs.Const(VERSION, cs.Int8ul),
    "flags" / cs.FlagsEnum(cs.Int8ul, wide=0x01, has_base=0x02),
    "base" / cs.Int32ul,
)

QueryTrailer = cs.Struct(
    "body" / cs.RawCopy(_TrailerBody),
    "check" / cs.Checksum(cs.Int8ul, _check, cs.this.body.data),
)
TRAILER_LEN = QueryTrailer.sizeof()

StatusExtension = cs.Struct(
    "magic" / cs.Const(MAGIC),
    "version" / cs.Const(VERSION, cs.Int8ul),
    "capabilities" / cs.FlagsEnum(cs.Int8ul, wide_states=0x01, epoch_base=0x02),
    "numBusy" / cs.Int8ul,
    cs.Check(cs.this.numBusy <= MAX_BUSY),
    "busy" / cs.Array(cs.this.numBusy, cs.Int8ul),
)


def add_trailer(message: bytes, *, wide: bool, base: int | None = None) -> bytes:
    """A 40-byte QueryMessage with motebase's trailer after it (49 bytes)."""
    if len(message) != QUERY_MESSAGE_LEN:
        raise ValueError(f"a QueryMessage is {QUERY_MESSAGE_LEN} bytes, got {len(message)}")
    body = {
        "flags": {"wide": wide, "has_base": base is not None},
        "base": base or 0,
    }
    return message + build("query trailer", QueryTrailer, {"body": {"value": body}})


def parse_trailer(payload: bytes) -> dict[str, Any] | None:
    """The trailer of an AM 101 payload as ``{"wide", "base"}`` (base None if unset), or
    None if the payload carries none (a plain TinyDB part)."""
    raw = payload[QUERY_MESSAGE_LEN : QUERY_MESSAGE_LEN + TRAILER_LEN]
    if len(raw) < TRAILER_LEN:
        return None
    try:
        trailer = parse("query trailer", QueryTrailer, raw)
    except DecodeError:
        return None
    body = trailer["body"]["value"]
    flags = body["flags"]
    return {"wide": bool(flags["wide"]), "base": body["base"] if flags["has_base"] else None}


def build_status_extension(
    *, wide_states: bool = True, epoch_base: bool = True, busy: tuple[int, ...] = ()
) -> bytes:
    return build(
        "status extension",
        StatusExtension,
        {
            "capabilities": {"wide_states": wide_states, "epoch_base": epoch_base},
            "numBusy": len(busy),
            "busy": list(busy),
        },
    )


def parse_status_extension(payload: bytes) -> dict[str, Any] | None:
    """``{"wide_states", "epoch_base", "busy"}`` from a StatusMessage reply's payload, or
    None if the replying mote is not a motebase mote."""
    try:
        ext = parse("status extension", StatusExtension, payload[STATUS_LEN:])
    except DecodeError:
        return None
    caps: Mapping[str, Any] = ext["capabilities"]
    return {
        "wide_states": bool(caps["wide_states"]),
        "epoch_base": bool(caps["epoch_base"]),
        "busy": tuple(ext["busy"]),
    }


AM_BUNDLE = 241
_SHORT = 0x80  # n: a short item, n - 0x80 value bytes

_ItemHeader = cs.Struct("originaddr" / cs.Int16ul, "n" / cs.Int8ul)
_TUPLE, _RECORD = 2, 3  # qrType
_WholeHead = cs.Struct(
    "qid" / cs.Int8ul,
    "result_idx" / cs.Int8sl,
    "epoch" / cs.Int16ul,
    "qrType" / cs.Int8ul,
    cs.Check(lambda ctx: ctx.qrType in (_TUPLE, _RECORD)),
)
_ShortHead = cs.Struct("epoch_step" / cs.Int8sl)
_BUNDLE_QR_HEAD = _WholeHead.sizeof()
_TUPLE_HEADER = TupleData.sizeof() - TUPLE_DATA_LEN  # the tuple's qid, numFields, notNull
_RECORD_HEADER = AggRecord.sizeof() - AGG_STATE_LEN  # its groupNo i16, exprIdx


def _time_len(ctx: Any) -> int:
    return TIME_SYNC_LEN if ctx.qrType == _RECORD else 0


_WholeItem = cs.Struct(
    *_WholeHead.subcons,
    "timeSyncData" / cs.Bytes(_time_len),
    "data" / cs.Bytes(lambda ctx: ctx._.n - _BUNDLE_QR_HEAD - _time_len(ctx)),
)
_ShortItem = cs.Struct(*_ShortHead.subcons, "values" / cs.Bytes(cs.this._.n - _SHORT))
BundleItem = cs.Struct(
    *_ItemHeader.subcons,
    "short" / cs.Computed(cs.this.n >= _SHORT),
    "item" / cs.IfThenElse(cs.this.short, _ShortItem, _WholeItem),
)
Bundle = cs.GreedyRange(BundleItem)


def tuples_per_bundle(value_bytes: int) -> int:
    """Tuples with ``value_bytes`` of values one bundle carries: the first whole, then as
    many short ones as the 42 bytes after the multihop header hold (firmware/result/bundle.h;
    trailing zero values, left off, only make room)."""
    whole = _ItemHeader.sizeof() + _BUNDLE_QR_HEAD + _TUPLE_HEADER + value_bytes
    short = _ItemHeader.sizeof() + _ShortHead.sizeof() + value_bytes
    return 1 + max(0, QUERY_RESULT_LEN - whole) // short


def parse_bundle(body: bytes) -> list[tuple[int, bytes]]:
    """Each item of a bundle body (after the multihop header) as (originaddr, QueryResult
    bytes): the 42 bytes its parent rebuilds, time fields zero but a record's
    timeSyncData. A short item takes its query, result index and tuple header from the
    first, which must be a whole tuple. DecodeError if malformed."""
    items = parse("Bundle", cs.Struct("items" / Bundle, cs.Terminated), body)["items"]
    if not items:
        return []
    first = items[0]["item"]
    if items[0]["short"]:
        raise DecodeError("Bundle", "the first item is short: nothing to take its header from")
    if first["qrType"] == _RECORD and any(item["short"] for item in items):
        raise DecodeError("Bundle", "a short item after a record: records are always whole")
    return [(item["originaddr"], _query_result(item, first)) for item in items]


def _query_result(item: Mapping[str, Any], first: Mapping[str, Any]) -> bytes:
    whole = item["item"]
    head = first if item["short"] else whole
    kind = head["qrType"]
    data = first["data"][:_TUPLE_HEADER] + whole["values"] if item["short"] else whole["data"]
    name, least = ("tuple", _TUPLE_HEADER) if kind == _TUPLE else ("record", _RECORD_HEADER)
    if not least <= len(data) <= RESULT_UNION_LEN:
        raise DecodeError("Bundle", f"a {name} of {len(data)} bytes")
    epoch = (first["epoch"] + whole["epoch_step"]) & 0xFFFF if item["short"] else whole["epoch"]
    union = TupleData if kind == _TUPLE else AggRecord
    result = {
        "qid": head["qid"],
        "result_idx": head["result_idx"],
        "epoch": epoch,
        "qrType": kind,
        "timeSyncData": whole["timeSyncData"] if kind == _RECORD else bytes(TIME_SYNC_LEN),
        "clockCount": 0,
        "lastDiff": 0,
        "d": union.parse(data.ljust(RESULT_UNION_LEN, b"\0")),
    }
    return build("QueryResult", QueryResult, result)
