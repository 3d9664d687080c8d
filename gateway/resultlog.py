"""The gateway's durable result log: an append-only, offset-addressed record store.

Every decoded result (and every query the gateway starts) becomes one record with a
log offset: 0, 1, 2, ... for the life of the directory. An offset is never given to a
second record, whatever happens to the files: Spark reads the log by offset and
checkpoints the offsets it has read, so a checkpointed streaming query resumes exactly
where it stopped and a reused offset would silently replace data it already delivered.

On disk the log is a directory of segment files, each named after the offset it begins
at (``00000000000000000000.seg``) and rolled once it passes a size. A record is one
text line::

    OFFSET LENGTH CRC32 JSON\\n

LENGTH is the byte length of JSON, CRC32 (8 hex digits) covers ``OFFSET LENGTH `` and
JSON. The JSON payload never contains a newline (``json.dumps`` escapes control
characters), so a line is a record and a record is a line. Within a segment and from one
segment to the next the offsets run on by one, except across offsets declared lost.

Beside the segments (:mod:`motebase.gateway.logfiles` knows every byte of them):

- ``committed``: the offset of the last committed record. Readers see committed records
  only: after each batch's fsync the writer publishes the batch's last offset there
  (atomically replaced), so a record a reader has seen is durable and an offset once read
  never changes meaning. The marker is also the log's high-water mark: nothing lowers it,
  and a new record always gets an offset above it. A writer creates it (durably) before
  the first segment, so segments holding bytes without it mean it was lost.
- ``lost``: offsets ``mote log repair`` declared lost, as JSON (``{"ranges": [[first,
  last], ...]}``, inclusive). Only this file makes a gap in the offsets legitimate.
- ``quarantine/``: segment files ``mote log repair`` took out of the log, as they were.
- ``writer.lock``: one writer per directory, enforced with an advisory lock; any number
  of readers.

Crash safety: a batch is written with one ``write`` per segment and made durable with
one ``fsync`` before it is published; a crash can therefore damage only what follows the
committed offset, and only in the last segment (a segment is fsync'd before the next one
is created): a batch cut short, ending in a torn line. Opening a writer walks the whole
log (every record's guards: about as long as reading it), truncates that torn tail from
the first line after the committed offset that is not the next record, keeps the
complete records before it (publishing them: a crash between the fsync and the
publication hides a batch until then) and appends after the highest offset the marker,
the records, the lost ranges and the segment names know of.

Anything else is damage (:class:`~motebase.gateway.logfiles.Damage`): a committed record that is
torn, fails its guards or is missing, a missing segment file, a missing commit marker.
Readers yield the records before it and then raise :class:`LogCorruptError` naming the
file, the byte in it and the record offsets affected; they never skip or stop short
silently. The writer refuses to open a damaged log instead of truncating committed
data. ``mote log verify`` lists the damage and ``mote log repair``
(:mod:`motebase.gateway.logrepair`) quarantines it, keeping every intact record at its offset.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import zlib
from collections.abc import Generator, Iterator
from itertools import repeat
from pathlib import Path
from typing import Any, BinaryIO

from motebase.gateway.logfiles import (
    LOST_NAME,
    Damage,
    DamageKind,
    LogCorruptError,
    LogLockedError,
    Segment,
    acquire_writer_lock,
    check_line,
    encode_payload,
    encode_record,
    fsync_directory,
    list_segments,
    publish_committed,
    read_committed,
    read_lost,
    record_payload,
    segment_name,
)
from motebase.gateway.logscan import LogReport, Record, Walk, committed_offset, scan_log

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "Damage",
    "DamageKind",
    "LogCorruptError",
    "LogLockedError",
    "ResultLog",
    "ResultLogWriter",
    "encode_record",
    "segment_name",
]

DEFAULT_SEGMENT_BYTES = 4 * 1024 * 1024


def _kind_marker(kind: str) -> bytes:
    """How a record of ``kind`` begins in its line: encode_record writes compact JSON."""
    return b'"kind":' + json.dumps(kind).encode("ascii")


#: A line as encode_record writes it: the guarded head (``OFFSET LENGTH ``), the CRC, the
#: payload. Every line this matches, check_line accepts the same way; a line it does not
#: match (check_line is laxer: ``+1``, ``0x``, upper-case hex) sends its segment to the walk.
_LINE = re.compile(rb"((\d+) (\d+) )([0-9a-f]{8}) ([^\n]*)\n")


def _regular_payloads(segment: Segment) -> list[bytes] | None:
    """The payloads of ``segment`` if it is regular -- every line complete, intact and the
    next offset from its first -- else None.

    The guards check_line checks, a column at a time (one regex pass, then ``map`` over
    the columns): no Python bytecode runs per line, which made the line-by-line loop the
    Spark reader's largest cost (issue 14)."""
    data = segment.path.read_bytes()
    if not data.endswith(b"\n"):
        return None  # empty, or a torn or growing tail: the walk's to judge
    lines = _LINE.findall(data)
    if not lines:
        return None
    heads, offsets, lengths, crcs, payloads = zip(*lines, strict=True)
    count = len(payloads)
    # Matches do not overlap: if their bytes add up to the segment's, they tile it.
    if sum(map(len, heads)) + sum(map(len, payloads)) + 10 * count != len(data):
        return None
    first = segment.first_offset
    if list(offsets) != [b"%d" % offset for offset in range(first, first + count)]:
        return None
    if list(map(len, payloads)) != list(map(int, lengths)):
        return None
    computed = map(zlib.crc32, payloads, map(zlib.crc32, heads))
    if list(computed) != list(map(int, crcs, repeat(16))):
        return None
    return list(payloads)


