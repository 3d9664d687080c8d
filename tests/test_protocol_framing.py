"""Serial framing: CRC, framer bytes, streaming deframer, corruption handling.

The deframer's tests run on both of its paths: ``fast`` (the good 0x42 frames split in C,
csrc/fastlane.c's fastlane_split) and Python alone; the C path is also held to the Python
one frame for frame and count for count."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from motebase.gateway.protocol import framing
from motebase.gateway.protocol.framing import (
    Deframer,
    Frame,
    Protocol,
    _escape,
    crc16,
    encode_frame,
    frame_ack,
    frame_packet,
    frame_packet_ack,
    frame_unknown,
)

C_SPLIT = Deframer().fast
_needs_c = pytest.mark.skipif(not C_SPLIT, reason="built without a C compiler")
#: Run a deframer test on both paths: ``fast`` is Deframer's flag.
both_paths = pytest.mark.parametrize(
    "fast", [pytest.param(False, id="python"), pytest.param(True, id="c", marks=_needs_c)]
)


def _crc_le(data: bytes) -> bytes:
    return _reference_crc16(data).to_bytes(2, "little")


def _reference_crc16(data: bytes, crc: int = 0) -> int:
    """CRC-16/XModem bit by bit, as TinyOS 1.x's crc.h and the Java Packetizer compute it:
    the definition crc16 (binascii.crc_hqx) is checked against."""
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        crc &= 0xFFFF
    return crc


def test_crc16_check_value() -> None:
    # The catalogued check value of CRC-16/XMODEM over the ASCII digits.
    assert crc16(b"123456789") == _reference_crc16(b"123456789") == 0x31C3


@given(st.binary(max_size=300), st.integers(0, 0xFFFF))
def test_crc16_matches_the_bitwise_definition(data: bytes, start: int) -> None:
    assert crc16(data, start) == _reference_crc16(data, start)


def test_crc16_continues_over_chunks() -> None:
    # The start value carries a CRC over split data, as a streaming caller uses it.
    data = bytes(range(256)) * 3
    assert crc16(data[100:], crc16(data[:100])) == crc16(data) == _reference_crc16(data)


@given(st.binary(max_size=300))
def test_escaping_matches_the_bytewise_definition(data: bytes) -> None:
    # 0x7E and 0x7D become 0x7D, byte ^ 0x20; every other byte is itself.
    expected = b"".join(bytes((0x7D, b ^ 0x20)) if b in (0x7D, 0x7E) else bytes((b,)) for b in data)
    assert _escape(data) == expected


def test_ack_frame_bytes() -> None:
    assert frame_ack(14) == b"\x7e\x40\x0e" + _crc_le(b"\x40\x0e") + b"\x7e"


def test_query_frame_escapes_group_and_fwdnode() -> None:
    # The encoder notes: 7e | 41 | seqNo | TOS_Msg | crc | 7e, with 7e -> 7d 5e, 7d -> 7d 5d.
    packet = bytes.fromhex("ffff657d28") + bytes.fromhex("017e00") + bytes(37)
    crc = _crc_le(b"\x41\x0e" + packet)
    expected_body = bytes.fromhex("410effff657d5d28017d5e00") + bytes(37)
    escaped_crc = crc.replace(b"\x7d", b"\x7d\x5d").replace(b"\x7e", b"\x7d\x5e")
    assert frame_packet_ack(packet, 14) == b"\x7e" + expected_body + escaped_crc + b"\x7e"


def test_noack_and_unknown_reply_bytes() -> None:
    assert frame_packet(b"\x01\x02") == b"\x7e\x42\x01\x02" + _crc_le(b"\x42\x01\x02") + b"\x7e"
    assert frame_unknown(0x50) == b"\x7e\xff\x50" + _crc_le(b"\xff\x50") + b"\x7e"


@both_paths
def test_deframer_reads_every_protocol(fast: bool) -> None:
    stream = frame_packet(b"abc") + frame_packet_ack(b"de", 200) + frame_ack(7) + frame_unknown(9)
    deframer = Deframer(fast=fast)
    frames = deframer.feed(stream)
    assert [(f.protocol, f.token, f.payload) for f in frames] == [
        (Protocol.PACKET_NO_ACK, None, b"abc"),
        (Protocol.PACKET_ACK, 200, b"de"),
        (Protocol.ACK, 7, b""),
        (Protocol.UNKNOWN, None, b"\x09"),
    ]
    assert deframer.stats.good == 4
    assert deframer.stats.corrupt == 0


@both_paths
def test_deframer_handles_escaped_bytes_in_payload(fast: bool) -> None:
    payload = bytes([0x7E, 0x7D, 0x5E, 0x5D, 0x7E])
    frame = frame_packet(payload)
    assert frame.count(b"\x7e") == 2  # only the flags
    assert Deframer(fast=fast).feed(frame)[0].payload == payload


@both_paths
def test_deframer_resyncs_after_leading_noise(fast: bool) -> None:
    deframer = Deframer(fast=fast)
    frames = deframer.feed(b"\x01\x02\x03\x7d" + frame_packet(b"ok"))
    assert [f.payload for f in frames] == [b"ok"]
    assert deframer.stats.noise_bytes == 4


@both_paths
def test_deframer_counts_each_reason_and_keeps_next_frame(fast: bool) -> None:
    good = frame_packet(b"good")
    bad_crc = bytearray(frame_packet(b"xyz"))
    bad_crc[2] ^= 0x01
    too_short = b"\x7e\x42\x00\x7e"
    unknown = encode_frame(0x50, b"\x01\x02")
    aborted = b"\x7e\x42\x01\x7d\x7e"  # escape then flag: sender gave up mid-frame
    too_long = frame_packet(bytes(300))
    stream = bytes(bad_crc) + good + too_short + good + unknown + good + aborted + too_long + good
    deframer = Deframer(fast=fast)
    frames = deframer.feed(stream)
    assert [f.payload for f in frames] == [b"good"] * 4
    stats = deframer.stats
    assert (stats.bad_crc, stats.too_short, stats.unknown_protocol) == (1, 1, 1)
    assert (stats.bad_escape, stats.too_long, stats.good) == (1, 1, 4)


@both_paths
@given(st.lists(st.binary(min_size=1, max_size=60), min_size=1, max_size=8), st.data())
def test_deframer_is_independent_of_chunking(
    fast: bool, payloads: list[bytes], data: st.DataObject
) -> None:
    stream = b"".join(frame_packet(p) for p in payloads)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    deframer = Deframer(fast=fast)
    frames = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        frames += deframer.feed(stream[start:end])
    assert [f.payload for f in frames] == payloads


@st.composite
def _corrupted_stream(draw: st.DrawFn) -> tuple[bytes, list[bytes], int]:
    """Frames, some with one byte of their content flipped, with noise between frames
    that begins with a byte no protocol uses (so it can never decode as a frame)."""
    stream = b""
    good: list[bytes] = []
    corrupted = 0
    for _ in range(draw(st.integers(1, 12))):
        payload = draw(st.binary(min_size=0, max_size=60))
        token = draw(st.integers(0, 255))
        content = bytes((Protocol.PACKET_ACK, token)) + payload
        content += crc16(content).to_bytes(2, "little")
        if draw(st.booleans()):
            i = draw(st.integers(0, len(content) - 1))
            flipped = bytearray(content)
            flipped[i] ^= draw(st.integers(1, 255))
            content = bytes(flipped)
            corrupted += 1
        else:
            good.append(payload)
        escaped = content.replace(b"\x7d", b"\x7d\x5d").replace(b"\x7e", b"\x7d\x5e")
        stream += b"\x7e" + escaped + b"\x7e"
        if draw(st.booleans()):
            noise = draw(st.binary(max_size=20).filter(lambda b: b"\x7e" not in b))
            stream += b"\x00" + noise
            corrupted += 1
    return stream + b"\x7e", good, corrupted  # a last flag closes trailing noise


@both_paths
@settings(max_examples=200)
@given(_corrupted_stream(), st.integers(1, 64))
def test_corruption_never_costs_a_good_frame(
    fast: bool, case: tuple[bytes, list[bytes], int], chunk: int
) -> None:
    stream, good, corrupted = case
    deframer = Deframer(fast=fast)
    frames = []
    for i in range(0, len(stream), chunk):
        frames += deframer.feed(stream[i : i + chunk])
    assert [f.payload for f in frames] == good
    assert deframer.stats.good == len(good)
    # A flipped byte that yields 0x7E inside a frame splits it in two, so >=.
    assert deframer.stats.corrupt >= corrupted


class _ByteDeframer:
    """The receiver byte by byte, as the mote's FramerM and Java's Packetizer run it: the
    definition the whole-frame Deframer is held to."""

    def __init__(self, mtu: int) -> None:
        self.mtu = mtu
        self.stats: dict[str, int] = dict.fromkeys(
            ("good", "bad_crc", "too_short", "too_long", "unknown_protocol", "bad_escape"), 0
        )
        self.stats["noise_bytes"] = 0
        self.buf = bytearray()
        self.synced = self.escaped = self.overflow = False

    def feed(self, chunk: bytes) -> list[tuple[int, int | None, bytes]]:
        frames = []
        for byte in chunk:
            if byte == 0x7E:
                frame = self._end()
                if frame is not None:
                    frames.append(frame)
            elif not self.synced:
                self.stats["noise_bytes"] += 1
            elif self.overflow:
                pass
            elif not self.escaped and byte == 0x7D:
                self.escaped = True
            elif len(self.buf) >= self.mtu:
                self.escaped = False
                self.stats["too_long"] += 1
                self.overflow = True
            else:
                self.buf.append(byte ^ 0x20 if self.escaped else byte)
                self.escaped = False
        return frames

    def _end(self) -> tuple[int, int | None, bytes] | None:
        content, escaped, overflow, synced = (
            bytes(self.buf),
            self.escaped,
            self.overflow,
            self.synced,
        )
        self.buf.clear()
        self.escaped = self.overflow = False
        self.synced = True
        if not synced or overflow or (not content and not escaped):
            return None
        if escaped:
            self.stats["bad_escape"] += 1
            return None
        if len(content) < 4:
            self.stats["too_short"] += 1
            return None
        if _reference_crc16(content[:-2]) != int.from_bytes(content[-2:], "little"):
            self.stats["bad_crc"] += 1
            return None
        protocol, rest = content[0], content[1:-2]
        if protocol not in (64, 65, 66, 255):
            self.stats["unknown_protocol"] += 1
            return None
        self.stats["good"] += 1
        if protocol == 66:
            return (protocol, None, rest)
        if protocol == 65:
            return (protocol, rest[0], rest[1:])
        return (protocol, rest[0], b"") if protocol == 64 else (protocol, None, rest[:1])


_wire_bytes = st.lists(
    st.one_of(
        st.builds(frame_packet, st.binary(max_size=40)),
        st.builds(frame_packet_ack, st.binary(max_size=40), st.integers(0, 255)),
        st.builds(frame_ack, st.integers(0, 255)),
        st.binary(max_size=12),  # noise, stray flags and escapes, truncations
        st.sampled_from([b"\x7e", b"\x7d", b"\x7d\x7e", b"\x7e\x7e", b"\x7d\x7d"]),
    ),
    max_size=12,
).map(b"".join)


@both_paths
@settings(max_examples=400, deadline=None)
@given(
    data=_wire_bytes,
    cuts=st.lists(st.integers(0, 600), max_size=6),
    mtu=st.sampled_from([8, 20, 256]),
)
def test_deframer_matches_byte_at_a_time_receiver(
    data: bytes, cuts: list[int], mtu: int, fast: bool
) -> None:
    # Frames, counts and their order are the byte-at-a-time receiver's, however the
    # stream is cut into chunks (the whole-frame receiver keeps partial frames).
    reference = _ByteDeframer(mtu)
    expected = reference.feed(data)
    deframer = Deframer(mtu=mtu, fast=fast)
    assert deframer.fast is fast
    got = []
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    for lo, hi in itertools.pairwise(bounds):
        got += [(int(f.protocol), f.token, f.payload) for f in deframer.feed(data[lo:hi])]
    assert got == expected
    assert deframer.stats.as_dict() == reference.stats


@both_paths
def test_deframer_bounds_an_endless_frame(fast: bool) -> None:
    # A frame that never closes is dropped once past the MTU, not buffered for ever.
    deframer = Deframer(mtu=32, fast=fast)
    deframer.feed(b"\x7e")
    for _ in range(100):
        deframer.feed(b"\x55" * 64)
    assert deframer.stats.too_long == 1
    assert len(deframer._partial) == 0
    (frame,) = deframer.feed(b"\x7e" + frame_packet(b"ok"))
    assert (frame.protocol, frame.payload) == (Protocol.PACKET_NO_ACK, b"ok")


# The C split (csrc/fastlane.c, fastlane_split) against the Python path: it takes the good
# 0x42 frames and leaves every other frame to Python, so the two agree on every frame
# (its type, protocol member, token and payload), every count, after every chunk.

_RAMP = bytes(range(256)) * 3  # payloads cut from it: 0x7D and 0x7E need escaping
_u16 = st.integers(0, 0xFFFF)
_STRAYS = [b"\x7e", b"\x7e\x7e", b"\x7e\x7e\x7e", b"\x7d", b"\x7d\x7e", b"\x7d\x7d", b"\x7d\x5e"]


def _typed(frames: list[Frame]) -> list[tuple[object, ...]]:
    return [
        (type(f), type(f.protocol), int(f.protocol), f.token, type(f.payload), f.payload)
        for f in frames
    ]


def _split_item(kind: str, payload: bytes, token: int, at: int, bit: int) -> bytes:
    """One piece of a stream: a frame of ``kind``, whole or broken, or noise."""
    if kind == "packet":
        return frame_packet(payload)
    if kind == "acked":
        return frame_packet_ack(payload, token)
    if kind == "ack":
        return frame_ack(token)
    if kind == "unknown_reply":
        return frame_unknown(token)
    if kind == "unknown":  # a protocol byte nobody uses; also 0x40-0x42 with a short body
        return encode_frame(token, payload[:3])
    if kind == "noise":
        return payload[:12]
    if kind == "strays":
        return _STRAYS[token % len(_STRAYS)]
    frame = bytearray(frame_packet(payload))
    if kind == "bad_crc":  # one bit of the content: a CRC error, or a flag, escape, ...
        frame[1 + at % (len(frame) - 2)] ^= 1 << bit
    elif kind == "open_escape":  # the sender gave up mid-frame
        frame[-1:-1] = b"\x7d"
    elif kind == "cut":  # no closing flag: the next item's flag ends it
        del frame[1 + at % (len(frame) - 1) :]
    return bytes(frame)


_KINDS = ["packet"] * 6 + [
    "acked",
    "ack",
    "unknown_reply",
    "unknown",
    "noise",
    "strays",
    "bad_crc",
    "open_escape",
    "cut",
]


@st.composite
def _split_items(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(_KINDS))
    # mostly short packets; now and then one longer than some MTU (or than C's 512 bytes)
    size = draw(st.integers(0, 50) | st.sampled_from([255, 256, 509, 510, 600]))
    start = draw(st.integers(0, 255))
    payload = _RAMP[start : start + size] if size <= 512 else bytes(size)
    return _split_item(
        kind, payload, draw(st.integers(0, 255)), draw(_u16), draw(st.integers(0, 7))
    )


def _both_feeds(
    data: bytes, bounds: list[int], mtu: int, buffers: tuple[int, int] | None = None
) -> tuple[Deframer, Deframer]:
    python, c = Deframer(mtu=mtu, fast=False), Deframer(mtu=mtu)
    assert (python.fast, c.fast) == (False, True)
    if buffers is not None:  # small ones: the C call fills them and is called again
        c._split = framing._Splitter(mtu, *buffers)
    for lo, hi in itertools.pairwise(bounds):
        assert _typed(c.feed(data[lo:hi])) == _typed(python.feed(data[lo:hi]))
        assert c.stats == python.stats
    return python, c


@_needs_c
@settings(max_examples=400, deadline=None)
@given(
    items=st.lists(_split_items(), max_size=24),
    cuts=st.lists(st.integers(0, 3000), max_size=6),
    mtu=st.sampled_from([0, 4, 8, 20, 64, 256, 600]),
    buffers=st.sampled_from([None, (1, 1), (64, 2), (600, 1000)]),
)
def test_c_split_frames_and_counts_what_python_does(
    items: list[bytes], cuts: list[int], mtu: int, buffers: tuple[int, int] | None
) -> None:
    data = b"".join(items)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    _both_feeds(data, bounds, mtu, buffers)


@_needs_c
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_c_split_matches_python_over_long_streams(seed: int) -> None:
    # Long enough to fill the C call's buffers at their real sizes: 5,000 packets of one
    # byte in one 64 KiB chunk pass its 4,096 packets, and 300 of 250 bytes fed at once its
    # 64 KiB of packet bytes; then a random mix, cut at random as well.
    rng = random.Random(seed)
    items = [frame_packet(bytes((i & 0xFF,))) for i in range(5000)]
    items += [frame_packet(_RAMP[i % 256 : i % 256 + 250]) for i in range(300)]
    for _ in range(8000):
        size = rng.choice([rng.randrange(60), rng.randrange(60), rng.randrange(700)])
        start = rng.randrange(256)
        payload = _RAMP[start : start + size] if size <= 512 else bytes(size)
        kind = rng.choice(_KINDS)
        token, at, bit = rng.randrange(256), rng.randrange(1 << 16), rng.randrange(8)
        items.append(_split_item(kind, payload, token, at, bit))
    data = b"".join(items)
    cuts = sorted(rng.sample(range(1, len(data)), 40))
    for bounds in (
        [0, len(data)],
        [*range(0, len(data), 1 << 16), len(data)],
        [0, *cuts, len(data)],
    ):
        python, _ = _both_feeds(data, bounds, 256)
        assert python.stats.good > 5000
        assert python.stats.corrupt > 1000


@_needs_c
def test_c_split_takes_the_good_packet_frames() -> None:
    # Not vacuous: C takes every good 0x42 frame, and stops at the start of any other.
    packets = [bytes((i,)) * i for i in range(1, 40)] + [b"\x7e\x7d" * 9]
    data = b"".join(frame_packet(p) for p in packets)
    split = framing._Splitter(256)
    split.frames = []
    assert split.walk(data, 1, len(data)) == len(data)
    assert _typed(split.frames) == _typed([Frame(Protocol.PACKET_NO_ACK, None, p) for p in packets])
    assert split.taken == len(packets)
    bad_crc = bytearray(frame_packet(b"abc"))
    bad_crc[2] ^= 1
    for other in (
        frame_packet_ack(b"x", 1),
        frame_ack(1),
        frame_unknown(1),
        encode_frame(0x50, b"xy"),
        bytes(bad_crc),
        frame_packet(b""),  # too short
        frame_packet(bytes(300)),  # too long
        frame_packet(b"y")[:-1] + b"\x7d\x7e",  # open escape
    ):
        split.frames, split.taken = [], 0
        stream = data + other[1:] + frame_packet(b"z")[1:]
        assert split.walk(stream, 1, len(stream)) == len(data)
        assert split.taken == len(split.frames) == len(packets)
