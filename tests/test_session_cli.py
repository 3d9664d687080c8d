"""`mote query` and `mote stop` against a scripted root on a pty."""

from __future__ import annotations

import csv
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from scripted_mote import ScriptedMote, TinyDBRoot, aggregate_packet, query_parts, tuple_packet

from motebase.gateway.assembly import Row
from motebase.gateway.cli.main import build_cli
from motebase.gateway.cli.params import parse_duration
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import AmType, parse_tos_packet
from motebase.gateway.resultlog import ResultLog
from motebase.gateway.session import QuerySession, SessionConfig
from motebase.gateway.transport import open_link

SELECT = "SELECT nodeid, light FROM sensors EPOCH DURATION 1024"


@pytest.fixture
def mote(tmp_path: Path) -> Iterator[ScriptedMote]:
    scripted = ScriptedMote(tmp_path, TinyDBRoot(running=[1]))
    yield scripted
    scripted.close()


def feed_tuples(mote: ScriptedMote, parts: int, epochs: int) -> threading.Thread:
    def run() -> None:
        qid = parse_tos_packet(mote.wait_for(AmType.QUERY, parts)[0])[1][0]
        for epoch in range(1, epochs + 1):
            for node in (1, 2):
                mote.send(tuple_packet(qid, epoch, node, [node, 10 * epoch + node], [4, 4]))
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def mote_query(*args: str) -> str:
    result = CliRunner().invoke(build_cli(), ["query", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_query_writes_json_lines_and_the_result_log(mote: ScriptedMote, tmp_path: Path) -> None:
    feeder = feed_tuples(mote, parts=2, epochs=40)
    out, log = tmp_path / "rows.jsonl", tmp_path / "log"
    output = mote_query(SELECT, "--port", str(mote.path), "--out", str(out), "--log", str(log),
               "--epochs", "2", "--no-table")  # fmt: skip
    feeder.join(timeout=10)
    assert "query 2 started" in output
    assert "query 2 stopped" in output

    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["query_id"] for line in lines} == {2}  # one past the running query 1
    first_two = [(r["epoch"], r["node_id"], r["values"]["light"]) for r in lines[:4]]
    assert first_two == [(1, 1, 11), (1, 2, 12), (2, 1, 21), (2, 2, 22)]

    records = [record for _, record in ResultLog(log).read()]
    assert records[0]["kind"] == "query"
    assert records[0]["sql"] == SELECT
    assert records[0]["fields"] == [{"name": "nodeid", "type": 4}, {"name": "light", "type": 4}]
    readings = [r for r in records[1:] if r["kind"] == "reading"]
    assert len(readings) == len(lines)
    assert readings[0]["values"] == {"nodeid": 1, "light": 11}
    stops = [p for p in query_parts(mote) if p["msgType"] == 1]
    assert len(stops) == 5  # the query is stopped at the end


def test_query_writes_csv_with_the_live_table(mote: ScriptedMote, tmp_path: Path) -> None:
    sql = "SELECT AVG(light) FROM sensors EPOCH DURATION 1024"

    def feed() -> None:
        mote.wait_for(AmType.QUERY, 2)
        for epoch in range(1, 30):
            mote.send(aggregate_packet(2, epoch, 0, 0, bytes([epoch * 4, 0, 4, 0])))
            time.sleep(0.05)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    out = tmp_path / "rows.csv"
    output = mote_query(sql, "--port", str(mote.path), "--out", str(out), "--epochs", "3")
    feeder.join(timeout=10)
    table = list(csv.reader(out.open()))
    assert table[0] == [
        "query_id", "epoch", "group", "epoch_time", "receive_time", "node_time", "AVG(light)",
    ]  # fmt: skip
    # the scripted root leaves the time-sync stamp 0: no node_time
    assert [(row[1], row[5], row[6]) for row in table[1:4]] == [
        ("1", "", "1.0"), ("2", "", "2.0"), ("3", "", "3.0"),
    ]  # fmt: skip
    assert "AVG(light)" in output  # the live table


def test_query_keeps_running_when_asked(mote: ScriptedMote, tmp_path: Path) -> None:
    feeder = feed_tuples(mote, parts=2, epochs=10)
    mote_query(SELECT, "--port", str(mote.path), "--duration", "1s", "--keep-running",
               "--no-table", "--qid", "9")  # fmt: skip
    feeder.join(timeout=10)
    assert [p["msgType"] for p in query_parts(mote)] == [0, 0]
    assert {p["qid"] for p in query_parts(mote)} == {9}


def test_stop_command(mote: ScriptedMote) -> None:
    result = CliRunner().invoke(build_cli(), ["stop", "4", "--port", str(mote.path)])
    assert result.exit_code == 0, result.output
    stops = [parse_tos_packet(p)[1] for p in mote.wait_for(AmType.QUERY, 5)]
    assert all(s[0] == 4 and s[3] == 1 for s in stops)


def test_stop_query_statement(mote: ScriptedMote) -> None:
    mote_query("STOP QUERY 6", "--port", str(mote.path))
    stops = [parse_tos_packet(p)[1] for p in mote.wait_for(AmType.QUERY, 5)]
    assert all(s[0] == 6 and s[3] == 1 for s in stops)


def test_bad_sql_is_reported_with_its_position(mote: ScriptedMote) -> None:
    result = CliRunner().invoke(
        build_cli(), ["query", "SELECT foo FROM sensors", "--port", str(mote.path)]
    )
    assert result.exit_code != 0
    assert "line 1, column 8" in result.output
    assert mote.packets(AmType.QUERY) == []


def test_missing_port_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_cli(), ["query", SELECT, "--port", str(tmp_path / "no-such-tty")]
    )
    assert result.exit_code != 0
    assert "cannot open" in result.output


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("30s", 30.0), ("500ms", 0.5), ("2m", 120.0), ("1h", 3600.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _sigint_by_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sf_command_serves_the_mote_to_sessions(mote: ScriptedMote) -> None:
    port = free_port()
    mote_script = Path(sys.executable).with_name("mote")  # the installed console script
    command = [str(mote_script), "sf", "--port", str(mote.path),
               "--listen", str(port), "--host", "127.0.0.1"]  # fmt: skip
    # A shell that runs the tests in the background (`make test &`) starts them with SIGINT
    # ignored, and a child inherits that: the Ctrl-C this test sends would do nothing.
    forwarder = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, preexec_fn=_sigint_by_default
    )
    try:
        endpoint = None
        deadline = time.monotonic() + 20
        while endpoint is None:
            try:
                endpoint = open_link(f"sf://127.0.0.1:{port}")
            except OSError:
                assert forwarder.poll() is None, forwarder.stderr.read() if forwarder.stderr else ""
                assert time.monotonic() < deadline, "mote sf did not start listening"
                time.sleep(0.1)
        session = QuerySession(endpoint, config=SessionConfig(status_wait_s=0.3))
        try:
            qid = session.start_query(compile_query(SELECT), SELECT).query_id
            assert qid == 2  # the status request went through the forwarder and back
            mote.send(tuple_packet(qid, 1, 3, [3, 77], [4, 4]))
            rows: list[Row] = []
            while not rows and time.monotonic() < deadline:
                rows = session.poll(0.1)
            assert [r.columns for r in rows] == [{"nodeid": 3, "light": 77}]
        finally:
            session.close()
    finally:
        forwarder.send_signal(signal.SIGINT)
        forwarder.wait(timeout=10)