#: A chunk of committed records: their offsets and their JSON payloads, not yet parsed.
Payloads = tuple[list[int], list[bytes]]

#: Records per chunk the walk hands on (a regular segment is one chunk, whatever its size).
WALK_CHUNK = 8192


def _read_regular(
    segments: list[Segment], index: int, start: int, end: int, marker: bytes | None
) -> Generator[Payloads, None, int | None]:
    """``ResultLog.read_payloads``'s chunks from segment ``index`` on, one per segment,
    while the segments are regular and follow each other without a gap; returns the index
    of the segment the walk must take over at, or None once ``end`` is reached.

    A regular segment holds exactly what the walk would yield from it, so its lines are
    checked together (_regular_payloads) and handed on as one chunk, where the walk reads
    the log line by line (it exists for the rare damaged one).
    Anything irregular -- damage, a torn tail, a gap or overlap between segments, offsets
    declared lost (the caller's test) -- is left to the walk, from the segment it is in."""
    if index == 0 and segments and segments[0].first_offset != 0:
        return 0  # the log's first offsets are missing: the walk, from offset 0, says so
    while index < len(segments):
        segment = segments[index]
        payloads = _regular_payloads(segment)
        if payloads is None:
            return index
        after = segment.first_offset + len(payloads)  # one past the segment's last record
        following = segments[index + 1].first_offset if index + 1 < len(segments) else None
        if after < end and following != after:
            return index  # the log's next offsets are elsewhere, or missing: the walk says
        base = segment.first_offset
        offsets = range(max(start, base), min(end, after))
        wanted = payloads[offsets.start - base : offsets.stop - base]
        if marker is None:
            yield list(offsets), wanted
        else:
            kept = [i for i, payload in enumerate(wanted) if marker in payload]
            yield [offsets[i] for i in kept], [wanted[i] for i in kept]
        if after >= end:
            return None
        index += 1
    return index


def parse_payloads(payloads: list[bytes]) -> list[Any]:
    """The records of ``payloads``, parsed with one ``json.loads`` (str: json skips
    guessing the encoding)."""
    return json.loads((b"[" + b",".join(payloads) + b"]").decode())


