"""The tuple lane gives exactly what the full decoder gives -- `mote decode`'s JSON line
and the session's DecodedPacket -- or leaves the packet to it: checked over random
headers, masks, field types and values."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.framing import frame_packet
from motebase.gateway.protocol.packet import ResultSchema, decode_packet
from motebase.gateway.protocol.result import (
    TUPLE_DATA_LEN,
    QrType,
    WireType,
    build_query_result,
    field_size,
)
from motebase.gateway.protocol.tos import (
    DEFAULT_GROUP,
    TINYDB_PAYLOAD_LEN,
    UART_ADDR,
    AmType,
    build_mhop,
    build_tos_packet,
)
from motebase.gateway.protocol.tuple_lane import ResultDecoder, TupleLane

_QID_AT = 5 + 7  # the QueryResult's qid: after the TOS and multihop headers
_u8, _u16, _i16 = st.integers(0, 255), st.integers(0, 0xFFFF), st.integers(-0x8000, 0x7FFF)


@st.composite
def _result_packets(draw: st.DrawFn) -> bytes:
    """An AM 240/107 packet as a mote sends it, every header field drawn, the tuple's
    ``numFields``, ``notNull`` and field bytes drawn as raw as the wire allows."""
    qr_type = draw(st.sampled_from([QrType.NOT_AGG] * 4 + [QrType.AGG_SINGLE_FIELD, 0]))
    if qr_type == QrType.NOT_AGG:
        d = {
            "qid": draw(_u8),
            "numFields": draw(st.integers(0, 12)),
            "notNull": draw(st.integers(0, 0xFFF) | st.integers(0, 0xFFFFFFFF)),
            "fields": draw(st.binary(min_size=TUPLE_DATA_LEN, max_size=TUPLE_DATA_LEN)),
        }
    elif qr_type == QrType.AGG_SINGLE_FIELD:
        d = {"groupNo": draw(_i16), "exprIdx": draw(_u8), "state": draw(st.binary(max_size=25))}
    else:
        d = {"raw": draw(st.binary(max_size=28))}
    result = build_query_result(
        {
            "qid": draw(_u8),
            "result_idx": draw(st.integers(-128, 127)),
            "epoch": draw(_u16),
            "qrType": qr_type,
            "timeSyncData": draw(st.binary(min_size=5, max_size=5)),
            "clockCount": draw(_i16),
            "lastDiff": draw(_i16),
            "d": d,
        }
    )
    payload = build_mhop(draw(_u16), draw(_u16), draw(_i16), draw(_u8), result)
    am = draw(st.sampled_from([AmType.QUERY_RESULT, AmType.DIRECTED_DATA]))
    packet = bytearray(build_tos_packet(draw(_u16), am, draw(_u8), payload))
    # A length byte the data does not match: short, or past the payload size.
    packet[4] = draw(st.sampled_from([packet[4]] * 3 + [packet[4] - 1, TINYDB_PAYLOAD_LEN + 1]))
    return bytes(packet[: draw(st.sampled_from([len(packet)] * 6 + [20, 40]))])


def _to_uart(origin: int, result: dict, types: Sequence[int] | None = None) -> bytes:
    """A QueryResult of query 1, epoch 2 from ``origin``, as the root sends it up."""
    body = build_query_result({"qid": 1, "epoch": 2, **result}, types)
    return build_tos_packet(
        UART_ADDR, AmType.QUERY_RESULT, DEFAULT_GROUP, build_mhop(0, origin, 1, 1, body)
    )


_field_types = st.lists(st.sampled_from([*WireType, 0, 10]), min_size=1, max_size=12)


@settings(max_examples=600, deadline=None)
@given(
    packets=st.lists(_result_packets(), min_size=1, max_size=4),
    types=_field_types,
    edits=st.lists(st.tuples(st.integers(0, 40), _u8), max_size=4),
)
def test_lane_gives_what_the_full_decoder_gives(
    packets: list[bytes], types: list[int], edits: list[tuple[int, int]]
) -> None:
    # Each packet again with one byte changed, after its shape is known: a change to
    # anything the shape depends on must not be printed by the old shape's template.
    variants = []
    for packet in packets:
        for at, byte in edits:
            if at < len(packet):
                variants.append(packet[:at] + bytes((byte,)) + packet[at + 1 :])
    lane = TupleLane(types, TINYDB_PAYLOAD_LEN)
    for packet in packets + variants + packets:
        line, decoded = lane.line(packet), lane.decoded(packet)
        assert (line is None) == (decoded is None)
        if line is None:
            continue
        full = decode_packet(packet, field_types=types, max_payload=TINYDB_PAYLOAD_LEN)
        assert line == json.dumps(full.to_json_dict())
        assert decoded == full


_NUMERIC = [t for t in WireType if t not in (WireType.STRING,)]


@settings(max_examples=200, deadline=None)
@given(
    types=st.lists(st.sampled_from(_NUMERIC), min_size=1, max_size=5).filter(
        lambda ts: sum(map(field_size, ts)) <= TUPLE_DATA_LEN
    ),
    data=st.data(),
)
def test_lane_takes_every_well_formed_tuple(types: list[int], data: st.DataObject) -> None:
    # Not vacuous: a tuple of numbers and bytes, NULLs included, goes the fast way.
    values = [
        None
        if data.draw(st.booleans())
        else data.draw(st.binary(min_size=8, max_size=8))
        if t == WireType.BYTES
        else data.draw(st.integers(0, 100))
        for t in types
    ]
    packet = _to_uart(2, {"qrType": QrType.NOT_AGG, "d": {"values": values}}, types)
    lane = TupleLane(types, TINYDB_PAYLOAD_LEN)
    line, decoded = lane.line(packet), lane.decoded(packet)
    assert line is not None and decoded is not None
    assert decoded.body["d"]["values"] == values
    assert json.loads(line)["body"]["d"]["values"] == [
        v.hex() if isinstance(v, bytes) else v for v in values
    ]


def test_decode_cli_mixes_both_ways_in_order(tmp_path) -> None:
    # A stream of tuples, an aggregate record, a truncated packet and a string tuple:
    # `mote decode --raw` prints each as the full decoder does, in the order received.
    types = (WireType.UINTTWO, WireType.STRING)
    tuple_packet = _to_uart(5, {"qrType": QrType.NOT_AGG, "d": {"values": [7, None]}}, types)
    string_packet = _to_uart(6, {"qrType": QrType.NOT_AGG, "d": {"values": [8, "hall"]}}, types)
    state = {"groupNo": 0, "exprIdx": 0, "state": b"\x05\x00"}
    record = _to_uart(7, {"qrType": QrType.AGG_SINGLE_FIELD, "d": state})
    packets = [tuple_packet, record, tuple_packet[:30], string_packet, tuple_packet]
    raw = tmp_path / "mixed.raw"
    raw.write_bytes(b"".join(frame_packet(p) for p in packets))
    out = subprocess.run(
        [sys.executable, "-c", "from motebase.gateway.cli.main import main; main()",
         "decode", "--raw", str(raw), "--types", "4,8"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    expected = [
        json.dumps(decode_packet(p, field_types=types).to_json_dict())
        for p in packets
        if p is not packets[2]
    ]
    assert out.stdout.splitlines() == expected
    (error,) = [json.loads(line) for line in out.stderr.splitlines()]
    assert error["kind"].startswith("AM 240") or error["field"] is not None


@settings(max_examples=300, deadline=None)
@given(
    packets=st.lists(_result_packets(), min_size=1, max_size=4),
    schemas=st.dictionaries(st.integers(0, 255), _field_types | st.just([]), max_size=3).map(
        lambda d: {qid: ResultSchema(field_types=tuple(t)) for qid, t in d.items()}
    ),
)
def test_the_sessions_decoder_gives_what_decode_packet_gives(
    packets: list[bytes], schemas: dict[int, ResultSchema]
) -> None:
    # Per query schemas, as a session keeps them; each packet as a result of every known
    # query, and of whatever unknown one it came with.
    retagged = [p[:_QID_AT] + bytes((q,)) + p[_QID_AT + 1 :] for p in packets for q in schemas]
    decoder = ResultDecoder(schemas)
    for packet in (packets + retagged) * 2:
        try:
            expected = decode_packet(packet, schemas=schemas)
        except DecodeError as exc:
            with pytest.raises(DecodeError) as caught:
                decoder.decode(packet)
            assert str(caught.value) == str(exc)
            continue
        assert decoder.decode(packet) == expected