def test_a_log_held_by_another_writer_is_a_clear_error(mote: ScriptedMote, tmp_path: Path) -> None:
    other_writer = ResultLog(tmp_path / "log")
    other_writer.append_batch([{"kind": "marker"}])
    try:
        result = CliRunner().invoke(
            build_cli(),
            ["query", SELECT, "--port", str(mote.path), "--log", str(tmp_path / "log"),
             "--epochs", "1", "--no-table"],
        )  # fmt: skip
    finally:
        other_writer.close()
    assert result.exit_code != 0
    assert "already open for writing" in result.output
    stops = [p for p in query_parts(mote) if p["msgType"] == 1]
    assert len(stops) == 5  # the query that had been sent is stopped again


def damaged_log(directory: Path) -> Path:
    with ResultLog(directory) as log:
        log.append_batch([{"kind": "marker"}])
    (directory / "committed").unlink()
    return directory


def test_a_damaged_log_is_a_clear_error(mote: ScriptedMote, tmp_path: Path) -> None:
    log = damaged_log(tmp_path / "log")
    result = CliRunner().invoke(
        build_cli(),
        ["query", SELECT, "--port", str(mote.path), "--log", str(log), "--epochs", "1",
         "--no-table"],
    )  # fmt: skip
    assert result.exit_code == 1
    error = result.stderr.splitlines()[-1]
    assert error.startswith(f"Error: damaged result log: {log / 'committed'}: ")
    assert f"run `mote log repair {log}`" in error


def test_emulate_into_a_damaged_log_is_a_clear_error(tmp_path: Path) -> None:
    log = damaged_log(tmp_path / "log")
    result = CliRunner().invoke(
        build_cli(),
        ["emulate", "--nodes", "2", "--lossless", "--query", SELECT, "--epochs", "1",
         "--log", str(log)],
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: damaged result log: {log / 'committed'}: ")
