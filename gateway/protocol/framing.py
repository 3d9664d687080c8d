"""TinyOS 1.x serial framing (mote ``FramerM`` / Java ``Packetizer``), wire format §2.

A frame on the serial line is::

    0x7E | protocol | [token] | payload | crc16 LE | 0x7E

with 0x7E and 0x7D inside the flags sent as ``0x7D, byte ^ 0x20``. The CRC is CRC-16
poly 0x1021, initial value 0, non-reflected, no final XOR (XModem) over the unescaped
protocol byte, token and payload.

:class:`Deframer` is a streaming receiver: feed it whatever chunks the port returns and it
hands back complete, CRC-checked frames. Anything else (line noise, truncated or corrupt
frames, protocols it does not know) is counted in :class:`FramingStats` and skipped. It
never raises and a bad frame never costs the next good one: every 0x7E restarts the
receiver, so sync is regained at the next flag.

Where the gateway was built with its C fast lane (protocol/csrc/fastlane.h),
:meth:`Deframer.feed` takes the common frame, a good 0x42 packet, in C (``fastlane_split``)
and leaves every other one to the Python path below, one frame at a time; without the C
lane, or with ``Deframer(fast=False)``, all of it is Python. Frames and counts are the same
either way (tests/test_protocol_framing.py).
"""

from __future__ import annotations

import binascii
import itertools
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import IntEnum
from typing import NamedTuple

try:  # the extension module alone: protocol/fastlane.py imports the tuple lane
    from motebase.gateway.protocol._fastlane import ffi as _ffi
    from motebase.gateway.protocol._fastlane import lib as _lib
except ImportError:  # built without a C compiler: feed is Python alone
    _ffi = _lib = None

FLAG = 0x7E
ESCAPE = 0x7D
ESCAPE_XOR = 0x20

#: Java's receive MTU (unescaped bytes between the flags, CRC included).
DEFAULT_MTU = 256
#: Java ignores anything shorter between flags: protocol + token + CRC of an ack.
MIN_FRAME = 4


class Protocol(IntEnum):
    """Protocol byte, the first byte inside a frame."""

    ACK = 64  # token being acknowledged
    PACKET_ACK = 65  # token, then a packet the receiver must acknowledge
    PACKET_NO_ACK = 66  # a packet
    UNKNOWN = 255  # reply to an unknown protocol byte; data = that byte


def crc16(data: bytes, crc: int = 0) -> int:
    """CRC-16/XModem: poly 0x1021, init 0, MSB-first, no final XOR.

    ``binascii.crc_hqx`` is exactly this CRC (CCITT polynomial, caller-chosen start), in
    C: a frame costs one call instead of eight Python steps per byte."""
    return binascii.crc_hqx(data, crc)


class Frame(NamedTuple):
    """One good frame. ``token`` is set for protocols 64 and 65, ``payload`` is the packet
    (65/66), empty for an ack (64), or the one unknown protocol byte (255). A named
    tuple: one is made per packet on the gateway's hot path (issue 14)."""

    protocol: Protocol
    token: int | None
    payload: bytes


