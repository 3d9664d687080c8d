"""`mote query` across an outage of its port, against the emulated network behind a pty.

The port is a path re-linked to the emulator's pty, as /dev/ttyUSB0 comes back when an
adapter is replugged. Either the same network is served again (the motes kept running:
the gateway sees its query reported running and leaves it alone) or a freshly started
one is (the basestation rebooted: the gateway sends its query again under the same id).
In both cases the results resume, without duplicates.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from emulated import LIGHT_BASE, light_by_node
from test_query_sigterm import StderrLines

from motebase.emu.bridge import SerialBridge, serve
from motebase.emu.network import Network, NetworkConfig

#: Real-time end-to-end runs: tox runs them on py311 only (tox.ini).
pytestmark = pytest.mark.slow

NODES = 9
MOTE = "from motebase.gateway.cli.main import main; main()"
SQL = "SELECT nodeid, light FROM sensors EPOCH DURATION 512"
RESENT = "re-sent: the basestation did not run it after the link came back"


def _network() -> Network:
    sensors = {"light": light_by_node(NODES)}
    net = Network(NetworkConfig(nodes=NODES, lossless=True, seed=5, sensors=sensors))
    net.run_for(10_000.0)  # the routing tree forms first
    return net


def _plug(bridge: SerialBridge, port: Path) -> None:
    """Point ``port`` at the bridge's pty in one step, as udev re-creates a device node."""
    assert bridge.pty_path is not None
    tmp = port.with_suffix(".new")
    tmp.symlink_to(bridge.pty_path)
    tmp.replace(port)


def _unplug(bridge: SerialBridge, port: Path) -> None:
    """The path goes first (see scripted_mote.ScriptedMote.unplug), then the pty."""
    port.unlink()
    bridge.stop()


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _rows(out: Path) -> list[dict[str, Any]]:
    if not out.exists():
        return []
    # A line being written may be cut short; the last whole line is enough.
    return [json.loads(line) for line in out.read_text().splitlines() if line.endswith("}")]


def _run_across_outage(tmp_path: Path, *, reboot: bool) -> tuple[str, list[dict[str, Any]], int]:
    """Run `mote query` through an outage; (stderr, rows written, rows before the outage)."""
    port, out = tmp_path / "ttyMOTE", tmp_path / "rows.jsonl"
    nets = [_network()]
    bridge = serve(nets[0], pty=True, realtime=True)
    _plug(bridge, port)
    proc = subprocess.Popen(
        [sys.executable, "-c", MOTE, "query", SQL, "--port", str(port), "--qid", "7",
         "--out", str(out), "--no-table"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    stderr = StderrLines(proc)
    try:
        _wait(lambda: len(_rows(out)) >= 2 * (NODES - 1), 120, f"no rows: {stderr.text()}")
        _unplug(bridge, port)
        _wait(lambda: "dropped" in stderr.text(), 60, f"no drop: {stderr.text()}")
        before = len(_rows(out))
        if reboot:
            nets.append(_network())
        bridge = serve(nets[-1], pty=True, realtime=True)
        _plug(bridge, port)
        _wait(lambda: "is back" in stderr.text(), 60, f"not back: {stderr.text()}")
        resumed = before + 2 * NODES
        _wait(lambda: len(_rows(out)) >= resumed, 120, f"no rows after: {stderr.text()}")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        bridge.stop()
        for net in nets:
            net.close()
    stderr.join()
    return stderr.text(), _rows(out), before


def _check_rows(rows: list[dict[str, Any]], text: str) -> None:
    assert {row["query_id"] for row in rows} == {7}
    assert all(row["values"]["light"] == LIGHT_BASE + row["node_id"] for row in rows)
    keys = [(row["node_id"], row["epoch"]) for row in rows]
    assert len(keys) == len(set(keys))
    summary = re.search(r"(\d+) tuples, \d+ aggregate records, (\d+) duplicates", text)
    assert summary is not None, text
    assert (int(summary.group(1)), int(summary.group(2))) == (len(rows), 0)


def test_motes_that_kept_running_are_left_alone_and_results_resume(tmp_path: Path) -> None:
    text, rows, before = _run_across_outage(tmp_path, reboot=False)
    assert RESENT not in text
    assert "query 7 started" in text and "query 7 stopped" in text
    _check_rows(rows, text)
    # The network was only paused: its epochs go on where they were -- not numbered
    # from 1 again (which _check_rows would see as duplicates), not moved past (as after
    # a reboot). Rows around the outage may come out of a node's order: CI under load
    # once wrote node 1's epoch 5 before its 3 and 4 (cause not found yet; stop 23's note).
    old, new = rows[:before], rows[before:]
    assert new, text
    assert min(row["epoch"] for row in new) <= max(row["epoch"] for row in old) + 1
    assert max(row["epoch"] for row in new) > max(row["epoch"] for row in old)


def test_a_rebooted_network_gets_the_query_again_and_results_resume(tmp_path: Path) -> None:
    text, rows, before = _run_across_outage(tmp_path, reboot=True)
    assert text.count(f"query 7 {RESENT}") == 1, text
    assert "query 7 stopped" in text
    _check_rows(rows, text)
    old, new = rows[:before], rows[before:]
    assert new, text
    # The rebooted network numbers the query's epochs from 1 again; the rows go on past
    # the epochs already written.
    assert min(row["epoch"] for row in new) > max(row["epoch"] for row in old)
    assert {row["node_id"] for row in new} == set(range(NODES))
