"""`mote queries --port PORT`: the query ids the root reports running (one per line on
stdout, or JSON), and on stderr the ids heard in results while it listened."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from emulated import emulated_bridge
from polling import poll_until
from scripted_mote import ScriptedMote, TinyDBRoot, tuple_packet

from motebase.emu.bridge import SerialBridge
from motebase.gateway.cli.main import build_cli
from motebase.gateway.cli.session_cmds import queries_cmd
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import AmType
from motebase.gateway.session import QuerySession, SessionConfig
from motebase.gateway.transport import open_link

NODES = 9
SQL = "SELECT nodeid, light FROM sensors EPOCH DURATION 512"


def mote_queries(*args: str) -> Result:
    return CliRunner().invoke(build_cli(), ["queries", *args], catch_exceptions=False)


@pytest.fixture
def served() -> Iterator[SerialBridge]:
    with emulated_bridge(NODES, tree_ms=10_000) as bridge:
        assert bridge.pty_path is not None
        yield bridge


def test_an_idle_network_runs_no_queries(served: SerialBridge) -> None:
    assert served.pty_path is not None
    result = mote_queries("--port", served.pty_path, "--wait", "500ms")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == ["no running queries", "heard no results in 0.5s"]


@pytest.mark.slow  # real time, end to end: py311 only (tox.ini)
def test_the_query_started_on_the_network_is_listed(served: SerialBridge) -> None:
    assert served.pty_path is not None
    session = QuerySession(open_link(served.pty_path), config=SessionConfig(status_wait_s=0.5))
    try:
        qid = session.start_query(compile_query(SQL), SQL).query_id
        assert poll_until(session, NODES - 1, timeout=10), "the query produced no rows"
    finally:
        session.close()  # the query keeps running on the motes

    result = mote_queries("--port", served.pty_path, "--wait", "1.5s")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{qid}\n"
    assert result.stderr.splitlines() == [f"heard results of {qid} in 1.5s"]

    as_json = mote_queries("--port", served.pty_path, "--json")  # --wait defaults to 1s
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == {"running": [qid], "heard": [qid], "wait_s": 1.0}


def test_ids_heard_but_not_reported_are_told_apart(tmp_path: Path) -> None:
    # A root still delivering results of query 5 (stopped, draining) while it runs 3 and 7.
    mote = ScriptedMote(tmp_path, TinyDBRoot(running=[7, 3]))
    done = threading.Event()

    def drain() -> None:
        mote.wait_for(AmType.STATUS, 1)
        epoch = 1
        while not done.wait(0.05):
            mote.send(tuple_packet(5, epoch, 2, [2, 300], [4, 4]))
            epoch += 1

    threading.Thread(target=drain, daemon=True).start()
    try:
        result = mote_queries("--port", str(mote.path), "--wait", "500ms")
        as_json = mote_queries("--port", str(mote.path), "--wait", "500ms", "--json")
    finally:
        done.set()
        mote.close()
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["3", "7"]
    assert result.stderr.splitlines() == ["heard results of 5 in 0.5s"]
    assert json.loads(as_json.stdout) == {"running": [3, 7], "heard": [5], "wait_s": 0.5}


@pytest.mark.parametrize("wait", ["0", "0s", "soon", "-1"])
def test_a_bad_wait_is_a_usage_error(tmp_path: Path, wait: str) -> None:
    result = CliRunner().invoke(
        build_cli(), ["queries", "--port", str(tmp_path / "unused"), "--wait", wait]
    )
    assert result.exit_code == 2
    assert "Invalid value for '--wait'" in result.output


def test_every_option_has_help() -> None:
    options = [p for p in queries_cmd.params if isinstance(p, click.Option)]
    assert {o.name for o in options} >= {"port", "wait", "as_json"}
    assert all(o.help for o in options)
    assert "listen for results" in mote_queries("--help").output