@dataclass
class FramingStats:
    """What a :class:`Deframer` has seen, by outcome."""

    good: int = 0
    bad_crc: int = 0
    too_short: int = 0
    too_long: int = 0
    unknown_protocol: int = 0
    bad_escape: int = 0  # 0x7D followed by the flag: the sender aborted mid-frame
    noise_bytes: int = 0  # bytes seen before the first flag

    @property
    def corrupt(self) -> int:
        return (
            self.bad_crc + self.too_short + self.too_long + self.unknown_protocol + self.bad_escape
        )

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def add(self, other: FramingStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


class Deframer:
    """Streaming frame receiver; see the module docstring.

    It works on whole frames, not bytes: a chunk is split at the flags (bytes.split, or the
    C split of the module docstring), and the text between two flags is unescaped and
    checked at once. The outcome is the one a byte-at-a-time receiver reaches (0x7D escapes
    the byte after it, whatever it is; a frame is too long once its unescaped bytes pass
    the MTU; 0x7D right before a flag is an aborted frame), and
    tests/test_protocol_framing.py holds it to one, with ``fast`` and without.

    ``fast=False`` keeps :meth:`feed` in Python even where the C split is built.
    """

    def __init__(self, mtu: int = DEFAULT_MTU, *, fast: bool = True) -> None:
        self.mtu = mtu
        self.stats = FramingStats()
        self._partial = b""  # escaped bytes since the last flag
        self._synced = False  # a flag has been seen; bytes are frame content
        self._overflow = False  # current frame exceeded the MTU; drop until next flag
        self._fast = fast and _lib is not None
        self._split: _Splitter | None = None  # made on the first feed: feed_walk needs none

    @property
    def fast(self) -> bool:
        """Whether :meth:`feed` takes the good 0x42 frames in C."""
        return self._fast

    def feed(self, chunk: bytes) -> list[Frame]:
        """The frames ``chunk`` completes, in order; the rest is counted in :attr:`stats`."""
        if not self._fast:
            return self._feed_python(chunk)
        split = self._split
        if split is None:
            split = self._split = _Splitter(self.mtu)
        frames: list[Frame] = []
        split.frames = frames
        self.feed_walk(chunk, split.walk, frames.append)
        split.frames = _NO_FRAMES
        self.stats.good += split.taken
        split.taken = 0
        return frames

    def _feed_python(self, chunk: bytes) -> list[Frame]:
        parts = (
            (self._partial + chunk).split(_FLAG_BYTE) if self._partial else chunk.split(_FLAG_BYTE)
        )
        self._partial = b""
        tail = parts.pop()  # bytes after the last flag: a frame still arriving
        frames: list[Frame] = []
        for raw in parts:
            if not raw and self._synced:  # back-to-back flags: between two frames
                self._overflow = False
                continue
            if not self._synced:
                self.stats.noise_bytes += len(raw)
                self._synced = True
                continue
            frame = None if self._overflow else self._end_of_frame(raw)
            self._overflow = False
            if frame is not None:
                frames.append(frame)
        self._keep(tail)
        return frames

    def feed_walk(
        self,
        chunk: bytes,
        walk: Callable[[bytes, int, int], int],
        on_frame: Callable[[Frame], None],
    ) -> None:
        """:meth:`feed`, with the frames between flags offered to ``walk(data, start, end)``
        first: it takes frames from ``start`` on and returns where it stopped (``end`` or
        the start of a frame it leaves), and that one frame goes the way :meth:`feed` takes
        (counted, and to ``on_frame`` if good). Counts and frames are :meth:`feed`'s."""
        data = self._partial + chunk if self._partial else chunk
        self._partial = b""
        pos = 0
        if not self._synced:
            first = data.find(_FLAG_BYTE)
            if first < 0:
                self.stats.noise_bytes += len(data)
                return
            self.stats.noise_bytes += first
            self._synced = True
            pos = first + 1
        last = data.rfind(_FLAG_BYTE)
        if last < pos:
            self._keep(data[pos:])
            return
        if self._overflow:  # the rest of a frame already too long: dropped, uncounted
            pos = data.index(_FLAG_BYTE, pos) + 1
            self._overflow = False
        while pos <= last:
            pos = walk(data, pos, last + 1)
            if pos > last:
                break
            end = data.index(_FLAG_BYTE, pos)
            frame = self._end_of_frame(data[pos:end]) if end > pos else None
            if frame is not None:
                on_frame(frame)
            pos = end + 1
        self._keep(data[last + 1 :])

    def _keep(self, tail: bytes) -> None:
        """Hold the start of a frame until its closing flag, bounded by the MTU."""
        if not self._synced:
            self.stats.noise_bytes += len(tail)
        elif not self._overflow:
            # An escaped frame is at most twice its length: only then can it be too long.
            if len(tail) > self.mtu and len(_unescape(tail)[0]) > self.mtu:
                self.stats.too_long += 1
                self._overflow = True
            else:
                self._partial = tail

    def _end_of_frame(self, raw: bytes) -> Frame | None:
        escaped = False
        if _ESCAPE_BYTE in raw:
            content = raw.replace(_ESCAPED_FLAG, _FLAG_BYTE).replace(_ESCAPED_ESCAPE, _ESCAPE_BYTE)
            # Each replacement shortens the frame by one: if every 0x7D was one of the two
            # escapes a sender makes, bytes.replace (in C) did what the loop would.
            if len(raw) - len(content) != raw.count(_ESCAPE_BYTE):
                content, escaped = _unescape(raw)
        else:
            content = raw
        size = len(content)
        if size > self.mtu:
            self.stats.too_long += 1
            return None
        if escaped:
            self.stats.bad_escape += 1
            return None
        if size < MIN_FRAME:
            self.stats.too_short += 1
            return None
        if binascii.crc_hqx(content[:-2], 0) != content[-2] | content[-1] << 8:
            self.stats.bad_crc += 1
            return None
        protocol = content[0]
        # MIN_FRAME guarantees one byte after the protocol: the token of a 64/65 frame.
        if protocol == _PACKET_NO_ACK:
            frame = Frame(Protocol.PACKET_NO_ACK, None, content[1:-2])
        elif protocol == _PACKET_ACK:
            frame = Frame(Protocol.PACKET_ACK, content[1], content[2:-2])
        elif protocol == _ACK:
            frame = Frame(Protocol.ACK, content[1], b"")
        elif protocol == _UNKNOWN:
            frame = Frame(Protocol.UNKNOWN, None, content[1:2])
        else:
            self.stats.unknown_protocol += 1
            return None
        self.stats.good += 1
        return frame


_FLAG_BYTE = bytes((FLAG,))
_ESCAPE_BYTE = bytes((ESCAPE,))
_ESCAPED_FLAG = bytes((ESCAPE, FLAG ^ ESCAPE_XOR))
_ESCAPED_ESCAPE = bytes((ESCAPE, ESCAPE ^ ESCAPE_XOR))


def _unescape(raw: bytes) -> tuple[bytes, bool]:
    """The bytes between two flags unescaped, and whether an escape was left open (0x7D
    last: the sender aborted the frame). Every 0x7D takes the next byte, whatever it is."""
    out = bytearray()
    start = 0
    while (at := raw.find(ESCAPE, start)) >= 0:
        out += raw[start:at]
        if at + 1 == len(raw):
            return bytes(out), True
        out.append(raw[at + 1] ^ ESCAPE_XOR)
        start = at + 2
    out += raw[start:]
    return bytes(out), False


# The protocol bytes as plain ints: comparing with an IntEnum member costs a lookup per frame.
_PACKET_NO_ACK, _PACKET_ACK, _ACK, _UNKNOWN = (
    int(p) for p in (Protocol.PACKET_NO_ACK, Protocol.PACKET_ACK, Protocol.ACK, Protocol.UNKNOWN)
)


#: Packet bytes and packets a splitter's C call may hand back at once; it stops, and
#: :meth:`_Splitter.walk` calls again, when either is full.
_SPLIT_BYTES = 1 << 16
_SPLIT_PACKETS = 1 << 12
_NO_FRAMES: list[Frame] = []  # a splitter's frames between two feeds: none


class _Splitter:
    """A :class:`Deframer`'s C split: the walk its :meth:`Deframer.feed` hands
    :meth:`Deframer.feed_walk`. Its own buffers: cffi lets go of the GIL during the call, so
    two deframers on two threads must not share them."""

    def __init__(
        self, mtu: int, out_bytes: int = _SPLIT_BYTES, max_packets: int = _SPLIT_PACKETS
    ) -> None:
        # Its own lane (the CRC table and the MTU; no shapes). C holds the MTU in 16 bits
        # and takes no frame past FASTLANE_FRAME (512) bytes: a larger MTU clamped is the
        # same check; below 0, 0 leaves every frame to Python, as it should.
        self._lane_storage = _ffi.new("char[]", _lib.fastlane_size())
        self._lane = _ffi.cast("fastlane *", self._lane_storage)
        spec = _ffi.new("fastlane_keyspec *", (0, 0, min(max(mtu, 0), 0xFFFF)))
        _lib.fastlane_init(self._lane, spec)
        new = _ffi.new_allocator(should_clear_after_alloc=False)
        self._out_bytes, self._max_packets = out_bytes, max_packets
        self._out = new("uint8_t[]", out_bytes)
        self._ends = new("uint32_t[]", max_packets)
        self._out_len = _ffi.new("size_t *")
        self._count = _ffi.new("uint32_t *")
        self.frames = _NO_FRAMES  # where walk puts the frames it takes, in order
        self.taken = 0  # how many, for stats.good

    def walk(self, data: bytes, start: int, end: int) -> int:
        """The good 0x42 frames from ``data[start]`` on, through C, appended to
        :attr:`frames`: where it stopped (``end``, or a frame left to Python)."""
        buf = _ffi.from_buffer(data)
        out_len, count, frames = self._out_len, self._count, self.frames
        # tuple.__new__: Frame(...) is a Python call, twice the cost per packet
        new, packet_no_ack = tuple.__new__, Protocol.PACKET_NO_ACK
        while True:
            out_len[0] = count[0] = 0
            stop = _lib.fastlane_split(
                self._lane,
                buf,
                start,
                end,
                self._out,
                self._out_bytes,
                out_len,
                self._ends,
                self._max_packets,
                count,
            )
            n = count[0]
            if not n:
                return stop
            packets = _ffi.buffer(self._out, out_len[0])[:]
            frames += [
                new(Frame, (packet_no_ack, None, packets[a:b]))
                for a, b in itertools.pairwise([0, *_ffi.unpack(self._ends, n)])
            ]
            self.taken += n
            if stop == end:
                return stop
            # Full buffers, or the frame at stop is Python's: the next call takes more, or
            # nothing and says so.
            start = stop


_ESCAPED = {byte: bytes((ESCAPE, byte ^ ESCAPE_XOR)) for byte in (ESCAPE, FLAG)}


def _escape(content: bytes) -> bytes:
    # bytes.replace, in C, instead of a loop per byte; the escape byte first, so that the
    # escapes the flag's replacement adds are not escaped again.
    escape, flag = bytes((ESCAPE,)), bytes((FLAG,))
    return content.replace(escape, _ESCAPED[ESCAPE]).replace(flag, _ESCAPED[FLAG])


def encode_frame(protocol: int, body: bytes) -> bytes:
    """Frame ``protocol`` + ``body`` (token included if any): CRC, escaping and flags."""
    content = bytes((protocol,)) + body
    content += crc16(content).to_bytes(2, "little")
    return bytes((FLAG,)) + _escape(content) + bytes((FLAG,))


def frame_packet(packet: bytes) -> bytes:
    """A packet without acknowledgement (protocol 66), as the mote sends every TOS_Msg."""
    return encode_frame(Protocol.PACKET_NO_ACK, packet)


def frame_packet_ack(packet: bytes, token: int) -> bytes:
    """A packet the receiver must acknowledge with ``token`` (protocol 65)."""
    return encode_frame(Protocol.PACKET_ACK, bytes((token & 0xFF,)) + packet)


def frame_ack(token: int) -> bytes:
    """The acknowledgement (protocol 64) of a 65 frame carrying ``token``."""
    return encode_frame(Protocol.ACK, bytes((token & 0xFF,)))


def frame_unknown(protocol: int) -> bytes:
    """Java's reply (protocol 255) to a frame with an unrecognised protocol byte."""
    return encode_frame(Protocol.UNKNOWN, bytes((protocol & 0xFF,)))
