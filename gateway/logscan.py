"""One pass over a result log's segments in offset order, telling records from damage.

The same walk serves a reader (from some segment up to an end offset, stopping at the
first damage), the writer when it opens the log, ``mote log verify`` and
``mote log repair`` (every byte of every segment, every damage). See
:mod:`motebase.gateway.resultlog` for the layout it checks.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from motebase.gateway.logfiles import (
    COMMITTED_NAME,
    Damage,
    DamageKind,
    LogCorruptError,
    LostOffsets,
    Segment,
    check_line,
    list_segments,
    read_committed,
    read_lost,
    segment_name,
)


class Record(NamedTuple):
    """A record that passed its guards where the walk expected it."""

    offset: int
    payload: bytes
    segment: Segment
    start: int  # where its line starts in the segment
    end: int  # and where it ends


@dataclass(frozen=True)
class TornTail:
    """Bytes after the committed offset in the last segment that are not the next record:
    what a crash leaves of a batch it cut short. Nobody has read them, so the writer may
    truncate them; they hold no published offset."""

    segment: Segment
    byte: int
    size: int


_NO_END = 1 << 80  # beyond any offset


@dataclass
class _BadRun:
    """Lines that are not the expected record, since ``start``; ``lines`` of them."""

    start: int
    lines: int = 0


@dataclass
class _SegmentLines:
    """Where the walk is in one segment: the bad lines not yet accounted for, and the offset
    below which a record was already read from the segment before (0 unless it overlaps)."""

    segment: Segment
    floor: int
    bad: _BadRun | None = None


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    position = 0
    with path.open("rb") as f:
        for line in f:
            yield position, line
            position += len(line)


class Walk:
    """Follows the offsets through ``segments``: yields every record where the offsets say it
    belongs and a :class:`Damage` wherever they do not.

    ``committed`` is the commit marker (None if there is none). With ``end``, the walk stops
    once every offset below it has been seen, as a reader does; without it, it reads every
    byte, and in the last segment what follows the committed offset without being the next
    record is the torn tail (:attr:`tail`) rather than damage.
    """

    def __init__(
        self,
        directory: Path,
        segments: Sequence[Segment],
        lost: LostOffsets,
        committed: int | None,
        end: int | None = None,
    ) -> None:
        self.directory = directory
        self.segments = segments
        self.lost = lost
        self.committed = committed
        self.tail: TornTail | None = None
        self._end = _NO_END if end is None else end
        # One past the highest offset accounted for by a record or a damage; ``expected`` is
        # the first offset from there that is not declared lost: the next record.
        self.covered = 0
        self.expected = 0
        # No offset in [_clear_from, _lost_from) is declared lost: no lookup needed there.
        self._clear_from = 0
        self._lost_from = -1
        self._advance(0)

    def _advance(self, covered: int) -> None:
        self.covered = covered
        if self._clear_from <= covered < self._lost_from:
            self.expected = covered
        else:
            self.expected = self.lost.skip(covered)
            self._clear_from = self.expected
            self._lost_from = self.lost.next_start(self.expected)

    def _done(self) -> bool:
        return self.expected >= self._end

    def events(self, first_segment: int = 0) -> Iterator[Record | Damage]:
        """From segment ``first_segment`` on (the offsets before its first are not checked)."""
        if first_segment:
            self._advance(self.segments[first_segment].first_offset)
        for index in range(first_segment, len(self.segments)):
            if self._done():
                return
            yield from self._segment(index)
        if not self._done():
            yield from self._end_of_log()

    def _segment(self, index: int) -> Iterator[Record | Damage]:
        segment = self.segments[index]
        is_last = index == len(self.segments) - 1
        lines = _SegmentLines(segment, floor=(yield from self._enter(segment)))
        # The loop every record goes through: kept to the common case, the rest is
        # _irregular's.
        end = self._end
        for start, line in _lines(segment.path):
            expected = self.expected
            if expected >= end:
                return
            checked = check_line(line)
            if checked is not None and checked[0] == expected and lines.bad is None:
                yield Record(expected, checked[1], segment, start, start + len(line))
                self._advance(expected + 1)
                continue
            if is_last and self._past_committed():
                self.tail = TornTail(segment, start, segment.path.stat().st_size - start)
                return
            yield from self._irregular(lines, start, line, checked)
        if lines.bad is not None:
            yield self._bad_end(index, lines.bad)

    def _irregular(
        self, lines: _SegmentLines, start: int, line: bytes, checked: tuple[int, bytes] | None
    ) -> Iterator[Record | Damage]:
        """A line that is not simply the next record."""
        if checked is not None and checked[0] < lines.floor:
            return  # read from the segment this one overlaps, and reported there
        if checked is None or checked[0] < self.expected:
            lines.bad = lines.bad or _BadRun(start)
            lines.bad.lines += 1
            return
        # A record at or after the expected offset: the ones before it are in the bad
        # lines, or missing.
        offset, payload = checked
        if lines.bad is None:
            yield Damage(
                DamageKind.MISSING, lines.segment.path, start, range(self.expected, offset)
            )
        else:
            damaged = range(self.expected, offset)
            yield Damage(DamageKind.CORRUPT, lines.segment.path, lines.bad.start, damaged)
            lines.bad = None
        yield Record(offset, payload, lines.segment, start, start + len(line))
        self._advance(offset + 1)

    def _enter(self, segment: Segment) -> Generator[Damage, None, int]:
        """Damage between the offsets seen so far and the segment's name; the offset below
        which its lines were already read from the segment before (0 if it does not
        overlap)."""
        if segment.first_offset < self.covered:
            overlap = range(segment.first_offset, self.covered)
            yield Damage(DamageKind.OVERLAP, segment.path, 0, overlap)
            return self.covered
        if segment.first_offset > self.expected:
            yield self._gap(range(self.expected, segment.first_offset))
        self._advance(max(self.covered, segment.first_offset))
        return 0

    def _gap(self, missing: range) -> Damage:
        """Offsets no segment holds: the segment that held them is gone, or (if one is named
        after the first of them) emptied."""
        path = self.directory / segment_name(missing.start)
        if path.exists():
            return Damage(DamageKind.MISSING, path, path.stat().st_size, missing)
        return Damage(DamageKind.MISSING_SEGMENT, path, 0, missing)

    def _bad_end(self, index: int, bad: _BadRun) -> Damage:
        """Bad lines up to the end of segment ``index``: they held the offsets up to the next
        segment's, or to the committed one; with no commit marker, one per line."""
        if index + 1 < len(self.segments):
            stop = max(self.expected, self.segments[index + 1].first_offset)
        elif self.committed is not None:
            stop = max(self.expected, self.committed + 1)
        else:
            stop = self.expected + bad.lines
        damage = Damage(
            DamageKind.CORRUPT, self.segments[index].path, bad.start, range(self.expected, stop)
        )
        self._advance(stop)
        return damage

    def _end_of_log(self) -> Iterator[Damage]:
        """Committed offsets that no segment holds."""
        if self.committed is None or self.expected > self.committed:
            return
        missing = range(self.expected, self.committed + 1)
        if self.segments and self.segments[-1].first_offset <= self.expected:
            last = self.segments[-1].path
            yield Damage(DamageKind.MISSING, last, last.stat().st_size, missing)
        else:
            yield self._gap(missing)
        self._advance(self.committed + 1)

    def _past_committed(self) -> bool:
        return self.committed is not None and self.expected > self.committed


