"""Build then parse gives back the same message, for every message kind (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from motebase.gateway.protocol import (
    AggOp,
    AggregateSchema,
    ResultSchema,
    build_command,
    build_event,
    build_mhop,
    build_query_message,
    build_query_request,
    build_query_result,
    build_route_packet,
    build_status,
    build_tos_packet,
    decode_packet,
    decode_state,
    encode_state,
    parse_command,
    parse_event,
    parse_query_message,
    parse_query_request,
    parse_route_packet,
    parse_status,
)
from motebase.gateway.protocol.aggregates import WINDOWED, state_size
from motebase.gateway.protocol.command import KNOWN_COMMANDS, PARAM_LAYOUT, ParamType
from motebase.gateway.protocol.result import FIELD_VALUE, WireType

u8 = st.integers(0, 0xFF)
i8 = st.integers(-128, 127)
u16 = st.integers(0, 0xFFFF)
i16 = st.integers(-0x8000, 0x7FFF)
u32 = st.integers(0, 0xFFFFFFFF)
name8 = st.text(st.characters(min_codepoint=1, max_codepoint=255), max_size=8)


def _header(msg_type: int, part: int, buffer_type: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "qid": u8,
            "fwdNode": u16,
            "msgType": st.just(msg_type),
            "numFields": u8,
            "numExprs": u8,
            "fromBuffer": u8,
            "flags": st.fixed_dictionaries(
                {
                    "bufferType": st.just(buffer_type),
                    "hasForClause": st.booleans(),
                    "hasEvent": st.booleans(),
                    "fromCatalogBuffer": st.booleans(),
                }
            ),
            "epochDuration": i16,
            "type": st.just(part),
            "idx": u8,
            "timeSyncData": st.binary(min_size=5, max_size=5),
            "clockCount": i16,
        }
    )


def _with_u(
    header: st.SearchStrategy[dict[str, Any]], u: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(header, u).map(lambda hu: {**hu[0], "u": hu[1]})


_agg = {"field": i16, "groupingField": i16, "groupFieldOp": i16, "groupFieldConst": i16, "op": i8}
_ex_by_kind = {
    (0, False): st.fixed_dictionaries({"field": i16, "op": i8, "value": i16}),
    (1, False): st.fixed_dictionaries(_agg),
    (2, False): st.fixed_dictionaries({**_agg, "args": st.lists(u8, min_size=4, max_size=4)}),
    (0, True): st.fixed_dictionaries({"op": i8, "field": i16, "s": name8}),
}


def _expr(kind: tuple[int, bool]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "opFlags": st.fixed_dictionaries(
                {
                    "success": st.booleans(),
                    "isStringExp": st.just(kind[1]),
                    "opType": st.just(kind[0]),
                }
            ),
            "idx": u8,
            "ex": _ex_by_kind[kind],
            "fieldOp": i16,
            "fieldConst": i16,
            "opState": u16,
        }
    )


_ram = st.fixed_dictionaries(
    {
        "flags": st.fixed_dictionaries(
            {
                "numRows": st.integers(0, 8191),
                "create": st.booleans(),
                "hasInput": st.booleans(),
                "hasOutput": st.booleans(),
            }
        ),
        "outBufName": name8,
        "inBufName": name8,
        "policy": u16,
    }
)

query_messages = st.one_of(
    _with_u(_header(0, 0, 0), st.fixed_dictionaries({"name": name8, "op": u8, "type": u8})),
    *(_with_u(_header(0, 1, 0), _expr(kind)) for kind in _ex_by_kind),
    _with_u(
        _header(2, 2, 3),
        st.fixed_dictionaries({"name": name8, "hasParam": st.booleans(), "param": i16}),
    ),
    _with_u(_header(0, 2, 1), _ram),
    _with_u(_header(0, 2, 2), _ram),
    _with_u(_header(0, 3, 0), st.fixed_dictionaries({"eventName": name8})),
    _with_u(_header(3, 4, 0), st.fixed_dictionaries({"numEpochs": i16})),
    _with_u(_header(1, 0, 0), st.fixed_dictionaries({"ttl": i8})),
    _with_u(_header(5, 5, 0), st.fixed_dictionaries({"ttl": i8})),
)


@given(query_messages)
def test_query_message_roundtrip(msg: dict[str, Any]) -> None:
    wire = build_query_message(msg)
    assert len(wire) == 40
    assert parse_query_message(wire) == msg
    packet = build_tos_packet(0xFFFF, 101, 0x7D, wire)
    assert decode_packet(packet).body == msg


_values_for = {
    WireType.INTONE: i8,
    WireType.UINTONE: u8,
    WireType.INTTWO: i16,
    WireType.UINTTWO: u16,
    WireType.INTFOUR: st.integers(-(2**31), 2**31 - 1),
    WireType.UINTFOUR: u32,
    WireType.TIMESTAMP: u32,
    WireType.STRING: name8,
    WireType.BYTES: st.binary(min_size=8, max_size=8),
}


@st.composite
def _tuples(draw: st.DrawFn) -> tuple[list[int], list[Any]]:
    types: list[int] = []
    values: list[Any] = []
    used = 0
    for _ in range(draw(st.integers(0, 12))):
        wire_type = draw(st.sampled_from(list(WireType)))
        present = draw(st.booleans()) and used + FIELD_VALUE[wire_type].sizeof() <= 22
        types.append(int(wire_type))
        if present:
            used += FIELD_VALUE[wire_type].sizeof()
            values.append(draw(_values_for[wire_type]))
        else:
            values.append(None)
    return types, values


@given(
    _tuples(),
    u8,
    u16,
    st.integers(-128, 127),
    st.fixed_dictionaries({"src": u16, "origin": u16, "seq": i16, "hops": u8}),
)
def test_tuple_result_roundtrip(
    tup: tuple[list[int], list[Any]], qid: int, epoch: int, idx: int, mh: dict[str, int]
) -> None:
    types, values = tup
    result = {"qid": qid, "result_idx": idx, "epoch": epoch, "qrType": 2, "d": {"values": values}}
    payload = build_mhop(
        mh["src"], mh["origin"], mh["seq"], mh["hops"], build_query_result(result, types)
    )
    decoded = decode_packet(
        build_tos_packet(0x7E, 240, 0x7D, payload), schemas={qid: ResultSchema(tuple(types))}
    )
    assert decoded.mhop == {
        "sourceaddr": mh["src"],
        "originaddr": mh["origin"],
        "seqno": mh["seq"],
        "hopcount": mh["hops"],
    }
    assert decoded.body["d"]["values"] == values
    assert decoded.body["d"]["numFields"] == len(values)
    assert (decoded.body["qid"], decoded.body["epoch"], decoded.body["result_idx"]) == (
        qid,
        epoch,
        idx,
    )


_FIXED_STATE_VALUES = {
    AggOp.SUM: st.fixed_dictionaries({"value": i16, "id": i16}),
    AggOp.MIN: st.fixed_dictionaries({"value": i16, "id": i16}),
    AggOp.MAX: st.fixed_dictionaries({"value": i16, "id": i16}),
    AggOp.CNT: st.fixed_dictionaries({"value": i16, "id": i16}),
    AggOp.AVG: st.fixed_dictionaries({"sum": i16, "count": u16}),
    AggOp.EXPAVG: st.fixed_dictionaries({"value": i16, "epochsLeft": u8}),
    AggOp.DELTA: st.fixed_dictionaries({"value": i16, "lastValue": i16, "epochsLeft": u8}),
    AggOp.TREND: st.fixed_dictionaries(
        {"value": i16, "lastVal": i16, "trend": i16, "epochsLeft": u8}
    ),
}


@st.composite
def _agg_states(draw: st.DrawFn) -> tuple[AggOp, tuple[int, ...], str, dict[str, Any]]:
    op = draw(st.sampled_from([*_FIXED_STATE_VALUES, *WINDOWED]))
    if op not in WINDOWED:
        return op, (), "int16", draw(_FIXED_STATE_VALUES[op])
    ring_entry = draw(st.sampled_from(["int16", "uint8"]))
    w = draw(st.integers(0, 12))
    s = draw(st.integers(0, 12))
    size = state_size(op, (w, s), ring_entry)  # type: ignore[arg-type]
    if size is None or size > 25:
        s = w  # keep it inside one record: a ring of one
    n = w - s if w > s else 1
    pair = st.fixed_dictionaries({"sum": i16, "count": u16})
    last = pair if op == AggOp.WINAVG else st.fixed_dictionaries({"value": i16, "id": i16})
    entry = pair if op == AggOp.WINAVG else (i16 if ring_entry == "int16" else u8)
    state = draw(
        st.fixed_dictionaries(
            {
                "lastResult": last,
                "head": u8,
                "tail": u8,
                "size": u8,
                "nvals": u8,
                "epochsLeft": u8,
                "ring": st.lists(entry, min_size=n, max_size=n),
            }
        )
    )
    return op, (w, s), ring_entry, state


@given(_agg_states(), i16, u8)
def test_aggregate_record_roundtrip(
    case: tuple[AggOp, tuple[int, ...], str, dict[str, Any]], group: int, expr_idx: int
) -> None:
    op, args, ring_entry, state = case
    raw = encode_state(op, state, args, ring_entry)  # type: ignore[arg-type]
    assert decode_state(op, raw, args, ring_entry) == state  # type: ignore[arg-type]
    result = {
        "qid": 9,
        "epoch": 3,
        "qrType": 3,
        "d": {"groupNo": group, "exprIdx": expr_idx, "state": raw},
    }
    payload = build_mhop(1, 1, 0, 1, build_query_result(result))
    schema = ResultSchema(aggregates={expr_idx: AggregateSchema(op, args)}, ring_entry=ring_entry)  # type: ignore[arg-type]
    body = decode_packet(build_tos_packet(0x7E, 240, 0x7D, payload), schemas={9: schema}).body
    assert body["d"] == {"groupNo": group, "exprIdx": expr_idx, "op": op, "state": state}


_param_values = {
    ParamType.STRING: st.text(st.characters(min_codepoint=1, max_codepoint=255), max_size=10),
    ParamType.UINT8: u8,
    ParamType.INT16: i16,
    ParamType.UINT16: u16,
    ParamType.INT32: st.integers(-(2**31), 2**31 - 1),
}
assert set(_param_values) == set(PARAM_LAYOUT)


@st.composite
def _commands(draw: st.DrawFn) -> dict[str, Any]:
    spec = KNOWN_COMMANDS[draw(st.sampled_from(sorted(KNOWN_COMMANDS)))]
    params = {name: draw(_param_values[ptype]) for name, ptype in spec.params}
    return {"nodeid": draw(i16), "seqNo": draw(u32), "name": spec.name, "params": params}


@given(_commands())
def test_command_roundtrip(cmd: dict[str, Any]) -> None:
    assert parse_command(build_command(cmd)) == cmd


@given(
    st.fixed_dictionaries(
        {"fromBase": u8, "numQueries": u8, "queries": st.lists(u8, min_size=8, max_size=8)}
    )
)
def test_status_roundtrip(msg: dict[str, Any]) -> None:
    assert parse_status(build_status(msg)) == msg


@given(st.fixed_dictionaries({"qid": u8, "qmsgMask": u32, "reqNode": u16, "fromNode": u16}))
def test_query_request_roundtrip(msg: dict[str, Any]) -> None:
    assert parse_query_request(build_query_request(msg)) == msg


@given(st.fixed_dictionaries({"nodeid": i16, "fromBase": u8, "data": st.binary(max_size=30)}))
def test_event_roundtrip(msg: dict[str, Any]) -> None:
    assert parse_event(build_event(msg)) == msg


@given(
    st.fixed_dictionaries(
        {
            "parent": u16,
            "cost": u16,
            "entries": st.lists(st.fixed_dictionaries({"id": u16, "receiveEst": u8}), max_size=10),
            "motebase": st.none()
            | st.fixed_dictionaries(
                {
                    "magic": st.just(b"mb"),
                    "deepest": u8,
                    "all_listed": st.booleans(),
                    "generation": u16,
                }
            ),
        }
    )
)
def test_route_roundtrip(msg: dict[str, Any]) -> None:
    assert parse_route_packet(build_route_packet(msg)) == {**msg, "estEntries": len(msg["entries"])}
