"""The durable result log: offsets, segment rolls, crash recovery, torn tails."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from motebase.gateway.resultlog import (
    LogCorruptError,
    LogLockedError,
    ResultLog,
    encode_record,
    segment_name,
)


def reading(seq: int) -> dict[str, object]:
    return {
        "kind": "reading",
        "query_id": 1,
        "epoch": seq,
        "node_id": seq % 7,
        "epoch_time": 1_700_000_000.0 + seq,
        "receive_time": 1_700_000_000.25 + seq,
        "values": {"light": seq * 3, "temp": None},
    }


def test_append_returns_last_offset_and_read_returns_records_in_order(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as log:
        assert log.latest_offset() == -1
        assert log.append_batch([reading(0), reading(1), reading(2)]) == 2
        assert log.append_batch([reading(3)]) == 3
        assert log.latest_offset() == 3
        assert list(log.read()) == [(i, reading(i)) for i in range(4)]
        assert list(log.read(1, 3)) == [(1, reading(1)), (2, reading(2))]
        assert list(log.read(4)) == []


def test_read_filters_by_kind(tmp_path: Path) -> None:
    query = {"kind": "query", "query_id": 1, "sql": 'SELECT "kind":"reading"'}
    with ResultLog(tmp_path) as log:
        log.append_batch([query, reading(1), {"kind": "aggregate", "value": 2.5}, reading(3)])
    log = ResultLog(tmp_path)
    assert list(log.read(kind="reading")) == [(1, reading(1)), (3, reading(3))]
    assert list(log.read(kind="query")) == [(0, query)]
    assert list(log.read(2, kind="aggregate")) == [(2, {"kind": "aggregate", "value": 2.5})]


def test_reader_sees_records_of_a_writer_in_another_instance(tmp_path: Path) -> None:
    reader = ResultLog(tmp_path)
    with ResultLog(tmp_path) as writer:
        writer.append_batch([reading(0)])
        assert [o for o, _ in reader.read()] == [0]
        writer.append_batch([reading(1)])
        assert reader.latest_offset() == 1


def test_restart_appends_after_the_last_record(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([reading(i) for i in range(5)])
    with ResultLog(tmp_path) as log:
        assert log.append_batch([reading(5), reading(6)]) == 6
    assert list(ResultLog(tmp_path).read()) == [(i, reading(i)) for i in range(7)]


def test_segments_roll_at_their_size_and_are_named_by_first_offset(tmp_path: Path) -> None:
    records = [reading(i) for i in range(200)]
    with ResultLog(tmp_path, segment_bytes=2048) as log:
        for start in range(0, 200, 30):
            log.append_batch(records[start : start + 30])
    segments = sorted(tmp_path.glob("*.seg"))
    assert len(segments) > 5
    expected_first = 0
    for segment in segments:
        assert segment.name == segment_name(expected_first)
        lines = segment.read_bytes().splitlines()
        assert len(lines) > 0
        expected_first += len(lines)
    assert expected_first == 200
    log = ResultLog(tmp_path)
    assert list(log.read()) == list(enumerate(records))
    assert list(log.read(57, 143)) == [(i, records[i]) for i in range(57, 143)]


def test_restart_after_a_roll_continues_in_the_newest_segment(tmp_path: Path) -> None:
    with ResultLog(tmp_path, segment_bytes=1024) as log:
        log.append_batch([reading(i) for i in range(40)])
    with ResultLog(tmp_path, segment_bytes=1024) as log:
        log.append_batch([reading(i) for i in range(40, 60)])
    assert [o for o, _ in ResultLog(tmp_path).read()] == list(range(60))


def test_torn_tail_is_invisible_to_readers_and_truncated_by_the_next_writer(
    tmp_path: Path,
) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([reading(0), reading(1)])
    segment = tmp_path / segment_name(0)
    whole = encode_record(2, reading(2))
    with segment.open("ab") as f:
        f.write(whole[: len(whole) // 2])
    reader = ResultLog(tmp_path)
    assert reader.latest_offset() == 1
    assert [o for o, _ in reader.read()] == [0, 1]
    with ResultLog(tmp_path) as log:
        assert log.append_batch([reading(2)]) == 2
    assert list(ResultLog(tmp_path).read()) == [(i, reading(i)) for i in range(3)]


def test_records_are_invisible_until_committed_and_published_by_the_next_writer(
    tmp_path: Path,
) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([reading(0), reading(1)])
    with (tmp_path / segment_name(0)).open("ab") as f:  # a crash after write, before publish
        f.write(encode_record(2, reading(2)))
    reader = ResultLog(tmp_path)
    assert reader.latest_offset() == 1
    assert [o for o, _ in reader.read()] == [0, 1]
    with ResultLog(tmp_path) as log:
        assert log.append_batch([reading(3)]) == 3  # the complete record 2 was kept
    assert list(reader.read()) == [(i, reading(i)) for i in range(4)]


def test_complete_line_with_bad_checksum_at_the_tail_is_repaired(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([reading(0)])
    garbage = bytearray(encode_record(1, reading(1)))
    garbage[-5] ^= 0x01  # a flipped bit inside the payload
    with (tmp_path / segment_name(0)).open("ab") as f:
        f.write(bytes(garbage))
    assert ResultLog(tmp_path).latest_offset() == 0
    with ResultLog(tmp_path) as log:
        assert log.append_batch([reading(1)]) == 1
    assert list(ResultLog(tmp_path).read()) == [(0, reading(0)), (1, reading(1))]


def test_corruption_in_a_sealed_segment_is_an_error(tmp_path: Path) -> None:
    with ResultLog(tmp_path, segment_bytes=512) as log:
        log.append_batch([reading(i) for i in range(20)])
    first = tmp_path / segment_name(0)
    data = bytearray(first.read_bytes())
    data[30] ^= 0x01
    first.write_bytes(bytes(data))
    with pytest.raises(LogCorruptError, match="corrupt record, record offset 0") as caught:
        list(ResultLog(tmp_path).read())
    assert (caught.value.segment, caught.value.byte, caught.value.offsets) == (first, 0, range(1))


def test_a_second_writer_is_refused(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as first:
        first.append_batch([reading(0)])
        with pytest.raises(LogLockedError):
            ResultLog(tmp_path).append_batch([reading(1)])


def test_records_that_are_not_json_are_rejected_before_anything_is_written(
    tmp_path: Path,
) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([reading(0)])
        with pytest.raises(ValueError):
            log.append_batch([reading(1), {"kind": "reading", "value": float("nan")}])
        assert log.append_batch([reading(1)]) == 1
    assert [o for o, _ in ResultLog(tmp_path).read()] == [0, 1]


# The writer acknowledges each batch on stdout only after append_batch returned, i.e.
# after the fsync; the tiny segment size makes every batch span several writes, so
# SIGKILL lands inside a batch.
_WRITER = textwrap.dedent(
    """
    import sys
    from motebase.gateway.resultlog import ResultLog

    log = ResultLog(sys.argv[1], segment_bytes=4096)
    seq = log.open_writer() + 1
    while True:
        batch = [{"kind": "reading", "seq": seq + i, "pad": "x" * 60} for i in range(300)]
        last = log.append_batch(batch)
        seq += len(batch)
        print(last, flush=True)
    """
)


def bytes_on_disk(directory: Path) -> int:
    return sum(segment.stat().st_size for segment in directory.glob("*.seg"))


def _run_writer_until_killed(directory: Path, min_acked: int) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(directory)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    acked = -1
    deadline = time.monotonic() + 60
    while acked < min_acked and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acked = int(line)
    size = bytes_on_disk(directory)
    while bytes_on_disk(directory) == size and time.monotonic() < deadline:
        pass  # the next batch has started reaching the disk: kill inside it
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for line in proc.stdout:  # acknowledgements already in the pipe count too
        acked = int(line)
    assert acked >= min_acked, "writer did not get far enough"
    return acked


def _assert_contiguous(directory: Path) -> int:
    records = list(ResultLog(directory).read())
    assert [offset for offset, _ in records] == list(range(len(records)))
    assert all(record["seq"] == offset for offset, record in records)
    return len(records) - 1


def test_sigkill_mid_batch_loses_only_unacknowledged_records_and_never_corrupts(
    tmp_path: Path,
) -> None:
    acked = _run_writer_until_killed(tmp_path, min_acked=1500)
    last = _assert_contiguous(tmp_path)
    assert last >= acked
    assert ResultLog(tmp_path).latest_offset() == last

    acked_again = _run_writer_until_killed(tmp_path, min_acked=last + 900)
    last_again = _assert_contiguous(tmp_path)
    assert last_again >= acked_again > last


def _mixed(i: int) -> dict[str, object]:
    """Every seventh record a query: the kind the fast search is for, among readings."""
    if i % 7 == 3:
        return {"kind": "query", "query_id": i, "sql": 'SELECT "kind":"query" AS x'}
    return reading(i)


def test_find_returns_what_read_of_the_kind_returns(tmp_path: Path) -> None:
    with ResultLog(tmp_path, segment_bytes=700) as log:
        for start in range(0, 120, 13):
            log.append_batch([_mixed(i) for i in range(start, start + 13)])
    log = ResultLog(tmp_path)
    assert len(log.segment_offsets()) > 5
    for kind in ("query", "reading", "aggregate"):
        assert log.find(kind) == [record for _, record in log.read(kind=kind)]
    assert [q["query_id"] for q in log.find("query")] == list(range(3, 130, 7))


def test_find_leaves_out_uncommitted_records(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([_mixed(i) for i in range(20)])
    with (tmp_path / segment_name(0)).open("ab") as f:  # written, not yet committed
        f.write(encode_record(20, _mixed(3)))
    log = ResultLog(tmp_path)
    assert [q["query_id"] for q in log.find("query")] == [3, 10, 17]
    assert log.find("query") == [record for _, record in log.read(kind="query")]


def test_find_reports_damage_to_a_record_of_its_kind_as_read_does(tmp_path: Path) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([_mixed(i) for i in range(20)])
    segment = tmp_path / segment_name(0)
    data = segment.read_bytes()
    at = data.index(b'"kind":"query"', data.index(b"\n10 ")) + 20  # inside record 10
    segment.write_bytes(data[:at] + bytes((data[at] ^ 0x01,)) + data[at + 1 :])
    with pytest.raises(LogCorruptError, match="record offset 10"):
        ResultLog(tmp_path).find("query")


def test_find_reports_a_record_of_its_kind_at_an_offset_declared_lost(tmp_path: Path) -> None:
    # Lost offsets hold no records once repaired; one that does is damage, as read says.
    with ResultLog(tmp_path) as log:
        log.append_batch([_mixed(i) for i in range(20)])
    (tmp_path / "lost").write_text('{"ranges": [[10, 10]]}')
    with pytest.raises(LogCorruptError, match="corrupt record"):
        list(ResultLog(tmp_path).read(kind="query"))
    with pytest.raises(LogCorruptError, match="corrupt record"):
        ResultLog(tmp_path).find("query")
