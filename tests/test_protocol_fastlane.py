"""The C walk of `mote decode --raw` (protocol/fastlane.py) prints what the Python path
prints, counts what it counts, over random streams: tuples of several shapes, bytes that
need escaping, aggregate records, acks, frames with a bad CRC or an open escape, frames
too long, noise, cut into random chunks."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from motebase.gateway.cli.protocol_cmds import _decode_raw, _Decoder
from motebase.gateway.protocol import fastlane
from motebase.gateway.protocol.framing import (
    DEFAULT_MTU,
    Deframer,
    frame_ack,
    frame_packet,
    frame_packet_ack,
)
from motebase.gateway.protocol.result import QrType, WireType, build_query_result
from motebase.gateway.protocol.tos import (
    DEFAULT_GROUP,
    TINYDB_PAYLOAD_LEN,
    UART_ADDR,
    AmType,
    build_mhop,
    build_tos_packet,
)
from motebase.gateway.protocol.tuple_lane import TupleLane

pytestmark = pytest.mark.skipif(not fastlane.available(), reason="built without a C compiler")

TYPES = (WireType.UINTTWO, WireType.INTTWO, WireType.UINTFOUR)
_u16 = st.integers(0, 0xFFFF)


def _tuple(origin: int, epoch: int, values: Sequence[int | None], seqno: int) -> bytes:
    body = build_query_result(
        {"qid": 1, "epoch": epoch, "qrType": QrType.NOT_AGG, "d": {"values": list(values)}},
        TYPES,
    )
    return build_tos_packet(
        UART_ADDR, AmType.QUERY_RESULT, DEFAULT_GROUP, build_mhop(0, origin, seqno, 1, body)
    )


def _record(origin: int, epoch: int) -> bytes:
    body = build_query_result(
        {
            "qid": 2,
            "epoch": epoch,
            "qrType": QrType.AGG_SINGLE_FIELD,
            "d": {"groupNo": 0, "exprIdx": 0, "state": bytes(4)},
        }
    )
    return build_tos_packet(
        UART_ADDR, AmType.QUERY_RESULT, DEFAULT_GROUP, build_mhop(0, origin, 1, 1, body)
    )


@st.composite
def _items(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["tuple"] * 6 + ["record", "ack", "acked", "bad", "noise"]))
    origin, epoch, seqno = draw(st.integers(0, 300)), draw(_u16), draw(st.integers(-128, 127))
    # 0x7E and 0x7D among the values: the frames need escaping
    value = st.sampled_from([0x7E, 0x7D, 0x7D7E, 0]) | st.integers(-0x8000, 0x7FFF)
    values = [
        None if draw(st.booleans()) and i else abs(draw(value)) if i != 1 else draw(value)
        for i in range(3)
    ]
    if kind == "tuple":
        return frame_packet(_tuple(origin, epoch, values, seqno))
    if kind == "acked":
        return frame_packet_ack(_tuple(origin, epoch, values, seqno), draw(st.integers(0, 255)))
    if kind == "record":
        return frame_packet(_record(origin, epoch))
    if kind == "ack":
        return frame_ack(draw(st.integers(0, 255)))
    if kind == "noise":
        return draw(st.binary(max_size=40))
    frame = bytearray(frame_packet(_tuple(origin, epoch, values, seqno)))
    at = draw(st.integers(1, len(frame) - 2))
    how = draw(st.sampled_from(["flip", "cut", "open_escape", "long"]))
    if how == "flip":
        frame[at] ^= 1 << draw(st.integers(0, 7))
    elif how == "cut":
        del frame[at:-1]
    elif how == "open_escape":
        frame[-1:-1] = b"\x7d"
    else:
        frame[at:at] = b"\x00" * (DEFAULT_MTU + 10)
    return bytes(frame)


def _decode(stream: bytes, chunks: Sequence[int], fast: bool) -> tuple[str, str, dict]:
    out, err = io.StringIO(), io.StringIO()
    decoder = _Decoder(TYPES, TINYDB_PAYLOAD_LEN, out, err)

    class Chunked(io.RawIOBase):
        def __init__(self) -> None:
            self.at, self.k = 0, 0

        def read(self, size: int = -1) -> bytes:
            n = chunks[self.k % len(chunks)]
            self.k += 1
            piece = stream[self.at : self.at + n]
            self.at += len(piece)
            return piece

    _decode_raw(Chunked(), decoder, fast=fast)  # type: ignore[arg-type]
    return out.getvalue(), err.getvalue(), decoder.stats()


@settings(max_examples=400, deadline=None)
@given(
    items=st.lists(_items(), min_size=1, max_size=30),
    chunks=st.lists(st.integers(1, 300), min_size=1, max_size=5),
)
def test_the_c_walk_prints_and_counts_what_python_does(
    items: list[bytes], chunks: list[int]
) -> None:
    stream = b"".join(items)
    assert _decode(stream, chunks, fast=True) == _decode(stream, chunks, fast=False)


def test_the_c_walk_takes_the_frames_of_a_known_shape() -> None:
    # Not vacuous: after the first packet of a shape, C finishes every frame of it.
    frames = [frame_packet(_tuple(i, 7, [i, -i, 0x7E7D], i % 100)) for i in range(10)]
    lane = TupleLane(TYPES, TINYDB_PAYLOAD_LEN)
    assert lane.line(_tuple(0, 1, [1, 2, 3], 0)) is not None
    walker = fastlane.FrameWalker(lane, DEFAULT_MTU)
    data = b"".join(frames)
    stop, text, lines = walker.walk(data, 1, len(data))
    assert (stop, lines) == (len(data), 10)
    expected = "".join(lane.line(Deframer().feed(f)[0].payload) + "\n" for f in frames)
    assert text == expected


def test_the_c_walk_leaves_an_unknown_shape_to_python() -> None:
    lane = TupleLane(TYPES, TINYDB_PAYLOAD_LEN)
    walker = fastlane.FrameWalker(lane, DEFAULT_MTU)
    data = frame_packet(_tuple(3, 7, [1, 2, 3], 0))
    assert walker.walk(data, 1, len(data)) == (1, "", 0)
