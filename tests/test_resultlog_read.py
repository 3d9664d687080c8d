"""ResultLog.read reads regular segments in bulk (resultlog._read_regular) and walks the
rest line by line. The bulk path must change nothing: over random logs, random damage and
random ranges, read yields what the line-by-line walk alone yields, and fails the same."""

from __future__ import annotations

import bisect
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from motebase.gateway.logfiles import (
    Damage,
    LogCorruptError,
    encode_record,
    list_segments,
    read_lost,
    segment_name,
)
from motebase.gateway.logscan import Walk
from motebase.gateway.resultlog import ResultLog

KINDS = ("reading", "query", "aggregate")


def walked(
    log: ResultLog, start: int, end: int | None, kind: str | None
) -> tuple[list[tuple[int, dict[str, Any]]], str | None]:
    """read() as it was before the bulk path: every line through the walk."""
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        committed = log.latest_offset()
        end = committed + 1 if end is None else min(end, committed + 1)
        if start >= end:
            return out, None
        segments = list_segments(log.directory)
        walk = Walk(log.directory, segments, read_lost(log.directory), committed, end)
        firsts = [s.first_offset for s in segments]
        index = max(bisect.bisect_right(firsts, start) - 1, 0)
        for event in walk.events(first_segment=index):
            if isinstance(event, Damage):
                if event.offsets.stop <= start:
                    continue
                raise LogCorruptError(event)
            if event.offset < start:
                continue
            record = json.loads(event.payload.decode())
            if kind is None or record.get("kind") == kind:
                out.append((event.offset, record))
    except LogCorruptError as exc:
        return out, str(exc)
    return out, None


def read(log: ResultLog, start: int, end: int | None, kind: str | None):
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        for item in log.read(start, end, kind):
            out.append(item)
    except LogCorruptError as exc:
        return out, str(exc)
    return out, None


_damage = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 20), st.integers(0, 10_000)),
    st.tuples(st.just("truncate"), st.integers(0, 20), st.integers(1, 200)),
    st.tuples(st.just("delete"), st.integers(0, 20), st.just(0)),
    st.tuples(st.just("garbage"), st.integers(0, 20), st.integers(0, 10_000)),
    st.tuples(st.just("uncommitted"), st.just(0), st.integers(1, 3)),
    st.tuples(st.just("torn"), st.just(0), st.integers(1, 40)),
)


def _damage_log(directory: Path, how: str, which: int, at: int) -> None:
    segments = list_segments(directory)
    segment = segments[which % len(segments)].path
    data = segment.read_bytes()
    if how == "flip" and data:
        i = at % len(data)
        segment.write_bytes(data[:i] + bytes((data[i] ^ 0x04,)) + data[i + 1 :])
    elif how == "truncate":
        segment.write_bytes(data[: max(0, len(data) - at)])
    elif how == "delete" and len(segments) > 1:
        segment.unlink()
    elif how == "garbage":
        i = data.find(b"\n", at % max(1, len(data))) + 1
        segment.write_bytes(data[:i] + b"not a record\n" + data[i:])
    elif how in ("uncommitted", "torn"):
        last = segments[-1].path
        next_offset = ResultLog(directory).latest_offset() + 1
        line = encode_record(next_offset, {"kind": "reading", "epoch": 0})
        with last.open("ab") as f:
            f.write(line if how == "uncommitted" else line[: at % len(line)])


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.lists(st.sampled_from(KINDS), min_size=1, max_size=30), max_size=8),
    segment_bytes=st.sampled_from([300, 1500, 1 << 20]),
    damage=st.lists(_damage, max_size=2),
    start=st.integers(0, 120),
    length=st.one_of(st.none(), st.integers(0, 120)),
    kind=st.sampled_from([None, *KINDS]),
)
def test_read_is_the_walk(
    batches: list[list[str]],
    segment_bytes: int,
    damage: list[tuple[str, int, int]],
    start: int,
    length: int | None,
    kind: str | None,
) -> None:
    directory = Path(tempfile.mkdtemp())
    try:
        with ResultLog(directory, segment_bytes=segment_bytes) as log:
            offset = 0
            for batch in batches:
                records = [
                    {"kind": k, "n": offset + i, "pad": "x" * (i % 5)} for i, k in enumerate(batch)
                ]
                log.append_batch(records)
                offset += len(batch)
        if batches:
            for how, which, at in damage:
                _damage_log(directory, how, which, at)
        end = None if length is None else start + length
        log = ResultLog(directory)
        assert read(log, start, end, kind) == walked(log, start, end, kind)
    finally:
        shutil.rmtree(directory)


def test_a_regular_log_is_read_in_bulk_across_segments(tmp_path: Path) -> None:
    # Not vacuous: a log of many regular segments, every range and kind as the walk reads it.
    with ResultLog(tmp_path, segment_bytes=400) as log:
        for start in range(0, 200, 17):
            log.append_batch([{"kind": KINDS[i % 3], "n": i} for i in range(start, start + 17)])
    log = ResultLog(tmp_path)
    assert len(log.segment_offsets()) > 10
    assert (tmp_path / segment_name(0)).exists()
    for start, end in [(0, None), (5, 6), (33, 150), (150, 400), (204, None)]:
        for kind in (None, *KINDS):
            assert read(log, start, end, kind) == walked(log, start, end, kind)
    assert [o for o, _ in log.read(10, 14)] == [10, 11, 12, 13]


def test_a_segment_missing_between_regular_ones_fails_the_read_where_the_walk_does(
    tmp_path: Path,
) -> None:
    with ResultLog(tmp_path, segment_bytes=300) as log:
        for start in range(0, 60, 10):
            log.append_batch([{"kind": "reading", "n": n} for n in range(start, start + 10)])
    segments = list_segments(tmp_path)
    segments[2].path.unlink()
    log = ResultLog(tmp_path)
    records, error = read(log, 0, None, None)
    assert (records, error) == walked(log, 0, None, None)
    assert [o for o, _ in records] == list(range(segments[2].first_offset))
    assert error is not None and "missing segment file" in error


def test_a_line_check_line_takes_but_the_bulk_check_does_not_is_read_by_the_walk(
    tmp_path: Path,
) -> None:
    # The bulk check is stricter than check_line (it matches encode_record's spelling):
    # a line with an upper-case CRC passes check_line, so the segment is the walk's, and
    # reads the same.
    with ResultLog(tmp_path, segment_bytes=300) as log:
        log.append_batch([{"kind": "reading", "n": n} for n in range(30)])
    segment = list_segments(tmp_path)[1].path
    lines = segment.read_bytes().split(b"\n")
    head, length, crc, payload = lines[1].split(b" ", 3)
    lines[1] = b" ".join([head, length, crc.upper(), payload])
    segment.write_bytes(b"\n".join(lines))
    log = ResultLog(tmp_path)
    assert read(log, 0, None, None) == walked(log, 0, None, None)
    assert [record["n"] for _, record in log.read()] == list(range(30))


def test_read_payloads_chunks_hold_what_read_parses(tmp_path: Path) -> None:
    with ResultLog(tmp_path, segment_bytes=500) as log:
        log.append_batch([{"kind": KINDS[n % 3], "n": n} for n in range(100)])
    log = ResultLog(tmp_path)
    for kind in (None, *KINDS):
        chunked = [
            (offset, json.loads(payload))
            for offsets, payloads in log.read_payloads(7, 93, kind)
            for offset, payload in zip(offsets, payloads, strict=True)
        ]
        assert [item for item in chunked if kind is None or item[1]["kind"] == kind] == list(
            log.read(7, 93, kind)
        )
