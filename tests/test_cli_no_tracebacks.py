"""The `mote` CLI, run as the installed console script, answers bad input without a
traceback: a query the gateway cannot send is refused the same way by `mote explain`,
`mote encode-query`, `mote query` and `mote emulate`: exit 1, the message with a caret
under the position, nothing sent.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from scripted_mote import ScriptedMote, TinyDBRoot

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script


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
