"""The gateway's durable result log: an append-only, offset-addressed record store.

Every decoded result (and every query the gateway starts) becomes one record with a
log offset: 0, 1, 2, ... without gaps, for the life of the directory. Spark reads the
log by offset, so a checkpointed streaming query can resume exactly where it stopped.

On disk the log is a directory of segment files, each named after the offset of its
first record (``00000000000000000000.seg``) and rolled once it passes a size. A record
is one text line::

    OFFSET LENGTH CRC32 JSON\\n

LENGTH is the byte length of JSON, CRC32 (8 hex digits) covers ``OFFSET LENGTH `` and
JSON. The JSON payload never contains a newline (``json.dumps`` escapes control
characters), so a line is a record and a record is a line.

Crash safety: a batch is written with one ``write`` and made durable with one
``fsync``; a crash can therefore leave only a prefix of the last batch, ending in a
torn line, and only in the last segment (a segment is fsync'd before the next one is
created). Opening a writer truncates that torn tail and appends after the last complete
record. Readers that meet a torn tail in the last segment treat it as the end of the
log (the writer may be mid-write); an invalid record anywhere else is corruption and
raises :class:`LogCorruptError`.

Readers see committed records only: after each batch's fsync the writer publishes the
batch's last offset in the ``committed`` file (atomically replaced). A record a reader
has seen is therefore durable, and an offset once read never changes meaning, even if
the machine loses power before the page cache reaches the disk. (A crash between the
fsync and the publication hides that batch until the next writer opens the log.)

One writer per directory, enforced with an advisory lock; any number of readers.
"""

from __future__ import annotations

import bisect
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from gateway.logfiles import (
    LOCK_NAME,
    Segment,
    check_line,
    encode_record,
    fsync_directory,
    list_segments,
    publish_committed,
    read_committed,
    segment_name,
)

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "LogCorruptError",
    "LogLockedError",
    "ResultLog",
    "ResultLogWriter",
    "encode_record",
    "segment_name",
]

DEFAULT_SEGMENT_BYTES = 4 * 1024 * 1024


class LogCorruptError(Exception):
    """A record that is not the torn tail of the log fails its length or checksum guard."""


class LogLockedError(Exception):
    """Another process holds the writer lock of this log directory."""


@dataclass(frozen=True)
class _ScanResult:
    """What a scan of one segment found: the last good record and where the good bytes end."""

    last_offset: int | None
    valid_bytes: int
    torn: bool


def _iter_segment(segment: Segment, is_last: bool) -> Iterator[tuple[int, int, bytes]]:
    """``(end_byte, offset, JSON payload)`` of every valid record; stops at a torn tail.

    Offsets must run contiguously from the segment's first offset: a gap is corruption,
    not a torn tail, because the writer never skips an offset.
    """
    expected = segment.first_offset
    position = 0
    with segment.path.open("rb") as f:
        for line in f:
            checked = check_line(line)
            if checked is None or checked[0] != expected:
                if is_last:
                    return
                raise LogCorruptError(
                    f"{segment.path}: invalid record at byte {position}, expected offset {expected}"
                )
            position += len(line)
            yield position, expected, checked[1]
            expected += 1


def _scan_segment(segment: Segment) -> _ScanResult:
    last_offset: int | None = None
    valid_bytes = 0
    for end_byte, offset, _ in _iter_segment(segment, is_last=True):
        last_offset, valid_bytes = offset, end_byte
    torn = segment.path.stat().st_size != valid_bytes
    return _ScanResult(last_offset, valid_bytes, torn)


