"""The result log's files: how a record is framed, how segments are named, the commit
marker, the offsets declared lost, and how damage to any of them is described.

Everything that knows a byte of the on-disk layout lives here; :mod:`motebase.gateway.resultlog`
reads and writes the log through it. The layout itself is described there.
"""

from __future__ import annotations

import bisect
import enum
import fcntl
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

SEGMENT_SUFFIX = ".seg"
LOCK_NAME = "writer.lock"
COMMITTED_NAME = "committed"
LOST_NAME = "lost"
QUARANTINE_NAME = "quarantine"
_OFFSET_DIGITS = 20


def segment_name(first_offset: int) -> str:
    return f"{first_offset:0{_OFFSET_DIGITS}d}{SEGMENT_SUFFIX}"


def record_payload(record: dict[str, Any]) -> bytes:
    """A record's JSON, as the log keeps it."""
    return json.dumps(record, separators=(",", ":"), allow_nan=False).encode("ascii")


def encode_record(offset: int, record: dict[str, Any]) -> bytes:
    """One framed line for ``record`` at ``offset``."""
    return encode_payload(offset, record_payload(record))


def encode_payload(offset: int, payload: bytes) -> bytes:
    """One framed line for a record's JSON (:func:`record_payload`'s spelling)."""
    head = f"{offset} {len(payload)} ".encode("ascii")
    crc = zlib.crc32(payload, zlib.crc32(head))
    return head + f"{crc:08x} ".encode("ascii") + payload + b"\n"


def check_line(line: bytes) -> tuple[int, bytes] | None:
    """``(offset, JSON payload)`` of one line including its newline if its length and
    checksum guards hold, else None. Cheap: the payload is not parsed."""
    if not line.endswith(b"\n"):
        return None
    parts = line[:-1].split(b" ", 3)
    if len(parts) != 4:
        return None
    offset_txt, length_txt, crc_txt, payload = parts
    try:
        offset, length, crc = int(offset_txt), int(length_txt), int(crc_txt, 16)
    except ValueError:
        return None
    if length != len(payload) or offset < 0:
        return None
    head = offset_txt + b" " + length_txt + b" "
    if zlib.crc32(payload, zlib.crc32(head)) != crc:
        return None
    return offset, payload


@dataclass(frozen=True)
class Segment:
    first_offset: int
    path: Path


def list_segments(directory: Path) -> list[Segment]:
    if not directory.is_dir():
        return []
    segments = []
    for path in directory.glob(f"*{SEGMENT_SUFFIX}"):
        stem = path.name[: -len(SEGMENT_SUFFIX)]
        if stem.isdigit():
            segments.append(Segment(int(stem), path))
    segments.sort(key=lambda s: s.first_offset)
    return segments


# -- damage -------------------------------------------------------------------------------


class DamageKind(enum.Enum):
    """What is wrong; the value is how a message says it."""

    CORRUPT = "corrupt record"
    MISSING = "records missing"
    MISSING_SEGMENT = "missing segment file"
    OVERLAP = "segment overlaps the one before it"
    COMMIT_MARKER = "commit marker missing or unreadable"
    LOST_FILE = "lost-offsets file unreadable"

    @property
    def in_segment(self) -> bool:
        """Whether it lies in a segment file that exists (and so has a byte position)."""
        return self in (DamageKind.CORRUPT, DamageKind.MISSING, DamageKind.OVERLAP)

    @property
    def loses_records(self) -> bool:
        """Whether the offsets it names are gone (repair declares them lost)."""
        return self in (DamageKind.CORRUPT, DamageKind.MISSING, DamageKind.MISSING_SEGMENT)


@dataclass(frozen=True)
class Damage:
    """One place where the log is not what its writer left: the file (for a missing segment
    the name it would have), the byte in it where the damage starts, and the record offsets
    it affects (empty if it costs no record, e.g. a stray line between two intact ones)."""

    kind: DamageKind
    path: Path
    byte: int
    offsets: range

    def __str__(self) -> str:
        where = f"{self.path}, byte {self.byte}" if self.kind.in_segment else str(self.path)
        return f"{where}: {self.kind.value}, {describe_offsets(self.offsets)}"


def describe_offsets(offsets: range) -> str:
    if not offsets:
        return "no record offset affected"
    if len(offsets) == 1:
        return f"record offset {offsets.start}"
    return f"record offsets {offsets.start}-{offsets[-1]}"


