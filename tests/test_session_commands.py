"""Named commands (AM 103) from the gateway reach every emulated mote and change what
it does: `mote command` for queue policy and length, and NO INTERLEAVE sent with a query."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from emulated import emulated_bridge

from motebase.emu import network as emu_network
from motebase.gateway.plan import compile_query
from motebase.gateway.session import QuerySession, SessionConfig, command_packet, first_command_seq
from motebase.gateway.transport import open_link

NODES = 9
CONFIG = SessionConfig(status_wait_s=0.5)
MOTE = "from motebase.gateway.cli.main import main; main()"


@pytest.fixture
def network() -> Iterator[tuple[emu_network.Network, str]]:
    with emulated_bridge(NODES, tree_ms=10_000) as served:  # routing tree first
        assert served.pty_path is not None
        yield served.net, served.pty_path


def _executed(net: emu_network.Network) -> list[int]:
    return [net.mote_stats(node)["commands_executed"] for node in range(NODES)]


def _wait_until_executed(net: emu_network.Network, count: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while min(_executed(net)) < count and time.monotonic() < deadline:
        time.sleep(0.1)


def test_command_packet_layout_written_by_hand() -> None:
    # TOS header: addr ffff, AM 103 (0x67), group 7d, length 20 (0x14); CommandMsg: nodeid -1,
    # seqNo 0x01020304 LE, "qpolicy\0", then the string parameter "delta\0".
    expected = bytes.fromhex("ffff677d14ffff0403020171706f6c6963790064656c746100")
    assert command_packet("qpolicy", {"policy": "delta"}, 0x01020304) == expected


def test_later_sessions_start_with_newer_sequence_numbers() -> None:
    assert first_command_seq(lambda: 100.0) < first_command_seq(lambda: 100.2)


def test_mote_command_reaches_every_node(network: tuple[emu_network.Network, str]) -> None:
    net, pty_path = network
    for args in (["qpolicy", "policy=delta"], ["qlen", "length=3"]):
        done = subprocess.run(
            [sys.executable, "-c", MOTE, "command", *args, "--port", pty_path],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
    _wait_until_executed(net, 2)
    assert _executed(net) == [2] * NODES
    assert all(net.mote_stats(node)["commands_unknown"] == 0 for node in range(NODES))


def test_no_interleave_query_switches_the_motes_mode(
    network: tuple[emu_network.Network, str],
) -> None:
    net, pty_path = network
    plan = compile_query("SELECT NO INTERLEAVE nodeid, light FROM sensors EPOCH DURATION 500")
    assert plan.no_interleave
    session = QuerySession(open_link(pty_path), config=CONFIG)
    try:
        session.start_query(plan, qid=7)
        _wait_until_executed(net, 1)
        assert _executed(net) == [1] * NODES
    finally:
        session.close()
