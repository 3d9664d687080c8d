"""SIGTERM ends a running `mote query` as Ctrl-C does: the query is stopped on the motes
(DEL), the rows already assembled reach --out and --log, the summary is printed and the
exit status is 0. The network is the emulator behind its pty; `mote query` is a real
process, signalled as a service manager or `kill` would."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from emulated import LIGHT_BASE, emulated_bridge
from scripted_mote import ScriptedMote, TinyDBRoot, tuple_packet

from motebase.emu.network import Network
from motebase.gateway.cli.main import build_cli
from motebase.gateway.resultlog import ResultLog
from motebase.gateway.session import QuerySession, SessionConfig
from motebase.gateway.transport import open_link

#: Real-time end-to-end runs: tox runs them on py311 only (tox.ini).
pytestmark = pytest.mark.slow

NODES = 9
MOTE = "from motebase.gateway.cli.main import main; main()"
SQL = "SELECT nodeid, light FROM sensors EPOCH DURATION 512"


class StderrLines:
    """Collects a process's stderr lines as they come (reading it inline would block)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        assert proc.stderr is not None
        self._stream = proc.stderr
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self._stream:
            self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines)

    def join(self) -> None:
        self._thread.join(timeout=10)


def _results_sent(net: Network) -> int:
    return sum(net.mote_stats(node)["results_sent"] for node in range(NODES))


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_sigterm_stops_the_query_flushes_the_rows_and_exits_0(tmp_path: Path) -> None:
    out, log = tmp_path / "rows.jsonl", tmp_path / "log"
    with emulated_bridge(NODES, tree_ms=10_000) as served:
        assert served.pty_path is not None
        proc = subprocess.Popen(
            [sys.executable, "-c", MOTE, "query", SQL, "--port", served.pty_path,
             "--out", str(out), "--log", str(log), "--no-table"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        stderr = StderrLines(proc)
        try:
            _wait(lambda: "started" in stderr.text(), 30, f"no start: {stderr.text()}")
            match = re.search(r"query (\d+) started", stderr.text())
            assert match is not None, stderr.text()
            qid = int(match.group(1))

            def rows_so_far() -> int:
                return len(out.read_text().splitlines()) if out.exists() else 0

            _wait(lambda: rows_so_far() >= 2 * (NODES - 1), 20, "no rows arrived")
            before = rows_so_far()
            signalled = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == 0
            assert time.monotonic() - signalled < 5
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        stderr.join()

        assert f"query {qid} stopped" in stderr.text()
        summary = re.search(r"(\d+) tuples, \d+ aggregate records", stderr.text())
        assert summary is not None, stderr.text()
        assert "Traceback" not in stderr.text()

        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(lines) >= before
        assert len(lines) == int(summary.group(1))  # every tuple assembled was written
        assert {line["query_id"] for line in lines} == {qid}
        assert all(line["values"]["light"] == LIGHT_BASE + line["node_id"] for line in lines)
        readings = [r for _, r in ResultLog(log).read() if r["kind"] == "reading"]
        assert len(readings) == len(lines)  # the log was closed, not cut off

        # The DEL reached the network: the root no longer runs the query and, once the
        # DEL has flooded, no node produces results any more.
        session = QuerySession(open_link(served.pty_path), config=SessionConfig())
        try:
            reported, _ = session.survey(1.0)
            assert qid not in reported
        finally:
            session.close()
        quiet = _results_sent(served.net)
        time.sleep(1.5)  # three epochs
        assert _results_sent(served.net) == quiet


def test_sigterm_handler_is_restored_and_threads_are_left_alone(tmp_path: Path) -> None:
    mote = ScriptedMote(tmp_path, TinyDBRoot())
    previous = signal.getsignal(signal.SIGTERM)

    def run() -> tuple[int, bool]:
        """Exit code of a short `mote query`, and whether it replaced the SIGTERM handler."""
        done = threading.Event()
        replaced: list[bool] = []

        def feed() -> None:
            epoch = 1
            while not done.wait(0.02):
                replaced.append(signal.getsignal(signal.SIGTERM) is not previous)
                mote.send(tuple_packet(9, epoch, 1, [1, epoch], [4, 4]))
                epoch += 1

        threading.Thread(target=feed, daemon=True).start()
        try:
            result = CliRunner().invoke(
                build_cli(),
                ["query", SQL, "--port", str(mote.path), "--qid", "9", "--epochs", "2",
                 "--no-table"],
            )  # fmt: skip
        finally:
            done.set()
        assert "query 9 stopped" in result.output, result.output
        return result.exit_code, any(replaced)

    try:
        assert run() == (0, True)  # the main thread: its own handler while it runs
        assert signal.getsignal(signal.SIGTERM) is previous

        outcomes: list[tuple[int, bool]] = []
        worker = threading.Thread(target=lambda: outcomes.append(run()))
        worker.start()  # signal.signal would raise ValueError outside the main thread
        worker.join(timeout=30)
        assert outcomes == [(0, False)]
        assert signal.getsignal(signal.SIGTERM) is previous
    finally:
        mote.close()
