"""The issue's damaged logs: one 300-record log, damaged seven ways (cases A-G).

The log holds records 0..299, all committed, in four segments: 0-89, 90-177, 178-264
and 265-299. Each case damages a fresh copy and states exactly what the log holds then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from motebase.gateway.logfiles import COMMITTED_NAME, DamageKind, segment_name
from motebase.gateway.resultlog import ResultLog

SEGMENT_BYTES = 5288  # with record(), the segments begin at the offsets below
FIRSTS = [0, 90, 178, 265]
RECORDS = 300
GARBAGE = b"not a record\n\x00\xff\x00"


def record(offset: int) -> dict[str, object]:
    return {"kind": "reading", "seq": offset, "pad": "x" * 7}


def build_log(directory: Path) -> Path:
    with ResultLog(directory, segment_bytes=SEGMENT_BYTES) as log:
        for start in range(0, RECORDS, 25):
            log.append_batch([record(offset) for offset in range(start, start + 25)])
    assert ResultLog(directory).segment_offsets() == FIRSTS
    assert ResultLog(directory).latest_offset() == RECORDS - 1
    return directory


def segment(directory: Path, first: int) -> Path:
    return directory / segment_name(first)


def line_start(path: Path, offset: int) -> int:
    """Where the line of record ``offset`` starts in segment ``path``."""
    position = 0
    for line in path.read_bytes().splitlines(keepends=True):
        if line.startswith(f"{offset} ".encode()):
            return position
        position += len(line)
    raise AssertionError(f"no record {offset} in {path}")


def flip_bit(path: Path, offset: int) -> None:
    """One bit flipped in the JSON of record ``offset``."""
    data = bytearray(path.read_bytes())
    data[line_start(path, offset) + 20] ^= 0x01
    path.write_bytes(bytes(data))


def tear_last_segment(directory: Path) -> None:
    last = segment(directory, 265)
    last.write_bytes(last.read_bytes()[:-17])


def flip_in_last_segment(directory: Path) -> None:
    flip_bit(segment(directory, 265), 268)


def flip_in_older_segment(directory: Path) -> None:
    flip_bit(segment(directory, 90), 120)


def delete_commit_marker(directory: Path) -> None:
    (directory / COMMITTED_NAME).unlink()


def empty_last_segment(directory: Path) -> None:
    segment(directory, 265).write_bytes(b"")


def garbage_tail(directory: Path) -> None:
    with segment(directory, 265).open("ab") as f:
        f.write(GARBAGE)


def delete_middle_segment(directory: Path) -> None:
    segment(directory, 90).unlink()


@dataclass(frozen=True)
class Case:
    """A damage and what it leaves: the records a reader gets before the error, the error
    (kind, file name, byte, offsets; None if there is none), the offsets still holding a
    record (the ones repair keeps) and the segments repair moves to the quarantine."""

    damage: Callable[[Path], None]
    read: range
    error: tuple[DamageKind, str, int, range] | None
    intact: list[int]
    quarantined: tuple[int, ...] = ()


def _all_but(*gone: range) -> list[int]:
    return [o for o in range(RECORDS) if not any(o in r for r in gone)]


CASES = {
    "A": Case(
        tear_last_segment,
        range(299),
        (DamageKind.CORRUPT, segment_name(265), 2074, range(299, 300)),
        _all_but(range(299, 300)),
        quarantined=(265,),
    ),
    "B": Case(
        flip_in_last_segment,
        range(268),
        (DamageKind.CORRUPT, segment_name(265), 183, range(268, 269)),
        _all_but(range(268, 269)),
        quarantined=(265,),
    ),
    "C": Case(
        flip_in_older_segment,
        range(120),
        (DamageKind.CORRUPT, segment_name(90), 1810, range(120, 121)),
        _all_but(range(120, 121)),
        quarantined=(90,),
    ),
    "D": Case(
        delete_commit_marker,
        range(0),
        (DamageKind.COMMIT_MARKER, COMMITTED_NAME, 0, range(0, 300)),
        _all_but(),
    ),
    "E": Case(
        empty_last_segment,
        range(265),
        (DamageKind.MISSING, segment_name(265), 0, range(265, 300)),
        _all_but(range(265, 300)),
        quarantined=(265,),
    ),
    "F": Case(garbage_tail, range(300), None, _all_but()),
    "G": Case(
        delete_middle_segment,
        range(90),
        (DamageKind.MISSING_SEGMENT, segment_name(90), 0, range(90, 178)),
        _all_but(range(90, 178)),
    ),
}
