"""The result log under damage: no committed record truncated, no offset reused, every
damage a LogCorruptError that names the file, the byte and the record offsets.

Cases A-G (tests/damaged_log.py) are the issue's: each on the same 300-record log.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from damaged_log import (
    CASES,
    GARBAGE,
    SEGMENT_BYTES,
    Case,
    build_log,
    flip_bit,
    record,
    segment,
)

from motebase.gateway.logfiles import (
    COMMITTED_NAME,
    DamageKind,
    LostOffsets,
    read_committed,
    read_lost,
    write_lost,
)
from motebase.gateway.logrepair import repair_log
from motebase.gateway.logscan import scan_log
from motebase.gateway.resultlog import (
    LogCorruptError,
    LogLockedError,
    ResultLog,
    encode_record,
    segment_name,
)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return build_log(tmp_path / "log")


def read_until_error(
    directory: Path, start: int = 0, end: int | None = None
) -> tuple[list[int], LogCorruptError | None]:
    """The offsets a reader got, and the error that stopped it (None if it read to the end);
    checks every record read is the one written at its offset."""
    offsets: list[int] = []
    try:
        for offset, got in ResultLog(directory).read(start, end):
            assert got == record(offset)
            offsets.append(offset)
    except LogCorruptError as exc:
        return offsets, exc
    return offsets, None


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def assert_error(directory: Path, error: LogCorruptError | None, case: Case) -> None:
    if case.error is None:
        assert error is None
        return
    assert error is not None
    kind, name, byte, offsets = case.error
    assert (error.damage.kind, error.segment, error.byte, error.offsets) == (
        kind,
        directory / name,
        byte,
        offsets,
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_reader_gets_every_record_before_the_damage_then_its_error(
    log_dir: Path, name: str
) -> None:
    case = CASES[name]
    case.damage(log_dir)
    offsets, error = read_until_error(log_dir)
    assert offsets == list(case.read)
    assert_error(log_dir, error, case)


@pytest.mark.parametrize("name", sorted(n for n, case in CASES.items() if case.error))
def test_writer_refuses_a_damaged_log_and_changes_nothing(log_dir: Path, name: str) -> None:
    case = CASES[name]
    case.damage(log_dir)
    before = files(log_dir)
    with pytest.raises(LogCorruptError, match="run `mote log repair ") as caught:
        ResultLog(log_dir).open_writer()
    assert_error(log_dir, caught.value, case)
    after = files(log_dir)
    after.pop("writer.lock")
    before.pop("writer.lock")
    assert after == before


def test_error_message_names_file_byte_and_offsets(log_dir: Path) -> None:
    CASES["B"].damage(log_dir)
    with pytest.raises(LogCorruptError) as caught:
        list(ResultLog(log_dir).read())
    assert str(caught.value) == (
        f"damaged result log: {log_dir / segment_name(265)}, byte 183: corrupt record, "
        f"record offset 268; run `mote log repair {log_dir}` to quarantine the damage and "
        "keep every intact record"
    )


def test_garbage_tail_after_the_committed_offset_is_truncated_by_the_writer(
    log_dir: Path,
) -> None:
    CASES["F"].damage(log_dir)
    last = segment(log_dir, 265)
    size = last.stat().st_size - len(GARBAGE)
    with ResultLog(log_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert log.open_writer() == 299
        assert last.stat().st_size == size
        assert log.append_batch([record(300)]) == 300
    assert read_until_error(log_dir) == (list(range(301)), None)


def test_reader_asked_for_offsets_clear_of_the_damage_reads_them(log_dir: Path) -> None:
    CASES["C"].damage(log_dir)  # record 120 in segment 90 is corrupt
    assert read_until_error(log_dir, 0, 120) == (list(range(120)), None)
    assert read_until_error(log_dir, 121) == (list(range(121, 300)), None)
    offsets, error = read_until_error(log_dir, 100, 130)
    assert offsets == list(range(100, 120))
    assert error is not None and error.offsets == range(120, 121)


def test_torn_committed_record_in_a_sealed_segment_costs_the_offsets_to_the_next(
    log_dir: Path,
) -> None:
    sealed = segment(log_dir, 90)
    sealed.write_bytes(sealed.read_bytes()[:-5])  # record 177 torn
    offsets, error = read_until_error(log_dir)
    assert offsets == list(range(177))
    assert error is not None
    assert (error.damage.kind, error.segment, error.offsets) == (
        DamageKind.CORRUPT,
        sealed,
        range(177, 178),
    )


def test_bit_flips_in_two_segments_are_each_reported(log_dir: Path) -> None:
    flip_bit(segment(log_dir, 0), 5)
    flip_bit(segment(log_dir, 178), 200)
    report = scan_log(log_dir)
    assert [(d.path.name, d.offsets) for d in report.damages] == [
        (segment_name(0), range(5, 6)),
        (segment_name(178), range(200, 201)),
    ]
    assert report.records == 298


def test_stray_line_between_intact_records_is_damage_that_costs_no_offset(
    log_dir: Path,
) -> None:
    path = segment(log_dir, 90)
    data = path.read_bytes()
    cut = data.index(b"\n100 ") + 1
    path.write_bytes(data[:cut] + b"stray\n" + data[cut:])
    offsets, error = read_until_error(log_dir)
    assert offsets == list(range(100))
    assert error is not None
    assert (error.damage.kind, error.byte, error.offsets) == (
        DamageKind.CORRUPT,
        cut,
        range(100, 100),
    )
    assert "no record offset affected" in str(error)


def test_unreadable_commit_marker_is_damage(log_dir: Path) -> None:
    (log_dir / COMMITTED_NAME).write_text("")
    with pytest.raises(LogCorruptError) as caught:
        ResultLog(log_dir).latest_offset()
    assert (caught.value.damage.kind, caught.value.offsets) == (
        DamageKind.COMMIT_MARKER,
        range(300),
    )


def test_new_log_publishes_its_commit_marker_before_its_first_segment(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as log:
        assert log.open_writer() == -1
        assert read_committed(tmp_path) == -1
        assert log.latest_offset() == -1
    assert list(ResultLog(tmp_path).read()) == []


def test_declared_lost_offsets_are_passed_over(log_dir: Path) -> None:
    CASES["G"].damage(log_dir)  # 90..177 gone with their segment
    write_lost(log_dir, LostOffsets().with_range(range(90, 178)))
    assert read_until_error(log_dir) == ([*range(90), *range(178, 300)], None)
    assert read_until_error(log_dir, 100, 200) == (list(range(178, 200)), None)


def test_lost_offsets_must_cover_the_whole_gap(log_dir: Path) -> None:
    CASES["G"].damage(log_dir)
    write_lost(log_dir, LostOffsets().with_range(range(90, 170)))
    offsets, error = read_until_error(log_dir)
    assert offsets == list(range(90))
    assert error is not None
    assert (error.damage.kind, error.offsets) == (DamageKind.MISSING_SEGMENT, range(170, 178))


def test_writer_continues_after_the_highest_offset_ever_committed(log_dir: Path) -> None:
    # Committed up to 309, but 300..309 were declared lost: they were read once, so they
    # can never name another record.
    write_lost(log_dir, LostOffsets().with_range(range(300, 310)))
    (log_dir / COMMITTED_NAME).write_text("309\n")
    with ResultLog(log_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert log.open_writer() == 309
        assert log.append_batch([record(310), record(311)]) == 311
    assert read_until_error(log_dir) == ([*range(300), 310, 311], None)


def test_uncommitted_records_after_a_crash_are_kept_and_published(log_dir: Path) -> None:
    with segment(log_dir, 265).open("ab") as f:  # fsync'd, crashed before the publication
        f.write(encode_record(300, record(300)) + encode_record(301, record(301))[:9])
    assert read_until_error(log_dir) == (list(range(300)), None)
    with ResultLog(log_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert log.open_writer() == 300
        assert log.append_batch([record(301)]) == 301
    assert read_until_error(log_dir) == (list(range(302)), None)


# -- mote log repair ------------------------------------------------------------------------


def lost_ranges(intact: list[int]) -> list[list[int]]:
    """The offsets below 300 that hold no record, as the lost file's inclusive ranges."""
    lost = LostOffsets()
    for offset in sorted(set(range(300)) - set(intact)):
        lost = lost.with_range(range(offset, offset + 1))
    return [list(r) for r in lost.ranges]


