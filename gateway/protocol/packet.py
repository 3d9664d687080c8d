"""One serial packet (TOS_Msg header + data) in, one typed message out, and back.

:func:`decode_packet` dispatches on the AM type to the layout modules; results (AM 240
and 107) are decoded further when a :class:`ResultSchema` says what the query's fields
and aggregates are. Without one, tuple values are read as 2-byte unsigned fields (the
type of every sensor attribute in the catalog) and aggregate states stay raw.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from motebase.gateway.protocol.aggregates import RingEntry, decode_state
from motebase.gateway.protocol.command import parse_command
from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.event import parse_event, parse_uart_msg
from motebase.gateway.protocol.query import parse_query_message
from motebase.gateway.protocol.request import parse_query_request
from motebase.gateway.protocol.result import (
    QrType,
    WireType,
    decode_tuple_values,
    parse_query_result,
)
from motebase.gateway.protocol.route import parse_route_packet
from motebase.gateway.protocol.status import parse_status
from motebase.gateway.protocol.tos import (
    MHOP_HEADER_LEN,
    TINYDB_PAYLOAD_LEN,
    TOS_HEADER_LEN,
    AmType,
    parse_mhop,
    parse_tos_packet,
)


@dataclass(frozen=True)
class AggregateSchema:
    """An aggregate expression: its aggregate id and constant arguments (window, slide)."""

    op: int
    args: tuple[int, ...] = ()


@dataclass(frozen=True)
class ResultSchema:
    """What the gateway knows about one query, to decode its results fully."""

    field_types: tuple[int, ...] = ()
    aggregates: Mapping[int, AggregateSchema] = field(default_factory=dict)  # by exprIdx
    ring_entry: RingEntry = "int16"
    wide: bool = False  # aggregate states in motebase's wide layout (protocol/aggregates.py)


#: Schemas by qid; a plain sequence of wire types means "tuples of these types".
SchemaLookup = Mapping[int, ResultSchema]


@dataclass(frozen=True)
class DecodedPacket:
    am: int
    header: dict[str, Any]  # addr, type, group, length
    body: dict[str, Any]
    mhop: dict[str, Any] | None = None  # sourceaddr, originaddr, seqno, hopcount

    @property
    def am_name(self) -> str:
        try:
            return AmType(self.am).name
        except ValueError:
            return "UNKNOWN"

    def to_json_dict(self) -> dict[str, Any]:
        """Flat JSON-ready view: am, am_name, the header and multihop fields, body (bytes
        as hex)."""
        out: dict[str, Any] = {"am": self.am, "am_name": self.am_name, **self.header}
        if self.mhop is not None:
            out.update(self.mhop)
        out["body"] = jsonable(self.body)
        return out


def jsonable(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray)):
        return bytes(obj).hex()
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj


_MHOP_AMS = (AmType.QUERY_RESULT, AmType.DIRECTED_DATA, AmType.MULTIHOP_ROUTE)

#: Field types assumed when nobody says: every sensor attribute in the catalog is 2 bytes.
DEFAULT_FIELD_TYPES = (WireType.UINTTWO,) * 32

_SIMPLE_BODIES = {
    AmType.QUERY: parse_query_message,
    AmType.COMMAND: parse_command,
    AmType.QUERY_REQUEST: parse_query_request,
    AmType.EVENT: parse_event,
    AmType.STATUS: parse_status,
    AmType.UART_MSG: parse_uart_msg,
}


def decode_packet(
    data: bytes,
    *,
    schemas: SchemaLookup | None = None,
    field_types: Sequence[int] | None = None,
    max_payload: int = TINYDB_PAYLOAD_LEN,
) -> DecodedPacket:
    """Decode a serial packet. ``schemas`` (by qid) or, for every query, ``field_types``
    refine result decoding. Raises :class:`DecodeError` on malformed input; unknown AM
    types decode to ``{"raw": data}``."""
    header, payload = parse_tos_packet(data, max_payload=max_payload)
    am = header["type"]
    try:
        if am in _SIMPLE_BODIES:
            return DecodedPacket(am, header, _SIMPLE_BODIES[AmType(am)](payload))
        if am in (AmType.QUERY_RESULT, AmType.DIRECTED_DATA):
            mhop, rest = parse_mhop(payload)
            result = parse_query_result(rest)
            schema = _schema_for(result["qid"], schemas, field_types)
            return DecodedPacket(am, header, decode_result_body(result, schema), mhop)
        if am == AmType.MULTIHOP_ROUTE:
            mhop, rest = parse_mhop(payload)
            return DecodedPacket(am, header, parse_route_packet(rest), mhop)
    except DecodeError as exc:
        # Report offsets relative to the packet, past the TOS (and multihop) header.
        base = TOS_HEADER_LEN + (MHOP_HEADER_LEN if am in _MHOP_AMS else 0)
        raise DecodeError(
            f"{_am_label(am)} packet: {exc.kind}",
            exc.reason,
            field=exc.field,
            offset=None if exc.offset is None else base + exc.offset,
        ) from exc
    return DecodedPacket(am, header, {"raw": payload})


def _am_label(am: int) -> str:
    try:
        return f"AM {am} {AmType(am).name}"
    except ValueError:
        return f"AM {am}"


def _schema_for(
    qid: int, schemas: SchemaLookup | None, field_types: Sequence[int] | None
) -> ResultSchema:
    if schemas is not None and qid in schemas:
        return schemas[qid]
    return ResultSchema(field_types=tuple(field_types) if field_types else DEFAULT_FIELD_TYPES)


def decode_result_body(result: dict[str, Any], schema: ResultSchema) -> dict[str, Any]:
    """Replace a parsed QueryResult's raw tuple bytes by ``values`` and decode an aggregate
    record's ``state`` when the schema knows the aggregate."""
    d = result["d"]
    if result["qrType"] == QrType.NOT_AGG:
        values = decode_tuple_values(d["notNull"], d["numFields"], d["fields"], schema.field_types)
        result["d"] = {k: v for k, v in d.items() if k != "fields"} | {"values": values}
    elif result["qrType"] == QrType.AGG_SINGLE_FIELD and d["exprIdx"] in schema.aggregates:
        agg = schema.aggregates[d["exprIdx"]]
        d["op"] = agg.op
        d["state"] = decode_state(agg.op, d["state"], agg.args, schema.ring_entry, schema.wide)
    return result