class ResultLog:
    """A result log directory: any number of readers, at most one appending process.

    ``read`` and ``latest_offset`` see every complete record at the time they look and
    never take the writer lock. The first ``append_batch`` takes the lock and repairs a
    torn tail (see :class:`ResultLogWriter`); ``close`` releases it.
    """

    def __init__(
        self, directory: str | os.PathLike[str], segment_bytes: int = DEFAULT_SEGMENT_BYTES
    ) -> None:
        self.directory = Path(directory)
        self.segment_bytes = segment_bytes
        self._writer: ResultLogWriter | None = None

    def _segments(self) -> list[Segment]:
        return list_segments(self.directory) if self.directory.is_dir() else []

    def segment_offsets(self) -> list[int]:
        """First offset of every segment, ascending: natural split points for parallel reads."""
        return [segment.first_offset for segment in self._segments()]

    def latest_offset(self) -> int:
        """Offset of the last committed record; -1 if the log holds none."""
        committed = read_committed(self.directory)
        return -1 if committed is None else committed

    def read(
        self, start_offset: int = 0, end_offset: int | None = None, kind: str | None = None
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Records with ``start_offset <= offset < end_offset`` (to the end if None), in
        order; only those whose ``"kind"`` is ``kind`` if given (others are not parsed)."""
        marker = None if kind is None else b'"kind":' + json.dumps(kind).encode("ascii")
        committed_end = self.latest_offset() + 1
        end_offset = committed_end if end_offset is None else min(end_offset, committed_end)
        segments = self._segments()
        if not segments:
            return
        firsts = [s.first_offset for s in segments]
        index = max(bisect.bisect_right(firsts, start_offset) - 1, 0)
        for i in range(index, len(segments)):
            segment = segments[i]
            if segment.first_offset >= end_offset:
                return
            for _, offset, payload in _iter_segment(segment, is_last=i == len(segments) - 1):
                if offset < start_offset:
                    continue
                if offset >= end_offset:
                    return
                if marker is not None and marker not in payload:
                    continue  # cheap pre-filter: encode_record writes compact JSON
                record = json.loads(payload)
                if kind is None or record.get("kind") == kind:
                    yield offset, record

    def open_writer(self) -> int:
        """Take the writer lock and repair a torn tail now (``append_batch`` does it on first
        use); return the offset of the last record, which is then committed."""
        if self._writer is None:
            self._writer = ResultLogWriter(self.directory, self.segment_bytes)
        return self._writer.next_offset - 1

    def append_batch(self, records: list[dict[str, Any]]) -> int:
        """Append ``records`` durably (one fsync); return the offset of the last one."""
        self.open_writer()
        assert self._writer is not None
        return self._writer.append_batch(records)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> ResultLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ResultLogWriter:
    """The single appender of a log directory (holds ``writer.lock`` while open).

    Opening repairs a torn tail left by a crash; ``append_batch`` makes a whole batch
    durable with one fsync before it returns.
    """

    def __init__(
        self, directory: str | os.PathLike[str], segment_bytes: int = DEFAULT_SEGMENT_BYTES
    ) -> None:
        if segment_bytes <= 0:
            raise ValueError("segment_bytes must be positive")
        self.directory = Path(directory)
        self.segment_bytes = segment_bytes
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = self._acquire_lock()
        try:
            self._next_offset, self._file = self._recover()
        except BaseException:
            self._lock.close()
            raise

    def _acquire_lock(self) -> BinaryIO:
        lock = (self.directory / LOCK_NAME).open("ab")
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise LogLockedError(f"{self.directory} is already open for writing") from None
        return lock

    def _recover(self) -> tuple[int, BinaryIO]:
        """Truncate a torn tail; return the next offset and the segment to append to."""
        segments = list_segments(self.directory)
        if not segments:
            return 0, self._create_segment(0)
        last = segments[-1]
        scan = _scan_segment(last)
        if scan.torn:
            with last.path.open("r+b") as f:
                f.truncate(scan.valid_bytes)
                os.fsync(f.fileno())
        next_offset = last.first_offset if scan.last_offset is None else scan.last_offset + 1
        publish_committed(self.directory, next_offset - 1)
        return next_offset, last.path.open("ab")

    def _create_segment(self, first_offset: int) -> BinaryIO:
        f = (self.directory / segment_name(first_offset)).open("ab")
        fsync_directory(self.directory)
        return f

    @property
    def next_offset(self) -> int:
        return self._next_offset

    def append_batch(self, records: list[dict[str, Any]]) -> int:
        """Append ``records`` durably; return the offset of the last one (of the log if empty).

        Every record is encoded before the first byte is written, so a record that is not
        JSON rejects the whole batch and leaves the log untouched.
        """
        first = self._next_offset
        lines = [encode_record(first + i, record) for i, record in enumerate(records)]
        pending = bytearray()
        for i, line in enumerate(lines):
            segment_size = self._file.tell() + len(pending)
            if segment_size and segment_size >= self.segment_bytes:
                self._flush(pending)
                pending.clear()
                self._roll(first + i)
            pending += line
        self._flush(pending)
        self._next_offset = first + len(lines)
        if lines:
            publish_committed(self.directory, self._next_offset - 1)
        return self._next_offset - 1

    def _flush(self, data: bytes | bytearray) -> None:
        if data:
            self._file.write(data)
            self._file.flush()
            os.fsync(self._file.fileno())

    def _roll(self, first_offset: int) -> None:
        self._file.close()
        self._file = self._create_segment(first_offset)

    def close(self) -> None:
        self._file.close()
        self._lock.close()

    def __enter__(self) -> ResultLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