@pytest.mark.parametrize("name", sorted(CASES))
def test_repair_keeps_every_intact_record_at_its_offset_and_reuses_none(
    log_dir: Path, name: str
) -> None:
    case = CASES[name]
    case.damage(log_dir)
    damaged = {first: segment(log_dir, first).read_bytes() for first in case.quarantined}

    repair = repair_log(log_dir)

    assert (repair.remaining, repair.next_offset) == ([], 300)
    assert read_until_error(log_dir) == (case.intact, None)
    lost = [] if case.intact == list(range(300)) else lost_ranges(case.intact)
    assert read_lost(log_dir) == LostOffsets(tuple((a, b) for a, b in lost))
    quarantine = log_dir / "quarantine"
    quarantined = files(quarantine) if quarantine.exists() else {}
    assert quarantined == {segment_name(first): data for first, data in damaged.items()}
    assert read_committed(log_dir) == 299
    with ResultLog(log_dir, segment_bytes=SEGMENT_BYTES) as log:
        assert log.open_writer() == 299
        assert log.append_batch([record(300), record(301)]) == 301
    assert read_until_error(log_dir) == ([*case.intact, 300, 301], None)
    assert scan_log(log_dir).healthy


def test_repair_of_a_healthy_log_changes_nothing(log_dir: Path) -> None:
    before = files(log_dir)
    repair = repair_log(log_dir)
    assert (repair.damages, repair.quarantined, repair.next_offset) == ([], [], 300)
    assert files(log_dir) == before
    assert not (log_dir / "quarantine").exists()


