"""``mote log repair``: make a damaged result log readable again, losing no intact record
and reusing no offset.

Every segment a damage lies in is moved to ``quarantine/`` as it was, and the records in
it that still pass their guards are rewritten under its name, each at its own offset.
The offsets that no intact record holds any more are declared lost in the ``lost`` file,
which makes readers pass over them instead of failing. The commit marker is never
lowered; if it is gone it is rebuilt from the highest offset anything on disk knows of.
The repaired log is then walked again: :attr:`RepairReport.next_offset` is where the next
writer continues.

The steps are ordered so that a crash in the middle loses nothing: the rewritten segment
is complete and fsync'd before it atomically replaces the damaged one, whose bytes are
already linked into the quarantine; running repair again finishes the job.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from motebase.gateway.logfiles import (
    COMMITTED_NAME,
    LOST_NAME,
    QUARANTINE_NAME,
    SEGMENT_SUFFIX,
    Damage,
    DamageKind,
    LostOffsets,
    Segment,
    acquire_writer_lock,
    describe_offsets,
    fsync_directory,
    publish_committed,
    segment_name,
    write_lost,
)
from motebase.gateway.logscan import LogReport, scan_log

_REWRITE_SUFFIX = ".repair"


@dataclass(frozen=True)
class Quarantined:
    """A segment taken out of the log: where its bytes are now, and what replaced it."""

    segment: Path
    moved_to: Path
    kept: int
    rewritten_as: Path | None

    def describe(self) -> str:
        moved = f"moved {self.segment.name} to {QUARANTINE_NAME}/{self.moved_to.name}"
        if self.rewritten_as is None:
            return f"{moved}; it held no intact record"
        return f"{moved}; its {self.kept} intact records rewritten as {self.rewritten_as.name}"


@dataclass
class RepairReport:
    directory: Path
    damages: list[Damage]
    quarantined: list[Quarantined] = field(default_factory=list)
    declared_lost: list[Damage] = field(default_factory=list)
    committed_before: int | None = None
    committed_after: int | None = None
    next_offset: int = 0
    remaining: list[Damage] = field(default_factory=list)  # empty unless repair failed

    def lines(self) -> list[str]:
        """What repair did, for the user."""
        if not self.damages:
            next_record = f"the next record gets offset {self.next_offset}"
            return [f"{self.directory}: nothing to repair; {next_record}"]
        lines = [f"damage: {damage}" for damage in self.damages]
        lines += [entry.describe() for entry in self.quarantined]
        for damage in self.declared_lost:
            cause = f"{damage.kind.value}: {damage.path.name}"
            lines.append(f"declared lost: {describe_offsets(damage.offsets)} ({cause})")
        if self.committed_after != self.committed_before:
            before = "missing" if self.committed_before is None else self.committed_before
            lines.append(f"commit marker: {before} -> {self.committed_after}")
        lines += [f"still damaged: {damage}" for damage in self.remaining]
        lines.append(f"the next record gets offset {self.next_offset}")
        return lines


def repair_log(directory: Path) -> RepairReport:
    """Repair the log at ``directory`` (LogLockedError while a writer has it open)."""
    lock = acquire_writer_lock(directory)
    try:
        _remove_unfinished_rewrites(directory)
        scanned = scan_log(directory)
        repair = RepairReport(directory, scanned.damages, committed_before=scanned.committed)
        if scanned.damages:
            _repair(scanned, repair)
        after = scan_log(directory)
        repair.committed_after = after.committed
        repair.next_offset = after.next_offset
        repair.remaining = after.damages
        return repair
    finally:
        lock.close()


def _remove_unfinished_rewrites(directory: Path) -> None:
    """Rewrites a crashed repair did not put in place: this run makes them again."""
    for path in directory.glob(f"*{SEGMENT_SUFFIX}{_REWRITE_SUFFIX}"):
        path.unlink()


def _repair(scanned: LogReport, repair: RepairReport) -> None:
    directory = scanned.directory
    quarantine = directory / QUARANTINE_NAME
    damaged = _damaged_segments(scanned)
    rewrites = {segment.path: _write_rewrite(segment, scanned) for segment in damaged}
    for segment in damaged:
        moved_to = _link_into(quarantine, segment.path)
        kept = len(scanned.kept.get(segment.path, []))
        repair.quarantined.append(Quarantined(segment.path, moved_to, kept, rewrites[segment.path]))
    lost = _declare_lost(scanned, repair, quarantine)
    _put_in_place(damaged, rewrites)
    _rebuild_marker(scanned, lost, quarantine)
    if quarantine.exists():
        fsync_directory(quarantine)
    fsync_directory(directory)


def _damaged_segments(scanned: LogReport) -> list[Segment]:
    paths = {damage.path for damage in scanned.damages if damage.kind.in_segment}
    return [segment for segment in scanned.segments if segment.path in paths]


def _rewrite_target(segment: Segment, scanned: LogReport) -> Path:
    """The segment's own name, unless it overlaps the one before: then it is named after
    the first offset that one does not hold, so that the two no longer overlap."""
    for damage in scanned.damages:
        if damage.kind is DamageKind.OVERLAP and damage.path == segment.path:
            return segment.path.with_name(segment_name(damage.offsets.stop))
    return segment.path


def _write_rewrite(segment: Segment, scanned: LogReport) -> Path | None:
    """The segment's intact records, byte for byte, in a durable file beside it that is not
    yet a segment; None if it has none."""
    kept = scanned.kept.get(segment.path, [])
    if not kept:
        return None
    data = segment.path.read_bytes()
    target = _rewrite_target(segment, scanned)
    pending = target.with_name(target.name + _REWRITE_SUFFIX)
    with pending.open("wb") as f:
        f.write(b"".join(data[start:end] for _, start, end in kept))
        f.flush()
        os.fsync(f.fileno())
    return target


def _link_into(quarantine: Path, path: Path) -> Path:
    """A second name for ``path`` in the quarantine (a copy where links are not possible),
    so that its bytes survive whatever replaces it."""
    quarantine.mkdir(exist_ok=True)
    target = quarantine / path.name
    suffix = 0
    while target.exists():
        suffix += 1
        target = quarantine / f"{path.name}.{suffix}"
    try:
        os.link(path, target)
    except OSError:
        shutil.copy2(path, target)
        with target.open("rb") as f:
            os.fsync(f.fileno())
    return target


def _declare_lost(scanned: LogReport, repair: RepairReport, quarantine: Path) -> LostOffsets:
    """Add the offsets the damage cost to the lost file (a new one if it was unreadable:
    its ranges are among the damage then, as gaps)."""
    unreadable = any(damage.kind is DamageKind.LOST_FILE for damage in scanned.damages)
    if unreadable:
        _link_into(quarantine, scanned.directory / LOST_NAME)
    lost = scanned.lost
    for damage in scanned.damages:
        if damage.kind.loses_records and damage.offsets:
            lost = lost.with_range(damage.offsets)
            repair.declared_lost.append(damage)
    if unreadable or lost != scanned.lost:
        write_lost(scanned.directory, lost)
    return lost


def _put_in_place(damaged: list[Segment], rewrites: dict[Path, Path | None]) -> None:
    """Every rewrite replaces its target, then the damaged segments no rewrite replaced
    go (their bytes are in the quarantine). In that order a crash leaves at worst a
    segment twice, which the next repair finds overlapping, never a record nowhere."""
    targets = {target for target in rewrites.values() if target is not None}
    for target in targets:
        os.replace(target.with_name(target.name + _REWRITE_SUFFIX), target)
    for segment in damaged:
        if segment.path not in targets:
            segment.path.unlink()


def _rebuild_marker(scanned: LogReport, lost: LostOffsets, quarantine: Path) -> None:
    """Raise the commit marker over the offsets now declared lost; rebuild a lost one from
    the highest offset on disk. Never lower it."""
    marker_damaged = any(d.kind is DamageKind.COMMIT_MARKER for d in scanned.damages)
    committed = -1 if scanned.committed is None else scanned.committed
    if marker_damaged:
        if (scanned.directory / COMMITTED_NAME).exists():
            _link_into(quarantine, scanned.directory / COMMITTED_NAME)
        committed = max(committed, scanned.next_offset - 1)
    committed = max(committed, lost.last)
    if marker_damaged or committed != scanned.committed:
        publish_committed(scanned.directory, committed, durable=True)