class LogCorruptError(Exception):
    """The log is damaged where a reader or the writer needs it (see :class:`Damage`).

    ``damage`` is the first damage met; ``segment``, ``byte`` and ``offsets`` are its
    fields. Only an explicit ``mote log repair`` changes a damaged log.
    """

    def __init__(self, damage: Damage, more: int = 0) -> None:
        self.damage = damage
        directory = damage.path.parent
        also = f" (and {more} more: `mote log verify {directory}`)" if more else ""
        super().__init__(
            f"damaged result log: {damage}{also}; run `mote log repair {directory}` to "
            "quarantine the damage and keep every intact record"
        )

    @property
    def segment(self) -> Path:
        return self.damage.path

    @property
    def byte(self) -> int:
        return self.damage.byte

    @property
    def offsets(self) -> range:
        return self.damage.offsets


class LogLockedError(Exception):
    """Another process holds the writer lock of this log directory."""


# -- the commit marker -------------------------------------------------------------------


def read_committed(directory: Path) -> int | None:
    """The last published offset, or None if no writer has published one yet.

    LogCorruptError if the file holds something else than an offset."""
    path = directory / COMMITTED_NAME
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        text = ""
    try:
        committed = int(text)
    except ValueError:
        committed = -2
    if committed < -1:
        raise LogCorruptError(Damage(DamageKind.COMMIT_MARKER, path, 0, range(0)))
    return committed


def publish_committed(directory: Path, last_offset: int, durable: bool = False) -> None:
    """Name ``last_offset`` the last committed record. Only ever called with a value no
    lower than the file's: the marker is the log's high-water mark."""
    # Not durable per batch: the file only ever names records that are already durable,
    # so losing its latest version makes readers lag, never read ahead of the disk.
    _replace_file(directory / COMMITTED_NAME, f"{last_offset}\n".encode("ascii"), durable)


# -- offsets declared lost ------------------------------------------------------------------


@dataclass(frozen=True)
class LostOffsets:
    """Offsets ``mote log repair`` declared lost, as sorted, disjoint, inclusive ranges."""

    ranges: tuple[tuple[int, int], ...] = ()

    def skip(self, offset: int) -> int:
        """The first offset at or after ``offset`` that is not declared lost."""
        index = bisect.bisect_right(self.ranges, (offset, _NO_END)) - 1
        if index >= 0 and self.ranges[index][1] >= offset:
            return self.ranges[index][1] + 1
        return offset

    def next_start(self, offset: int) -> int:
        """The first offset after ``offset`` that begins a lost range (a huge number if none)."""
        index = bisect.bisect_right(self.ranges, (offset, _NO_END))
        return self.ranges[index][0] if index < len(self.ranges) else _NO_END

    def with_range(self, offsets: range) -> LostOffsets:
        if not offsets:
            return self
        merged: list[tuple[int, int]] = []
        for first, last in sorted([*self.ranges, (offsets.start, offsets[-1])]):
            if merged and first <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], last))
            else:
                merged.append((first, last))
        return LostOffsets(tuple(merged))

    @property
    def last(self) -> int:
        """The highest offset declared lost; -1 if none."""
        return self.ranges[-1][1] if self.ranges else -1

    def count(self) -> int:
        return sum(last - first + 1 for first, last in self.ranges)


_NO_END = 1 << 80  # sorts after every inclusive end: bisect finds the range an offset opens


def read_lost(directory: Path) -> LostOffsets:
    """The declared-lost offsets (none if the file is absent); LogCorruptError if unreadable."""
    path = directory / LOST_NAME
    try:
        document = json.loads(path.read_bytes())
        ranges = tuple((int(first), int(last)) for first, last in document["ranges"])
    except FileNotFoundError:
        return LostOffsets()
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise LogCorruptError(Damage(DamageKind.LOST_FILE, path, 0, range(0))) from exc
    lost = LostOffsets()
    for first, last in ranges:
        lost = lost.with_range(range(first, last + 1))
    return lost


def write_lost(directory: Path, lost: LostOffsets) -> None:
    document = {"ranges": [list(r) for r in lost.ranges]}
    _replace_file(directory / LOST_NAME, (json.dumps(document) + "\n").encode("ascii"), True)


# -- durability and the writer lock -------------------------------------------------------


def _replace_file(path: Path, data: bytes, durable: bool) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if durable:
        fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def acquire_writer_lock(directory: Path) -> BinaryIO:
    """The directory's writer lock, held until the returned file is closed."""
    lock = (directory / LOCK_NAME).open("ab")
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise LogLockedError(f"{directory} is already open for writing") from None
    return lock
