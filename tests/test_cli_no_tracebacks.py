"""The `mote` CLI, run as the installed console script, answers bad input and a closed
stdout without a traceback.

- a query the gateway cannot send is refused the same way by `mote explain`, `mote
  encode-query`, `mote query` and `mote emulate`: exit 1, the message with a caret under
  the position, nothing sent;
- a closed stdout (`mote listen | head`) ends every command that writes to it quietly:
  exit 0 (the reader has all it wanted), nothing on stderr but what the command said
  before the pipe closed.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
import tty
from collections.abc import Iterator
from pathlib import Path

import pytest
from scripted_mote import ScriptedMote, TinyDBRoot

from motebase.gateway.cli.main import _reader_gone
from motebase.gateway.protocol import AmType, parse_query_message, parse_tos_packet
from motebase.gateway.protocol.framing import frame_packet

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script
RESULT_PACKET = bytes.fromhex(
    "7e00f07d310300030001000101000500020000000000000000000103050000002c010700" + "00" * 18
)


def mote(*args: str, stdout: int = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOTE, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, check=False
    )


# --- queries the gateway cannot send ----------------------------------------------------------

LONG_ACTION = "SELECT light FROM sensors OUTPUT ACTION abcdefghij"
LONG_ACTION_ERROR = (
    "Error: line 1, column 27: OUTPUT ACTION abcdefghij: the query message carries a command "
    "name of at most 8 Latin-1 characters (CmdBufInfo.name is char[8])\n"
    f"  {LONG_ACTION}\n"
    f"  {' ' * 26}^\n"
)


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[ScriptedMote]:
    root = ScriptedMote(tmp_path, TinyDBRoot())
    yield root
    root.close()


def test_explain_encode_query_and_query_agree_on_an_output_action_too_long(
    scripted: ScriptedMote,
) -> None:
    for args in (
        ["explain", LONG_ACTION],
        ["encode-query", LONG_ACTION],
        ["query", LONG_ACTION, "--port", str(scripted.path), "--duration", "1s"],
    ):
        result = mote(*args)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", LONG_ACTION_ERROR)
    assert scripted.received == []


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        (
            "SELECT light FROM sensors LIFETIME 0 days",
            "line 1, column 27: LIFETIME 0 days must be longer than zero",
        ),
        (
            "SELECT light FROM sensors WHERE " + "(" * 200 + "light > 1" + ")" * 200,
            "line 1, column 65: nested too deeply: a query nests at most 32 levels of "
            "parentheses, NOT, unary minus and aggregate calls",
        ),
        (
            "SELECT light FROM sensors WHERE " + " AND ".join(["light > 1"] * 2000),
            "line 1, column 27567: too many conditions joined with AND: a condition nests at "
            "most 32 operators one inside another",
        ),
    ],
)
def test_refused_queries_exit_1_with_the_position(sql: str, error: str) -> None:
    for command in ("explain", "encode-query"):
        result = mote(command, sql)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr.startswith(f"Error: {error}\n  SELECT light FROM sensors")


def test_emulate_refuses_a_bad_query_before_building_the_network() -> None:
    result = mote("emulate", "--nodes", "2", "--duration", "1s", "--query", "SELECT foo")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: line 1, column 8: unknown attribute 'foo'\n  SELECT foo\n         ^\n"
    )


# --- a closed stdout ----------------------------------------------------------------------------


@contextlib.contextmanager
def closed_stdout() -> Iterator[int]:
    """The write end of a pipe whose reader has already gone, as stdout for a command."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        yield write_end
    finally:
        os.close(write_end)


def test_the_reader_gone_is_told_from_a_reader_still_there() -> None:
    read_end, write_end = os.pipe()
    try:
        assert not _reader_gone(write_end)
        os.close(read_end)
        assert _reader_gone(write_end)
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ["encode-query", "SELECT light FROM sensors"],
        ["explain", "SELECT light FROM sensors"],
        ["--help"],
        ["decode", "--stats", "{hex}"],
    ],
)
def test_a_command_writing_to_a_closed_stdout_ends_quietly(args: list[str], tmp_path: Path) -> None:
    hex_file = tmp_path / "packets.hex"
    hex_file.write_text((RESULT_PACKET.hex() + "\n") * 3000)
    with closed_stdout() as stdout:
        result = mote(*(a.format(hex=hex_file) for a in args), stdout=stdout)
    assert (result.returncode, result.stderr) == (0, "")


class _PtyMote:
    """A mote on a pty that sends the same result packet every 20 ms."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._send, daemon=True)
        self._thread.start()

    def _send(self) -> None:
        while not self._stop.wait(0.02):
            os.write(self.master, frame_packet(RESULT_PACKET))
            while select.select([self.master], [], [], 0)[0]:
                os.read(self.master, 1024)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        os.close(self.master)
        os.close(self.slave)


@pytest.mark.parametrize("hex_flag", [[], ["--hex"]])
def test_listen_into_head_ends_quietly(hex_flag: list[str]) -> None:
    """`mote listen | head -1`: it printed "link lost: Broken pipe" and exit 1."""
    pty_mote = _PtyMote()
    try:
        listen = subprocess.Popen(
            [MOTE, "listen", "--port", pty_mote.path, "--timeout", "60", *hex_flag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert listen.stdout is not None and listen.stderr is not None
        first = listen.stdout.readline()
        listen.stdout.close()  # what head does once it has its line
        returncode = listen.wait(timeout=60)
        stderr = listen.stderr.read()
        listen.stderr.close()
    finally:
        pty_mote.close()
    assert first.startswith(b"7e 00 f0" if hex_flag else b'{"am": 240, "am_name": "QUERY_RESULT"')
    assert (returncode, stderr) == (0, b"")


def test_query_into_a_closed_stdout_stops_the_query_and_ends_quietly(
    scripted: ScriptedMote,
) -> None:
    with closed_stdout() as stdout:
        result = mote(
            "query",
            "SELECT nodeid, light FROM sensors EPOCH DURATION 1024",
            "--port",
            str(scripted.path),
            "--duration",
            "2s",
            stdout=stdout,
        )
    # The live table is drawn when the run ends, after the stop went out.
    assert (result.returncode, result.stderr) == (0, "query 1 started\n")
    messages = [parse_query_message(parse_tos_packet(p)[1]) for p in scripted.packets(AmType.QUERY)]
    assert [m["msgType"] for m in messages] == [0, 0, 1, 1, 1, 1, 1]  # 2 parts, then 5 DELs
