"""Named commands are checked against their table (``KNOWN_COMMANDS`` in
gateway/protocol/command.py) before anything is sent: `mote command` refuses a value the
motes would ignore with a usage error naming the parameter and its allowed values (exit
2), ``QuerySession.send_command`` with a ValueError. The table's bounds are the
firmware's own: an emulated root executes each value at a bound and refuses the one just
outside it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from emulated import emulated_bridge
from scripted_mote import ScriptedMote, TinyDBRoot

from motebase.emu.network import Network
from motebase.gateway.cli.main import build_cli
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import AmType, parse_command, parse_tos_packet
from motebase.gateway.protocol.command import CommandParamError, check_command
from motebase.gateway.session import QuerySession, SessionConfig, command_packet
from motebase.gateway.transport import open_link

MOTE = "from motebase.gateway.cli.main import main; main()"
FAST = SessionConfig(status_wait_s=0.3)


@pytest.fixture
def mote(tmp_path: Path) -> Iterator[ScriptedMote]:
    scripted = ScriptedMote(tmp_path, TinyDBRoot())
    yield scripted
    scripted.close()


def sent_commands(mote: ScriptedMote, count: int) -> list[dict[str, Any]]:
    """The first ``count`` CommandMsgs the mote received, decoded."""
    return [parse_command(parse_tos_packet(p)[1]) for p in mote.wait_for(AmType.COMMAND, count)]


def assert_only_this_was_sent(mote: ScriptedMote, name: str, params: dict[str, Any]) -> None:
    # The serial link keeps order, so anything sent before this command would be
    # among the packets already received once it has arrived.
    [command] = sent_commands(mote, 1)
    assert (command["name"], command["params"]) == (name, params)
    assert len(mote.received) == 1


def send_good_command_and_check_it_was_alone(mote: ScriptedMote) -> None:
    good = CliRunner().invoke(
        build_cli(), ["command", "qlen", "length=5", "--port", str(mote.path)]
    )
    assert good.exit_code == 0, good.output
    assert_only_this_was_sent(mote, "qlen", {"length": 5})


# -- `mote command` ---------------------------------------------------------------------

BAD_VALUES = [
    # arguments, the parameter named, the allowed values shown
    (["qpolicy", "policy=bogus"], "'policy'", "one of naive|winavg|delta, not 'bogus'"),
    (["qpolicy", "policy=DELTA"], "'policy'", "one of naive|winavg|delta"),
    (["qlen", "length=0"], "'length'", "an integer in 1..8, not 0"),
    (["qlen", "length=9"], "'length'", "an integer in 1..8, not 9"),
    (["qlen", "length=255"], "'length'", "an integer in 1..8"),
    (["qlen", "length=three"], "'length'", "an integer in 1..8, not 'three'"),
    (["nointerleave", "enabled=2"], "'enabled'", "one of 0|1, not 2"),
    (["nointerleave", "enabled=yes"], "'enabled'", "one of 0|1, not 'yes'"),
    (["setrate", "qid=255", "epochDuration=100"], "'qid'", "an integer in 0..254, not 255"),
    (["setrate", "qid=-1", "epochDuration=100"], "'qid'", "an integer in 0..254"),
    (["setrate", "qid=1", "epochDuration=0"], "'epochDuration'", "an integer in 1..32766"),
    (
        ["setrate", "qid=1", "epochDuration=32767"],
        "'epochDuration'",
        "an integer in 1..32766, not 32767",
    ),
    (["setrate", "qid=1", "epochDuration=-20"], "'epochDuration'", "an integer in 1..32766"),
]


@pytest.mark.parametrize(("args", "param", "allowed"), BAD_VALUES)
def test_a_bad_value_is_a_usage_error_and_nothing_is_sent(
    mote: ScriptedMote, args: list[str], param: str, allowed: str
) -> None:
    result = CliRunner().invoke(build_cli(), ["command", *args, "--port", str(mote.path)])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for {param}: must be {allowed}" in result.output
    assert "sent" not in result.output

    send_good_command_and_check_it_was_alone(mote)


BAD_SHAPES = [
    (["qlen"], "qlen takes length=<1..8>"),
    (["qlen", "length"], "qlen takes length=<1..8>"),
    (["qlen", "size=3"], "qlen takes length=<1..8>"),
    (["qlen", "length=3", "length=4"], "qlen takes length=<1..8>"),
    (["setrate", "qid=1"], "setrate takes qid=<0..254> epochDuration=<1..32766>"),
    (["reset", "now=1"], "reset takes (no parameters)"),
    (["selfdestruct"], "unknown command 'selfdestruct' (known: nointerleave, qlen, qpolicy"),
    (["snoop"], "snoop takes enabled=<0|1>"),
    (["slots"], "slots takes enabled=<0|1>"),
]


@pytest.mark.parametrize(("args", "message"), BAD_SHAPES)
def test_missing_or_unknown_parameters_show_the_usage(
    mote: ScriptedMote, args: list[str], message: str
) -> None:
    result = CliRunner().invoke(build_cli(), ["command", *args, "--port", str(mote.path)])
    assert result.exit_code == 2, result.output
    assert message in result.output
    send_good_command_and_check_it_was_alone(mote)


@pytest.mark.parametrize("node", ["70000", "32768", "-1"])
def test_a_node_id_the_command_cannot_carry_is_a_usage_error(mote: ScriptedMote, node: str) -> None:
    result = CliRunner().invoke(
        build_cli(), ["command", "qlen", "length=3", "--node", node, "--port", str(mote.path)]
    )
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--node'" in result.output
    send_good_command_and_check_it_was_alone(mote)


def test_a_command_for_one_node_is_addressed_to_it(mote: ScriptedMote) -> None:
    result = CliRunner().invoke(
        build_cli(), ["command", "qlen", "length=3", "--node", "7", "--port", str(mote.path)]
    )
    assert result.exit_code == 0, result.output
    assert "sent qlen to node 7" in result.output
    [command] = sent_commands(mote, 1)
    assert command["nodeid"] == 7


def run_mote(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MOTE, *args], capture_output=True, text=True, timeout=60
    )


def test_the_installed_command_exits_2_and_sends_nothing(mote: ScriptedMote) -> None:
    done = run_mote("command", "qpolicy", "policy=bogus", "--port", str(mote.path))
    assert done.returncode == 2
    assert "Invalid value for 'policy': must be one of naive|winavg|delta" in done.stderr
    assert "sent qpolicy" not in done.stderr
    good = run_mote("command", "qpolicy", "policy=delta", "--port", str(mote.path))
    assert good.returncode == 0, good.stderr
    assert "sent qpolicy to every node" in good.stderr
    assert_only_this_was_sent(mote, "qpolicy", {"policy": "delta"})


@pytest.mark.parametrize(
    ("args", "params"),
    [
        (["qlen", "length=1"], {"length": 1}),
        (["qlen", "length=0x8"], {"length": 8}),
        (["nointerleave", "enabled=0"], {"enabled": 0}),
        (["snoop", "enabled=0"], {"enabled": 0}),
        (["slots", "enabled=1"], {"enabled": 1}),
        (["setrate", "epochDuration=32766", "qid=254"], {"qid": 254, "epochDuration": 32766}),
        (["setrate", "qid=0", "epochDuration=1"], {"qid": 0, "epochDuration": 1}),
    ],
)
def test_values_at_the_bounds_are_sent(
    mote: ScriptedMote, args: list[str], params: dict[str, Any]
) -> None:
    result = CliRunner().invoke(build_cli(), ["command", *args, "--port", str(mote.path)])
    assert result.exit_code == 0, result.output
    assert_only_this_was_sent(mote, args[0], params)


# -- QuerySession.send_command ------------------------------------------------------------

LIBRARY_BAD = [
    ("qpolicy", {"policy": "bogus"}, "policy"),
    ("qpolicy", {"policy": 2}, "policy"),
    ("qlen", {"length": 9}, "length"),
    ("qlen", {"length": "3"}, "length"),
    ("qlen", {"length": 3.0}, "length"),
    ("nointerleave", {"enabled": 2}, "enabled"),
    ("setrate", {"qid": 255, "epochDuration": 100}, "qid"),
    ("setrate", {"qid": 1, "epochDuration": 0x7FFF}, "epochDuration"),
    ("setrate", {"qid": 1}, "epochDuration"),
    ("qlen", None, "length"),
    ("qlen", {"length": 3, "policy": "delta"}, None),
    ("selfdestruct", {}, None),
]


@pytest.mark.parametrize(("name", "params", "param"), LIBRARY_BAD)
def test_send_command_refuses_bad_parameters_before_sending(
    mote: ScriptedMote, name: str, params: dict[str, Any] | None, param: str | None
) -> None:
    session = QuerySession(open_link(str(mote.path)), config=FAST)
    try:
        with pytest.raises(ValueError) as refused:
            session.send_command(name, params)
        assert isinstance(refused.value, CommandParamError)
        assert refused.value.param == param
        session.send_command("nointerleave", {"enabled": 1})
        assert_only_this_was_sent(mote, "nointerleave", {"enabled": 1})
    finally:
        session.close()


# -- the table against the firmware -----------------------------------------------------

QID = 5
#: (command, values at a bound, values just outside it)
FIRMWARE_BOUNDS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("qlen", {"length": 1}, {"length": 0}),
    ("qlen", {"length": 8}, {"length": 9}),
    ("nointerleave", {"enabled": 1}, {"enabled": 2}),
    ("nointerleave", {"enabled": 0}, {"enabled": 255}),
    ("snoop", {"enabled": 0}, {"enabled": 2}),
    ("snoop", {"enabled": 1}, {"enabled": 255}),
    ("slots", {"enabled": 0}, {"enabled": 2}),
    ("slots", {"enabled": 1}, {"enabled": 255}),
    ("qpolicy", {"policy": "winavg"}, {"policy": "bogus"}),
    ("setrate", {"qid": QID, "epochDuration": 1}, {"qid": QID, "epochDuration": 0}),
    ("setrate", {"qid": QID, "epochDuration": 0x7FFE}, {"qid": QID, "epochDuration": -1}),
]


def _root_counts(net: Network) -> tuple[int, int]:
    stats = net.mote_stats(0)
    return stats["commands_executed"], stats["commands_unknown"]


def _wait_for_counts(net: Network, want: tuple[int, int], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while _root_counts(net) != want and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _root_counts(net) == want


def test_the_table_matches_what_the_firmware_executes() -> None:
    with emulated_bridge(2, tree_ms=2_000) as served:
        assert served.pty_path is not None
        session = QuerySession(open_link(served.pty_path), config=FAST)
        try:
            sql = "SELECT nodeid FROM sensors EPOCH DURATION 1024"
            session.start_query(compile_query(sql), sql, qid=QID)  # setrate needs a query
            deadline = time.monotonic() + 10
            while QID not in session.running_query_ids():
                assert time.monotonic() < deadline, f"query {QID} never ran on the root"
            net = served.net
            executed, unknown = _root_counts(net)
            # Sequence numbers the mote takes as new, one command after the other.
            for seq, (name, good, bad) in enumerate(FIRMWARE_BOUNDS, start=1):
                check_command(name, good)
                with pytest.raises(CommandParamError):
                    check_command(name, bad)
                # Sent raw, as an older gateway would have: the firmware must agree.
                assert session.endpoint.write_packet(command_packet(name, good, 2 * seq))
                executed += 1
                _wait_for_counts(net, (executed, unknown))
                assert session.endpoint.write_packet(command_packet(name, bad, 2 * seq + 1))
                unknown += 1
                _wait_for_counts(net, (executed, unknown))
        finally:
            session.close()
