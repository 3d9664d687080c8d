"""Golden byte strings written by hand from the wire-format tables, and decode errors."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from motebase.gateway.protocol import (
    AggOp,
    AggregateSchema,
    AmType,
    DecodeError,
    EncodeError,
    ResultSchema,
    build_command,
    build_query_message,
    build_query_result,
    build_tos_packet,
    decode_packet,
    parse_query_message,
)

HEADER = "017e0000{nf:02x}{ne:02x}ff{flags:02x}{epoch}{type:02x}{idx:02x}"
SYNC = "00000000000000"  # timeSyncData, clockCount


def _query(
    u: str,
    *,
    nf: int = 1,
    ne: int = 0,
    flags: int = 0,
    epoch: str = "6600",
    type: int = 0,
    idx: int = 0,
) -> bytes:
    head = HEADER.format(nf=nf, ne=ne, flags=flags, epoch=epoch, type=type, idx=idx)
    data = bytes.fromhex(head + SYNC + u)
    return data + bytes(40 - len(data))


SELECT_LIGHT_FIELD = _query("6c696768740000000004")  # name "light", op 0, UINTTWO


def test_select_light_field_message_matches_java() -> None:
    body = {"qid": 1, "numFields": 1, "u": {"name": "light", "op": 0, "type": 4}}
    packet = build_tos_packet(0xFFFF, AmType.QUERY, 0x7D, build_query_message(body))
    assert packet == bytes.fromhex("ffff657d28") + SELECT_LIGHT_FIELD
    decoded = decode_packet(packet)
    assert decoded.am_name == "QUERY"
    assert decoded.header == {"addr": 0xFFFF, "type": 101, "group": 0x7D, "length": 40}
    assert decoded.body["u"] == {"name": "light", "op": 0, "type": 4}
    assert decoded.body["fwdNode"] == 0x7E and decoded.body["epochDuration"] == 102


def test_selection_expression_light_gt_200() -> None:
    # opType 0 | idx | field 0, op GT(2), value 200 | 8 pad | fieldOp, fieldConst, opState
    wire = _query("0000000002c800" + "00" * 8 + "000000000000", ne=1, type=1)
    msg = parse_query_message(wire)
    assert msg["type"] == 1 and msg["numExprs"] == 1
    assert msg["u"]["opFlags"] == {"success": False, "isStringExp": False, "opType": 0}
    assert msg["u"]["ex"] == {"field": 0, "op": 2, "value": 200}
    assert build_query_message(msg) == wire


def test_temporal_aggregate_winavg_8_4() -> None:
    # winavg(8, 4, light) epoch duration 256 -> 25 units; opType 2, op 7, args 08 04 00 00
    u = "02000000ffff000000000708040000000000000000"
    wire = _query(u, ne=1, type=1, epoch="1900")
    msg = parse_query_message(wire)
    assert msg["epochDuration"] == 25
    assert msg["u"]["ex"] == {
        "field": 0,
        "groupingField": -1,
        "groupFieldOp": 0,
        "groupFieldConst": 0,
        "op": 7,
        "args": [8, 4, 0, 0],
    }
    assert build_query_message(msg) == wire


def test_aggregate_with_field_arithmetic_and_string_selection() -> None:
    # avg(light + 10): opType 1, op AVG 5, fieldOp ADD 3, fieldConst 10
    agg = _query("01000000ffff00000000050000000003000a000000", ne=1, type=1)
    msg = parse_query_message(agg)
    assert msg["u"]["ex"]["op"] == 5 and (msg["u"]["fieldOp"], msg["u"]["fieldConst"]) == (3, 10)
    # name = "abc": isStringExp (bit 6) with opType 0; op EQ, field 2, s "abc"
    string = _query("400000020061626300000000000000000000000000", ne=1, type=1)
    msg = parse_query_message(string)
    assert msg["u"]["opFlags"]["isStringExp"] is True
    assert msg["u"]["ex"] == {"op": 0, "field": 2, "s": "abc"}
    assert build_query_message(msg) == string


def test_command_buffer_output_action() -> None:
    # output action SetSnd(512): bufferType 3 (flag byte 0x18), type BUFFER, hasParam 0
    wire = _query("536574536e640000000002", flags=0x18, type=2)
    msg = parse_query_message(wire)
    assert msg["flags"]["bufferType"] == 3
    assert msg["u"] == {"name": "SetSnd", "hasParam": False, "param": 512}
    assert build_query_message(msg) == wire


def test_ram_buffer_bitfields_are_lsb_first() -> None:
    # hasOutput bit0, hasInput bit1, create bit2, numRows bits 3-15: 10 rows, create, output
    wire = _query("55006f75740000000000696e0000000000000000", flags=0x11, type=2)
    msg = parse_query_message(wire)
    assert msg["flags"] == {
        "bufferType": 2,
        "hasForClause": False,
        "hasEvent": False,
        "fromCatalogBuffer": True,
    }
    assert msg["u"]["flags"] == {
        "numRows": 10,
        "create": True,
        "hasInput": False,
        "hasOutput": True,
    }
    assert (msg["u"]["outBufName"], msg["u"]["inBufName"]) == ("out", "in")
    assert build_query_message(msg) == wire


def test_event_nepochs_and_delete_messages() -> None:
    event = _query("6576740000000000", flags=0x02, type=3)
    assert parse_query_message(event)["u"] == {"eventName": "evt"}
    nepochs = _query("6400", flags=0x04, type=4)
    assert parse_query_message(nepochs)["u"] == {"numEpochs": 100}
    delete = bytearray(_query("03"))
    delete[3] = 1  # msgType DEL, ttl 3
    assert parse_query_message(bytes(delete))["u"] == {"ttl": 3}
    drop = bytearray(_query("03"))
    drop[3] = 5
    assert parse_query_message(bytes(drop))["u"] == {"ttl": 3}


RESULT_HEADER = "7e00f07d3103000300010001"  # to UART, AM 240, len 49; mhop


def _result(qr: str) -> bytes:
    data = bytes.fromhex(RESULT_HEADER + qr)
    return data + bytes(5 + 49 - len(data))


def test_tuple_result_with_null_field() -> None:
    # qid 1, idx 0, epoch 5, qrType 2, sync 7 B, lastDiff | tuple qid 1, 3 fields, notNull 0b101
    packet = _result("0100050002" + SYNC + "00000103050000002c010700")
    decoded = decode_packet(packet, field_types=[4, 4, 4])
    assert decoded.mhop == {"sourceaddr": 3, "originaddr": 3, "seqno": 1, "hopcount": 1}
    assert decoded.body["epoch"] == 5 and decoded.body["qrType"] == 2
    assert decoded.body["d"] == {"qid": 1, "numFields": 3, "notNull": 5, "values": [300, None, 7]}
    # Sizes follow the wire types: a 1-byte third field reads only 07.
    assert decode_packet(packet, field_types=[4, 4, 2]).body["d"]["values"] == [300, None, 7]
    assert decode_packet(packet, field_types=[1, 6, 1]).body["d"]["values"] == [0x2C, None, 1]
    # Without types every field is taken as 2 bytes.
    assert decode_packet(packet).body["d"]["values"] == [300, None, 7]
    json = decoded.to_json_dict()
    assert (json["am"], json["am_name"], json["addr"], json["length"]) == (
        240,
        "QUERY_RESULT",
        0x7E,
        49,
    )
    assert json["sourceaddr"] == 3 and json["body"]["timeSyncData"] == "0000000000"


def test_tuple_values_build_like_the_hand_bytes() -> None:
    result = {"qid": 1, "epoch": 5, "qrType": 2, "d": {"values": [300, None, 7]}}
    expected = bytes.fromhex("0100050002" + SYNC + "00000103050000002c010700")
    assert build_query_result(result, [4, 4, 4]) == expected + bytes(42 - len(expected))


def test_aggregate_records_avg_and_windowed_max() -> None:
    avg = _result("0101090003" + SYNC + "000002000064000400")
    schema = {1: ResultSchema(aggregates={0: AggregateSchema(AggOp.AVG)})}
    body = decode_packet(avg, schemas=schema).body
    assert body["result_idx"] == 1 and body["qrType"] == 3
    assert body["d"]["groupNo"] == 2 and body["d"]["exprIdx"] == 0
    assert body["d"]["state"] == {"sum": 100, "count": 4}
    # Without a schema the state stays raw.
    assert decode_packet(avg).body["d"]["state"][:4] == bytes.fromhex("64000400")

    # WINMAX(4, 1): lastResult {value, id}, head, tail, size, nvals, epochsLeft, 3 int16 entries
    winmax = _result("0100090003" + SYNC + "00000000012c01050000020302010a00f4ff0000")
    schema = {1: ResultSchema(aggregates={1: AggregateSchema(AggOp.WINMAX, (4, 1))})}
    state = decode_packet(winmax, schemas=schema).body["d"]["state"]
    assert state["lastResult"] == {"value": 300, "id": 5}
    assert (state["head"], state["tail"], state["size"], state["nvals"], state["epochsLeft"]) == (
        0,
        2,
        3,
        2,
        1,
    )
    assert state["ring"] == [10, -12, 0]
    legacy = ResultSchema(aggregates={1: AggregateSchema(AggOp.WINMAX, (4, 1))}, ring_entry="uint8")
    assert decode_packet(winmax, schemas={1: legacy}).body["d"]["state"]["ring"] == [10, 0, 0xF4]


def test_command_status_request_event_route_uart() -> None:
    cmd = bytes.fromhex("ffff677d14ffff0500000071706f6c6963790064656c746100")
    body = decode_packet(cmd).body
    assert body == {"nodeid": -1, "seqNo": 5, "name": "qpolicy", "params": {"policy": "delta"}}
    assert build_command({"seqNo": 5, "name": "qpolicy", "params": {"policy": "delta"}}) == cmd[5:]
    setrate = bytes.fromhex("ffff677d1e030006000000736574726174650002e803") + bytes(13)
    assert decode_packet(setrate).body["params"] == {"qid": 2, "epochDuration": 1000}
    unknown = bytes.fromhex("ffff677d0a0100070000006f6e00aa")
    assert decode_packet(unknown).body["params"] == {"raw": b"\xaa"}

    status = bytes.fromhex("7e006a7d0a00020107000000000000")
    assert decode_packet(status).body == {
        "fromBase": 0,
        "numQueries": 2,
        "queries": [1, 7, 0, 0, 0, 0, 0, 0],
    }
    request = bytes.fromhex("0300687d09010700000003000400")
    assert decode_packet(request).body == {"qid": 1, "qmsgMask": 7, "reqNode": 3, "fromNode": 4}
    event = bytes.fromhex("ffff697d06020001616263")
    assert decode_packet(event).body == {"nodeid": 2, "fromBase": 1, "data": b"abc"}
    route = bytes.fromhex("fffffa7d120400040002000201000a00020100c8020096")
    decoded = decode_packet(route)
    assert (
        decoded.am_name == "MULTIHOP_ROUTE"
        and decoded.mhop is not None
        and decoded.mhop["hopcount"] == 2
    )
    assert decoded.body == {
        "parent": 1,
        "cost": 10,
        "estEntries": 2,
        "entries": [{"id": 1, "receiveEst": 200}, {"id": 2, "receiveEst": 150}],
        "motebase": None,  # a MintRoute beacon
    }
    # a motebase mote's beacon: the same, the deepest depth below it (5), whether it
    # lists every neighbour it hears (yes) and its route generation (0x0102)
    motebase = bytes.fromhex("fffffa7d180400040002000201000a00020100c80200966d6205010201")
    assert decode_packet(motebase).body["motebase"] == {
        "magic": b"mb",
        "deepest": 5,
        "all_listed": True,
        "generation": 0x0102,
    }
    uart = bytes.fromhex("7e00017d08") + b"hi there"
    assert decode_packet(uart).body == {"text": "hi there"}
    other = bytes.fromhex("ffff097d02abcd")
    assert decode_packet(other).to_json_dict()["body"] == {"raw": "abcd"}


def test_truncated_query_message_names_field_and_offset() -> None:
    with pytest.raises(DecodeError) as info:
        parse_query_message(SELECT_LIGHT_FIELD[:15])
    assert (info.value.kind, info.value.field, info.value.offset) == (
        "QueryMessage",
        "timeSyncData",
        12,
    )
    assert "truncated" in str(info.value)


def test_bad_tos_packets() -> None:
    with pytest.raises(DecodeError) as info:
        decode_packet(bytes.fromhex("ffff657d32") + bytes(50))  # length 50 > 49
    assert (info.value.field, info.value.offset) == ("length", 4)
    with pytest.raises(DecodeError) as info:
        decode_packet(bytes.fromhex("ffff657d28") + bytes(10))
    assert info.value.field == "data" and info.value.offset == 15
    with pytest.raises(DecodeError) as info:
        decode_packet(bytes.fromhex("ffff65"))
    assert info.value.kind == "TOS_Msg"
    # A result whose declared length is too short for a QueryResult.
    with pytest.raises(DecodeError) as info:
        decode_packet(bytes.fromhex("7e00f07d0a") + bytes(10))
    assert info.value.kind.startswith("AM 240 QUERY_RESULT")


def test_tuple_decode_errors() -> None:
    packet = _result("0100050002" + SYNC + "00000103070000002c010700")
    with pytest.raises(DecodeError, match="no wire type for field 2"):
        decode_packet(packet, field_types=[4, 4])
    with pytest.raises(DecodeError, match="field 2 needs 8 bytes"):
        decode_packet(packet, field_types=[9, 9, 9])


def test_encode_errors_are_typed() -> None:
    with pytest.raises(EncodeError, match="char\\[8\\]"):
        build_query_message({"u": {"name": "much_too_long", "op": 0, "type": 4}})
    with pytest.raises(EncodeError):
        build_query_message({"qid": 256, "u": {"name": "x", "op": 0, "type": 4}})
    with pytest.raises(EncodeError, match="exceed 22"):
        build_query_result({"qid": 1, "qrType": 2, "d": {"values": [1] * 6}}, [5] * 6)
    with pytest.raises(EncodeError):
        build_tos_packet(0, 101, 0x7D, bytes(50))


@given(st.binary(max_size=80))
def test_random_bytes_never_raise_anything_but_decode_error(data: bytes) -> None:
    for candidate in (data, bytes.fromhex("7e00f07d31") + data, bytes.fromhex("ffff657d28") + data):
        with contextlib.suppress(DecodeError):
            decode_packet(candidate)