def _walk_payloads(
    events: Iterator[Record | Damage], start: int, marker: bytes | None
) -> Iterator[Payloads]:
    """The walk's records at or after ``start`` in chunks of up to WALK_CHUNK; damage to
    one of them raises LogCorruptError once the chunk of the records before it is taken."""
    offsets: list[int] = []
    payloads: list[bytes] = []
    for event in events:
        if isinstance(event, Damage):
            if event.offsets.stop <= start:
                continue  # costs none of the records asked for
            if offsets:
                yield offsets, payloads
            raise LogCorruptError(event)
        if event.offset < start:
            continue
        if marker is not None and marker not in event.payload:
            continue  # cheap pre-filter: encode_record writes compact JSON
        offsets.append(event.offset)
        payloads.append(event.payload)
        if len(offsets) >= WALK_CHUNK:
            yield offsets, payloads
            offsets, payloads = [], []
    if offsets:
        yield offsets, payloads


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

    def segment_offsets(self) -> list[int]:
        """First offset of every segment, ascending: natural split points for parallel reads."""
        return [segment.first_offset for segment in list_segments(self.directory)]

    def latest_offset(self) -> int:
        """Offset of the last committed record; -1 if the log holds none. LogCorruptError
        if the commit marker is missing although segments hold records."""
        committed = committed_offset(self.directory, list_segments(self.directory))
        return -1 if committed is None else committed

    def read(
        self, start_offset: int = 0, end_offset: int | None = None, kind: str | None = None
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Committed records with ``start_offset <= offset < end_offset`` (to the end if
        None), in order; only those whose ``"kind"`` is ``kind`` if given (others are not
        parsed). Offsets declared lost are passed over; damage to any record asked for
        raises LogCorruptError after the records before it."""
        for offsets, payloads in self.read_payloads(start_offset, end_offset, kind):
            for offset, record in zip(offsets, parse_payloads(payloads), strict=True):
                if kind is None or record.get("kind") == kind:
                    yield offset, record

    def read_payloads(
        self, start_offset: int = 0, end_offset: int | None = None, kind: str | None = None
    ) -> Iterator[Payloads]:
        """What ``read`` reads, in chunks of unparsed payloads: for a reader that parses
        many records at once (the Spark source, into Arrow columns). With ``kind``, a
        chunk holds the payloads that contain the kind's marker: the records of that kind
        and possibly others (the caller checks each record's ``"kind"``). The same
        guarantees as ``read``: committed records only, lost offsets passed over, and
        LogCorruptError for damage to a record asked for, once the chunks before it were
        taken."""
        marker = None if kind is None else _kind_marker(kind)
        committed = self.latest_offset()
        end_offset = committed + 1 if end_offset is None else min(end_offset, committed + 1)
        if start_offset >= end_offset:
            return
        segments = list_segments(self.directory)
        lost = read_lost(self.directory)
        firsts = [s.first_offset for s in segments]
        index = max(bisect.bisect_right(firsts, start_offset) - 1, 0)
        if not lost.ranges:
            taken_over = yield from _read_regular(segments, index, start_offset, end_offset, marker)
            if taken_over is None:
                return
            index = taken_over
        walk = Walk(self.directory, segments, lost, committed, end_offset)
        yield from _walk_payloads(walk.events(first_segment=index), start_offset, marker)

    def find(self, kind: str) -> list[dict[str, Any]]:
        """The committed records whose ``"kind"`` is ``kind``, in order, found by searching
        each segment's bytes for the kind and checking only the lines that hold it.

        For the rare kinds (a log's query records among a million readings) this costs a
        byte search, where ``read`` checks every line's guards: Spark asks for a source's
        schema several times per pipeline. Damage elsewhere is left for ``read`` to report
        (it raises where the damage is read); a damaged line that holds the kind makes
        this fall back to ``read``, which says what is wrong."""
        marker = _kind_marker(kind)
        committed = self.latest_offset()
        lost = read_lost(self.directory)
        found: list[dict[str, Any]] = []
        for segment in list_segments(self.directory):
            if segment.first_offset > committed:
                break
            data = segment.path.read_bytes()
            at = data.find(marker)
            while at >= 0:
                end = data.find(b"\n", at)
                line = data[data.rfind(b"\n", 0, at) + 1 : end + 1] if end >= 0 else b""
                checked = check_line(line)
                if checked is not None and checked[0] > committed:
                    return found
                if checked is None or lost.skip(checked[0]) != checked[0]:
                    return [record for _, record in self.read(kind=kind)]
                record = json.loads(checked[1].decode())
                if record.get("kind") == kind:
                    found.append(record)
                at = data.find(marker, end)
        return found

    def open_writer(self) -> int:
        """Take the writer lock and repair a torn tail now (``append_batch`` does it on first
        use); return the last committed offset: the next record gets the one after it."""
        if self._writer is None:
            self._writer = ResultLogWriter(self.directory, self.segment_bytes)
        return self._writer.next_offset - 1

    def append_batch(self, records: list[dict[str, Any]]) -> int:
        """Append ``records`` durably (one fsync); return the offset of the last one."""
        return self.append_payloads([record_payload(record) for record in records])

    def append_payloads(self, payloads: list[bytes]) -> int:
        """:meth:`append_batch` of records already in their JSON (``record_payload``'s
        spelling: compact, ASCII), as a batch of readings writes them."""
        self.open_writer()
        assert self._writer is not None
        return self._writer.append_payloads(payloads)

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

    Opening checks the whole log (LogCorruptError if it is damaged: only
    ``mote log repair`` changes committed data), truncates a torn tail left by a crash
    and appends after the highest offset ever used; ``append_batch`` makes a whole batch
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
        self._lock = acquire_writer_lock(self.directory)
        try:
            self._next_offset, self._file = self._recover()
        except BaseException:
            self._lock.close()
            raise

    def _recover(self) -> tuple[int, BinaryIO]:
        """Check the log, truncate a torn tail; the next offset and the file to append to."""
        if self._is_new():
            # The marker comes first: from then on segments without it mean it was lost.
            publish_committed(self.directory, -1, durable=True)
            return 0, self._create_segment(0)
        report = scan_log(self.directory)
        if report.damages:
            raise LogCorruptError(report.damages[0], more=len(report.damages) - 1)
        self._truncate_tail(report)
        next_offset = report.next_offset
        if next_offset - 1 != report.committed:
            publish_committed(self.directory, next_offset - 1)
        if not report.segments:
            return next_offset, self._create_segment(next_offset)
        return next_offset, report.segments[-1].path.open("ab")

    def _is_new(self) -> bool:
        return (
            not list_segments(self.directory)
            and read_committed(self.directory) is None
            and not (self.directory / LOST_NAME).exists()
        )

    @staticmethod
    def _truncate_tail(report: LogReport) -> None:
        if report.tail is None:
            return
        with report.tail.segment.path.open("r+b") as f:
            f.truncate(report.tail.byte)
            os.fsync(f.fileno())

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
        return self.append_payloads([record_payload(record) for record in records])

    def append_payloads(self, payloads: list[bytes]) -> int:
        """:meth:`append_batch` of records already in their JSON."""
        first = self._next_offset
        lines = [encode_payload(first + i, payload) for i, payload in enumerate(payloads)]
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