def test_second_repair_finds_nothing_to_do(log_dir: Path) -> None:
    CASES["B"].damage(log_dir)
    assert len(repair_log(log_dir).damages) == 1
    again = repair_log(log_dir)
    assert (again.damages, again.declared_lost, again.next_offset) == ([], [], 300)


def test_repair_is_refused_while_a_writer_has_the_log(log_dir: Path) -> None:
    CASES["F"].damage(log_dir)
    with ResultLog(log_dir) as log:
        log.open_writer()
        with pytest.raises(LogLockedError):
            repair_log(log_dir)


def test_repair_throws_away_the_rewrites_of_a_repair_that_crashed(log_dir: Path) -> None:
    CASES["C"].damage(log_dir)
    leftover = log_dir / (segment_name(90) + ".repair")
    leftover.write_bytes(b"half a rewrite")
    repair_log(log_dir)
    assert not leftover.exists()
    assert read_until_error(log_dir) == (CASES["C"].intact, None)


def test_repair_rebuilds_the_marker_above_every_offset_on_disk(log_dir: Path) -> None:
    # Marker and the end of the last segment both gone: the torn line at the end may have
    # been committed, so its offset is declared lost rather than given out again.
    CASES["D"].damage(log_dir)
    CASES["A"].damage(log_dir)
    repair = repair_log(log_dir)
    assert [d.kind for d in repair.damages] == [DamageKind.COMMIT_MARKER, DamageKind.CORRUPT]
    assert (read_committed(log_dir), repair.next_offset) == (299, 300)
    assert read_until_error(log_dir) == (list(range(299)), None)


def test_repair_renames_a_segment_that_overlaps_the_one_before(log_dir: Path) -> None:
    # A copy of segment 178 under the name 170: both hold 178..264.
    copy = log_dir / segment_name(170)
    copy.write_bytes(segment(log_dir, 178).read_bytes())
    offsets, error = read_until_error(log_dir)
    assert offsets == list(range(178))
    assert error is not None and error.damage.kind is DamageKind.OVERLAP
    assert [(d.kind, d.path.name, d.offsets) for d in scan_log(log_dir).damages] == [
        (DamageKind.OVERLAP, segment_name(170), range(170, 178)),
        (DamageKind.OVERLAP, segment_name(178), range(178, 265)),
    ]
    with pytest.raises(LogCorruptError):
        ResultLog(log_dir).open_writer()
    repair = repair_log(log_dir)
    assert (repair.remaining, repair.declared_lost, repair.next_offset) == ([], [], 300)
    assert ResultLog(log_dir).segment_offsets() == [0, 90, 178, 265]
    assert read_until_error(log_dir) == (list(range(300)), None)


def test_unreadable_lost_file_is_damage_and_repair_rebuilds_it(log_dir: Path) -> None:
    CASES["G"].damage(log_dir)
    repair_log(log_dir)
    (log_dir / "lost").write_text("{not json")
    offsets, error = read_until_error(log_dir)
    assert (offsets, error is not None and error.damage.kind) == ([], DamageKind.LOST_FILE)
    assert [d.kind for d in scan_log(log_dir).damages] == [
        DamageKind.LOST_FILE,
        DamageKind.MISSING_SEGMENT,
    ]
    repair = repair_log(log_dir)
    assert (repair.remaining, repair.next_offset) == ([], 300)
    assert (log_dir / "quarantine" / "lost").read_text() == "{not json"
    assert read_until_error(log_dir) == (CASES["G"].intact, None)
