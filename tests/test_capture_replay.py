"""Capture and replay (issue 13 §5): `mote query --save` and `mote listen --save` record
the serial bytes from a real pty served by the emulator, and `mote replay` turns them into
the rows and result-log records the live run produced."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from emulated import mote_emulate_pty

from motebase.gateway.capture import CaptureError, read_capture

#: Real-time end-to-end runs: tox runs them on py311 only (tox.ini).
pytestmark = pytest.mark.slow

MOTE = str(Path(sys.executable).with_name("mote"))
SQL = "SELECT nodeid, light FROM sensors SAMPLE PERIOD 1s"
#: How much later the live session may stamp a row than the capture stamped its bytes: the
#: reader thread records a chunk as it reads it, the session stamps the row when it takes
#: the packet from the queue, at once unless it is busy sending (a query part waits up to
#: a second for its acknowledgement) or writing rows -- or its process waits for a core:
#: `make test` beside Spark's JVM on two cores saw 1.2 s. The bound tells the capture's
#: clock from another (a replay stamping with the wrong one is off by far more), not speed.
STAMP_LAG_S = 5.0


def mote(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOTE, *args], capture_output=True, text=True, timeout=120, check=False, cwd=cwd
    )


def _emulator(tmp_path: Path, *extra: str) -> Iterator[str]:
    argv = ["--nodes", "9", "--lossless", "--pty", "--realtime", *extra]
    return mote_emulate_pty(argv, tmp_path)


@pytest.fixture
def pty(tmp_path: Path) -> Iterator[str]:
    yield from _emulator(tmp_path, "--duration", "2m")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _log(directory: Path, cwd: Path) -> list[dict[str, Any]]:
    done = mote("log", "cat", str(directory), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return [json.loads(line)["record"] for line in done.stdout.splitlines()]


def _without_receive_time(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "receive_time"} for row in rows]


def _assert_replay_matches(live: list[dict[str, Any]], replayed: list[dict[str, Any]]) -> None:
    """The live rows are the replay's first rows, value for value. The capture may end
    with bytes the reader took in after the live session's last read (while it sent the
    DEL and closed), which only the replay assembles."""
    assert live, "the live run produced rows"
    assert _without_receive_time(replayed[: len(live)]) == _without_receive_time(live)
    for was, again in zip(live, replayed, strict=False):
        if "receive_time" in was:
            assert 0 <= was["receive_time"] - again["receive_time"] < STAMP_LAG_S


def test_replaying_a_query_capture_writes_what_the_query_wrote(pty: str, tmp_path: Path) -> None:
    time.sleep(6)  # every node of the lossless 3x3 grid has a parent after about 4 s
    live = mote(
        "query",
        SQL,
        "--port",
        pty,
        "--duration",
        "8s",
        "--no-table",
        "--log",
        "live",
        "--out",
        "live.jsonl",
        "--save",
        "capture.jsonl",
        cwd=tmp_path,
    )
    assert live.returncode == 0, live.stderr
    capture = read_capture(tmp_path / "capture.jsonl")
    assert capture.header.port == pty
    assert capture.header.baud == 57600
    (recorded,) = capture.queries
    assert (recorded.qid, recorded.sql, recorded.wide_states) == (1, SQL, True)

    replayed = mote(
        "replay", "capture.jsonl", "--log", "replayed", "--out", "replayed.jsonl", cwd=tmp_path
    )
    assert replayed.returncode == 0, replayed.stderr
    _assert_replay_matches(_jsonl(tmp_path / "live.jsonl"), _jsonl(tmp_path / "replayed.jsonl"))
    live_log, replay_log = _log(tmp_path / "live", tmp_path), _log(tmp_path / "replayed", tmp_path)
    assert live_log[0] == replay_log[0]  # the query record, start time included
    _assert_replay_matches(live_log[1:], replay_log[1:])


def test_replaying_a_listen_capture_with_the_sql(tmp_path: Path) -> None:
    # The emulator injects the query into its root itself; listen only hears results.
    emulator = _emulator(tmp_path, "--duration", "2m", "--query", SQL, "--query-after", "5s")
    pty = next(emulator)
    try:
        time.sleep(5)
        listened = mote(
            "listen",
            "--port",
            pty,
            "--timeout",
            "6s",
            "--types",
            "uinttwo,uinttwo",
            "--save",
            "listen.jsonl",
            cwd=tmp_path,
        )
    finally:
        emulator.close()
    assert listened.returncode == 0, listened.stderr
    results = [
        packet["body"]
        for packet in map(json.loads, listened.stdout.splitlines())
        if packet.get("am") == 240
    ]
    assert results, "listen heard results"
    replayed = mote("replay", "listen.jsonl", "--sql", SQL, "--out", "replayed.jsonl", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    rows = _jsonl(tmp_path / "replayed.jsonl")
    # One row per result listen printed, with the values it decoded, in the same order.
    assert [(r["epoch"], r["values"]["nodeid"], r["values"]["light"]) for r in rows] == [
        (b["epoch"], *b["d"]["values"]) for b in results
    ]


def test_a_serial_forwarder_cannot_be_captured(tmp_path: Path) -> None:
    done = mote("listen", "--port", "sf://127.0.0.1:1", "--save", "c.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert "a SerialForwarder carries packets, not the serial line's bytes" in done.stderr
    assert not (tmp_path / "c.jsonl").exists()


def test_a_file_that_is_not_a_capture_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "not.jsonl"
    path.write_text('{"t": 0, "rx": "7e"}\n')
    with pytest.raises(CaptureError, match="line 1: not a capture line"):
        read_capture(path)
    done = mote("replay", str(path), cwd=tmp_path)
    assert done.returncode == 1
    assert "line 1: not a capture line" in done.stderr
