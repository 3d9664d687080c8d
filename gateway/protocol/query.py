"""QueryMessage (AM 101, 40 bytes), wire format §5 and the Java encoder notes.

Layout: a 19-byte common header, then the 21-byte union ``u`` whose active member is
chosen by ``msgType`` and ``type``:

========================  ===================================================
DEL / DROP_TABLE          ``{"ttl": int8}``
type 0 FIELD              ``{"name", "op", "type"}``
type 1 EXPR               ``{"opFlags": {"opType", "isStringExp", "success"}, "idx",
                          "ex": <selection | aggregate | temporal | string>,
                          "fieldOp", "fieldConst", "opState"}``
type 2 BUFFER             bufferType 3: ``{"name", "hasParam", "param"}`` (command);
                          bufferType 1/2: ``{"flags": {"hasOutput", "hasInput", "create",
                          "numRows"}, "outBufName", "inBufName", "policy"}`` (RAM)
type 3 EVENT              ``{"eventName"}``
type 4 N_EPOCHS           ``{"numEpochs"}``
anything else             ``{"raw": 21 bytes}``
========================  ===================================================

Bit-fields are allocated from the least-significant bit (GCC on AVR); construct's
BitStruct reads most-significant first, so the members below are listed high bit first.
``RamBufInfo``'s bits span a little-endian 16-bit word, hence the ByteSwapped.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, fixed_cstring, padded_union, parse

QUERY_MESSAGE_LEN = 40
UNION_LEN = 21
EX_UNION_LEN = 13
#: ``epochDuration`` of a ONCE query (``kEPOCH_DUR_ONE_SHOT``).
EPOCH_ONCE = 0x7FFF
#: ``fromBuffer`` when the query samples sensors.
NO_FROM_BUFFER = 0xFF
#: ``groupingField`` of an aggregate without GROUP BY.
NO_GROUPING = -1
#: Java's fwdNode: the UART address.
FWD_FROM_UART = 0x007E
#: ``CmdBufInfo.name`` is ``char[8]``: an OUTPUT ACTION command name is at most 8 Latin-1
#: characters (fixed_cstring: NUL-padded, no NUL when all 8 are used).
COMMAND_NAME_LEN = 8


class MsgType(IntEnum):
    ADD = 0
    DEL = 1
    MODIFY = 2
    RATE = 3
    DROP_TABLE = 5


class QueryPart(IntEnum):
    """QueryMessage ``type``: which part of the query a message carries."""

    FIELD = 0
    EXPR = 1
    BUFFER = 2
    EVENT = 3
    N_EPOCHS = 4
    DROP_TABLE = 5


class BufferType(IntEnum):
    """Output destination, mote numbering (codes 5/6 are swapped in Java, quirk A6)."""

    RADIO = 0
    RAM = 1
    EEPROM = 2
    COMMAND = 3
    ATTRLIST = 4
    COMMANDLIST = 5
    EVENTLIST = 6
    QUERYLIST = 7


class ExprOpType(IntEnum):
    SEL = 0
    AGG = 1
    TEMP_AGG = 2


class SelOp(IntEnum):
    EQ = 0
    NEQ = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


class ArithOp(IntEnum):
    NOOP = 0
    TIMES = 1
    DIVIDE = 2
    ADD = 3
    SUBTRACT = 4
    MOD = 5
    RSHIFT = 6


QueryFlags = cs.BitStruct(
    "bufferType" / cs.BitsInteger(5),  # bits 3-7
    "hasForClause" / cs.Flag,  # bit 2
    "hasEvent" / cs.Flag,  # bit 1
    "fromCatalogBuffer" / cs.Flag,  # bit 0
)

QueryField = cs.Struct(
    "name" / fixed_cstring(8),
    "op" / cs.Int8ul,  # aggregate applied to a nested query's field; 0 normally
    "type" / cs.Int8ul,  # TOSType of a CREATE BUFFER column
)

OpValExpr = cs.Struct("field" / cs.Int16sl, "op" / cs.Int8sl, "value" / cs.Int16sl)

_AGG_FIELDS = (
    "field" / cs.Int16sl,
    "groupingField" / cs.Int16sl,
    "groupFieldOp" / cs.Int16sl,
    "groupFieldConst" / cs.Int16sl,
    "op" / cs.Int8sl,
)
AggregateExpression = cs.Struct(*_AGG_FIELDS)
TemporalAggExpr = cs.Struct(*_AGG_FIELDS, "args" / cs.Array(4, cs.Int8ul))
StringExpr = cs.Struct("op" / cs.Int8sl, "field" / cs.Int16sl, "s" / fixed_cstring(8))

ExprFlags = cs.BitStruct(
    "success" / cs.Flag,  # bit 7, mote scratch
    "isStringExp" / cs.Flag,  # bit 6
    "opType" / cs.BitsInteger(6),  # bits 0-5
)


def _ex_kind(ctx: Any) -> str:
    if ctx.opFlags.isStringExp:
        return "string"
    return {ExprOpType.SEL: "sel", ExprOpType.AGG: "agg", ExprOpType.TEMP_AGG: "tagg"}.get(
        ctx.opFlags.opType, "raw"
    )


Expr = cs.Struct(
    "opFlags" / ExprFlags,
    "idx" / cs.Int8ul,
    "ex"
    / padded_union(
        EX_UNION_LEN,
        _ex_kind,
        {
            "sel": OpValExpr,
            "agg": AggregateExpression,
            "tagg": TemporalAggExpr,
            "string": StringExpr,
        },
    ),
    "fieldOp" / cs.Int16sl,
    "fieldConst" / cs.Int16sl,
    "opState" / cs.Int16ul,  # a mote pointer; meaningless on the wire
)

CmdBufInfo = cs.Struct(
    "name" / fixed_cstring(COMMAND_NAME_LEN),
    "hasParam" / cs.Flag,
    "param" / cs.Int16sl,
)

RamBufInfo = cs.Struct(
    "flags"
    / cs.ByteSwapped(
        cs.BitStruct(
            "numRows" / cs.BitsInteger(13),  # bits 3-15
            "create" / cs.Flag,  # bit 2
            "hasInput" / cs.Flag,  # bit 1
            "hasOutput" / cs.Flag,  # bit 0
        )
    ),
    "outBufName" / fixed_cstring(8),
    "inBufName" / fixed_cstring(8),
    "policy" / cs.Int16ul,  # C enum BufferPolicy: int-sized on AVR (quirk A3)
)


def _u_kind(ctx: Any) -> str:
    if ctx.msgType in (MsgType.DEL, MsgType.DROP_TABLE):
        return "ttl"
    part = ctx.type
    if part == QueryPart.BUFFER:
        buffer_type = ctx.flags.bufferType
        if buffer_type == BufferType.COMMAND:
            return "cmdbuf"
        return "rambuf" if buffer_type in (BufferType.RAM, BufferType.EEPROM) else "raw"
    return {
        QueryPart.FIELD: "field",
        QueryPart.EXPR: "expr",
        QueryPart.EVENT: "event",
        QueryPart.N_EPOCHS: "nepochs",
    }.get(part, "raw")


QueryMessage = cs.Struct(
    "qid" / cs.Int8ul,
    "fwdNode" / cs.Int16ul,
    "msgType" / cs.Int8ul,
    "numFields" / cs.Int8ul,
    "numExprs" / cs.Int8ul,
    "fromBuffer" / cs.Int8ul,
    "flags" / QueryFlags,
    "epochDuration" / cs.Int16sl,  # units of 10 ms; 0x7FFF = ONCE
    "type" / cs.Int8ul,
    "idx" / cs.Int8ul,
    "timeSyncData" / cs.Bytes(5),
    "clockCount" / cs.Int16sl,
    "u"
    / padded_union(
        UNION_LEN,
        _u_kind,
        {
            "ttl": cs.Struct("ttl" / cs.Int8sl),
            "field": QueryField,
            "expr": Expr,
            "cmdbuf": CmdBufInfo,
            "rambuf": RamBufInfo,
            "event": cs.Struct("eventName" / fixed_cstring(8)),
            "nepochs": cs.Struct("numEpochs" / cs.Int16sl),
        },
    ),
)
assert QueryMessage.sizeof() == QUERY_MESSAGE_LEN


def query_message_defaults() -> dict[str, Any]:
    """The common header as the Java tools fill it (ADD, fwdNode UART, sensors, radio)."""
    return {
        "qid": 0,
        "fwdNode": FWD_FROM_UART,
        "msgType": MsgType.ADD,
        "numFields": 0,
        "numExprs": 0,
        "fromBuffer": NO_FROM_BUFFER,
        "flags": {
            "bufferType": BufferType.RADIO,
            "hasForClause": False,
            "hasEvent": False,
            "fromCatalogBuffer": False,
        },
        "epochDuration": 102,
        "type": QueryPart.FIELD,
        "idx": 0,
        "timeSyncData": bytes(5),
        "clockCount": 0,
    }


def build_query_message(msg: Mapping[str, Any]) -> bytes:
    """40 bytes from a dict with the field names above. Header keys that are missing take
    :func:`query_message_defaults`; ``u`` must be given (a dict of the active member)."""
    full = {**query_message_defaults(), **msg}
    return build("QueryMessage", QueryMessage, full)


def parse_query_message(data: bytes) -> dict[str, Any]:
    return parse("QueryMessage", QueryMessage, data)
