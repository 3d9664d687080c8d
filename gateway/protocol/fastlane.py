"""Tuple frames in C: the hot loop of ``mote decode --raw`` (csrc/fastlane.h).

The tuple lane (protocol/tuple_lane.py) learns each shape of tuple result from the
construct layouts and checks its first packet against the full decoder. :class:`FrameWalker`
hands the shapes it learned to a C walk over whole frames -- split at the flags, unescape,
CRC, shape key, the lane's JSON template filled in -- and the walk leaves every other frame
(framing errors, acks, aggregates, a shape not learned yet) to the Python path one at a
time, so the output and the counts are the Python path's, byte for byte
(tests/test_protocol_fastlane.py holds it to that).

Optional: a build without a C compiler has no ``_fastlane`` (:func:`available` is False)
and decodes with the Python lanes alone.
"""

from __future__ import annotations

import re
from typing import Any

from motebase.gateway.protocol.tuple_lane import NOT_NULL_END, QR_TYPE_AT, TupleLane

try:
    from motebase.gateway.protocol._fastlane import ffi, lib
except ImportError:  # no C compiler at install: the Python lanes do it all
    ffi = lib = None

# The C walk stops before a line it has no room for; the buffer takes many.
_OUT_BYTES = 1 << 20
_HOLE = re.compile(r"%%|%d|%02x")


def available() -> bool:
    return lib is not None


def _kinds() -> dict[str, int]:
    return {
        "B": lib.FASTLANE_U8,
        "b": lib.FASTLANE_I8,
        "H": lib.FASTLANE_U16,
        "h": lib.FASTLANE_I16,
        "I": lib.FASTLANE_U32,
        "i": lib.FASTLANE_I32,
        "L": lib.FASTLANE_U32,
        "l": lib.FASTLANE_I32,
    }


def _holes(shape: Any) -> tuple[list[int], list[int]] | None:
    """Offsets and C kinds of a learned shape's holes, or None if the walk cannot print
    one of them the way the template does."""
    kinds = _kinds()
    offsets, codes = [], []
    for offset, code in shape.holes():
        kind = lib.FASTLANE_HEX8 if code == "x" else kinds.get(code)
        if kind is None:
            return None
        offsets.append(offset)
        codes.append(kind)
    _, holes = _pieces(shape.template)
    if holes != ["%02x" if k == lib.FASTLANE_HEX8 else "%d" for k in codes]:
        return None
    return offsets, codes


def _pieces(template: str) -> tuple[list[str], list[str]]:
    """The template's literal text between its holes (``%%`` is a literal ``%``), and the
    holes in order: ``%d`` or ``%02x``."""
    pieces, holes, text, at = [], [], [], 0
    for m in _HOLE.finditer(template):
        text.append(template[at : m.start()])
        at = m.end()
        if m.group() == "%%":
            text.append("%")
            continue
        pieces.append("".join(text))
        text = []
        holes.append(m.group())
    text.append(template[at:])
    pieces.append("".join(text))
    return pieces, holes


class FrameWalker:
    """The C walk over ``lane``'s shapes, for :meth:`Deframer.feed_walk`."""

    def __init__(self, lane: TupleLane, mtu: int) -> None:
        if lib is None:
            raise RuntimeError("motebase was installed without its C fast lane")
        self.lane = lane
        self._storage = ffi.new("char[]", lib.fastlane_size())
        self._fl = ffi.cast("fastlane *", self._storage)
        spec = ffi.new("fastlane_keyspec *", (QR_TYPE_AT, NOT_NULL_END, mtu))
        lib.fastlane_init(self._fl, spec)
        self._known: set[bytes] = set()
        self._seen = 0
        self._out = ffi.new("char[]", _OUT_BYTES)
        self._out_len = ffi.new("size_t *")
        self._count = ffi.new("uint32_t *")
        self._full = False

    def _register(self) -> None:
        if self.lane.shapes_seen == self._seen:
            return
        self._seen = self.lane.shapes_seen
        for key, shape in self.lane.learned():
            if key in self._known or self._full:
                continue
            self._known.add(key)
            holes = _holes(shape)
            if holes is not None:
                self._full = not self._add(key, shape.template, *holes)

    def _add(self, key: bytes, template: str, offsets: list[int], kinds: list[int]) -> bool:
        """Hands a shape to C; False once its pool is full."""
        pieces, _ = _pieces(template)
        text = "".join(pieces).encode()
        ends, at = [], 0
        for piece in pieces:
            at += len(piece.encode())
            ends.append(at)
        added = lib.fastlane_add(
            self._fl, key, len(key), len(offsets), offsets, bytes(kinds), text, ends
        )
        return added == 0

    def walk(self, data: bytes, start: int, end: int) -> tuple[int, str, int]:
        """Frames of ``data[start:end]`` through C: where it stopped, the lines, and how
        many."""
        self._register()
        self._out_len[0] = 0
        self._count[0] = 0
        buf = ffi.from_buffer(data)
        stop = lib.fastlane_walk(
            self._fl, buf, start, end, self._out, _OUT_BYTES, self._out_len, self._count
        )
        return stop, ffi.unpack(self._out, self._out_len[0]).decode(), self._count[0]
