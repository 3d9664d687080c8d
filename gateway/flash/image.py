"""A flash image: the bytes a programmer writes, by address, with the holes left erased.

Chunks are kept sorted and merged where they touch, so two images holding the same bytes
at the same addresses compare equal however their files cut them into records.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from motebase.gateway.flash.errors import FlashError

#: What an erased flash cell reads; avrdude erases the chip before it writes.
ERASED = 0xFF


@dataclass(frozen=True)
class FlashImage:
    chunks: tuple[tuple[int, bytes], ...]

    @classmethod
    def from_chunks(cls, chunks: Iterable[tuple[int, bytes]]) -> FlashImage:
        merged: list[tuple[int, bytearray]] = []
        for address, data in sorted((a, bytes(d)) for a, d in chunks if d):
            if merged and address < merged[-1][0] + len(merged[-1][1]):
                last = merged[-1][0] + len(merged[-1][1]) - 1
                raise FlashError(f"overlapping data at 0x{address:05x} (up to 0x{last:05x})")
            if merged and address == merged[-1][0] + len(merged[-1][1]):
                merged[-1][1].extend(data)
            else:
                merged.append((address, bytearray(data)))
        return cls(tuple((a, bytes(d)) for a, d in merged))

    @property
    def end(self) -> int:
        """One past the highest address holding a byte (0 for an empty image)."""
        return self.chunks[-1][0] + len(self.chunks[-1][1]) if self.chunks else 0

    @property
    def size(self) -> int:
        return sum(len(d) for _, d in self.chunks)

    def read(self, address: int, length: int) -> bytes:
        for start, data in self.chunks:
            if start <= address and address + length <= start + len(data):
                return data[address - start : address - start + length]
        raise FlashError(f"the image holds no {length} byte(s) at 0x{address:05x}")

    def patched(self, address: int, value: bytes) -> FlashImage:
        """This image with ``value`` written over bytes it already holds at ``address``."""
        self.read(address, len(value))  # refuses a patch outside the image
        out = []
        for start, data in self.chunks:
            if start <= address < start + len(data):
                at = address - start
                data = data[:at] + value + data[at + len(value) :]
            out.append((start, data))
        return FlashImage(tuple(out))

    def flat(self) -> bytes:
        """Flash from address 0 to :attr:`end` as the chip holds it after programming:
        holes read as erased cells."""
        flat = bytearray([ERASED]) * self.end
        for start, data in self.chunks:
            flat[start : start + len(data)] = data
        return bytes(flat)

    def sha256(self) -> str:
        """SHA-256 of :meth:`flat`, the same digest as ``avr-objcopy -I ihex -O binary
        --gap-fill 0xff IMAGE.hex out.bin; sha256sum out.bin`` for an image starting at 0."""
        return hashlib.sha256(self.flat()).hexdigest()

    def first_difference(self, other: FlashImage) -> int | None:
        """The lowest address where the two images differ (a byte in one only counts), or
        None when they hold the same bytes at the same addresses."""
        if self == other:
            return None
        mine, theirs = _bytemap(self), _bytemap(other)
        return min(a for a in mine.keys() | theirs.keys() if mine.get(a) != theirs.get(a))


def _bytemap(image: FlashImage) -> dict[int, int]:
    return {start + i: b for start, data in image.chunks for i, b in enumerate(data)}