@dataclass
class LogReport:
    """Everything a walk over the whole log found."""

    directory: Path
    segments: list[Segment]
    committed: int | None
    lost: LostOffsets
    damages: list[Damage] = field(default_factory=list)
    records: int = 0
    uncommitted: int = 0  # complete records after the committed offset (the writer keeps them)
    last_record: int = -1
    tail: TornTail | None = None
    # The intact records of every segment a damage is in: (offset, start byte, end byte).
    kept: dict[Path, list[tuple[int, int, int]]] = field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        return not self.damages

    @property
    def next_offset(self) -> int:
        """The offset the next record gets: after every offset that was ever committed or
        written, as far as the marker, the records, the lost ranges and the segment names
        tell (a segment named N was begun once N - 1 was written)."""
        highest = max(
            -1 if self.committed is None else self.committed,
            self.last_record,
            self.lost.last,
            self.segments[-1].first_offset - 1 if self.segments else -1,
        )
        return highest + 1


def scan_log(directory: Path) -> LogReport:
    """Walk every byte of the log at ``directory`` and report what is there."""
    report = LogReport(directory, list_segments(directory), None, LostOffsets())
    _read_markers(report)
    walk = Walk(directory, report.segments, report.lost, report.committed)
    committed = _NO_END if report.committed is None else report.committed
    segment: Segment | None = None
    spans: list[tuple[int, int, int]] = []
    for event in walk.events():
        if isinstance(event, Damage):
            report.damages.append(event)
            continue
        if event.segment is not segment:
            _keep_if_damaged(report, segment, spans)
            segment, spans = event.segment, []
        spans.append((event.offset, event.start, event.end))
        report.records += 1
        report.uncommitted += event.offset > committed
        report.last_record = event.offset  # records come in ascending offsets
    _keep_if_damaged(report, segment, spans)
    report.tail = walk.tail
    return report


def _read_markers(report: LogReport) -> None:
    try:
        report.committed = committed_offset(report.directory, report.segments)
    except LogCorruptError as exc:
        report.damages.append(exc.damage)
    try:
        report.lost = read_lost(report.directory)
    except LogCorruptError as exc:
        report.damages.append(exc.damage)
    marker_found = report.committed is not None or report.damages
    if not marker_found and report.lost.ranges:
        report.damages.append(_marker_damage(report.directory, report.segments))


def _keep_if_damaged(
    report: LogReport, segment: Segment | None, spans: list[tuple[int, int, int]]
) -> None:
    if segment is not None and any(d.path == segment.path for d in report.damages):
        report.kept[segment.path] = spans


def committed_offset(directory: Path, segments: Sequence[Segment]) -> int | None:
    """The commit marker; None for a log no writer has published in yet. LogCorruptError if
    the marker is unreadable, or missing although segments hold bytes: a writer publishes
    it before it creates the first segment, so then it was lost."""
    try:
        committed = read_committed(directory)
    except LogCorruptError:
        raise LogCorruptError(_marker_damage(directory, segments)) from None
    if committed is None and any(s.path.stat().st_size for s in segments):
        raise LogCorruptError(_marker_damage(directory, segments))
    return committed


def _marker_damage(directory: Path, segments: Sequence[Segment]) -> Damage:
    """The commit marker is gone: every record could be committed or not. Names them from
    the first segment to the last record of the last one that holds bytes (only that one
    is read, so that a reader can afford to say it)."""
    holding = [s for s in segments if s.path.stat().st_size > 0]
    last = -1
    if holding:
        last = holding[-1].first_offset - 1
        for _, line in _lines(holding[-1].path):
            checked = check_line(line)
            if checked is not None:
                last = max(last, checked[0])
    first = segments[0].first_offset if segments else 0
    return Damage(DamageKind.COMMIT_MARKER, directory / COMMITTED_NAME, 0, range(first, last + 1))
