"""Real motes only: without the emulator's C extension (no C compiler at install), the
emulator's entry points say what to install, exit 1 and do nothing else, while the gateway's
commands work. The extension is made unimportable in the child processes by a meta-path
finder that refuses it as an install without it does (ModuleNotFoundError naming it);
tests/test_packaging.py builds such an install for real."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from motebase.emu.native import missing_message

NO_EXTENSION = """
import sys


class NoEmulator:
    def find_spec(self, name, path=None, target=None):
        if name == "motebase.emu._motesim":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoEmulator())
"""
MOTE = "from motebase.gateway.cli.main import main; main()"
SQL = "SELECT nodeid, light FROM sensors WHERE light > 200 EPOCH DURATION 2048"


def python(code: str, *args: str, cwd: Path, blocked: bool = True) -> subprocess.CompletedProcess:
    # cwd: not the checkout, whose root `-c` would put first on sys.path
    return subprocess.run(
        [sys.executable, "-c", (NO_EXTENSION if blocked else "") + code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def test_the_finder_blocks_only_the_extension(tmp_path: Path) -> None:
    probe = python(
        "import motebase.gateway.session, motebase.emu.topology\n"
        "try:\n    import motebase.emu._motesim\n"
        "except ModuleNotFoundError as exc:\n    print(exc.name)\n",
        cwd=tmp_path,
    )
    assert (probe.returncode, probe.stdout, probe.stderr) == (0, "motebase.emu._motesim\n", "")


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("emulate", ["--nodes", "4", "--duration", "5s"]),
        ("emulate", ["--nodes", "4", "--query", SQL, "--epochs", "2", "--out", "rows.jsonl"]),
        ("run", ["--out", "run-out"]),
    ],
)
def test_an_emulator_command_names_what_to_install(
    command: str, args: list[str], tmp_path: Path
) -> None:
    result = python(MOTE, command, *args, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Error: {missing_message(f'mote {command}')}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_the_message_says_what_to_install() -> None:
    assert missing_message("mote emulate") == (
        "mote emulate needs the emulator, motebase's C extension motebase.emu._motesim, which "
        "is not built here: no C compiler worked when motebase was installed (pip install -v "
        "shows why). Install one with Python's headers (Debian/Ubuntu: apt install gcc "
        "python3-dev), then reinstall motebase from its checkout:\n"
        "  pip install --force-reinstall --no-deps .\n"
        "Real motes need no emulator: mote query, listen, decode, explain and spark work "
        "without it."
    )


def test_importing_the_network_raises_one_import_error(tmp_path: Path) -> None:
    probe = python(
        "try:\n    import motebase.emu.network\n"
        "except ImportError as exc:\n    print(type(exc).__name__, exc.name)\n    print(exc)\n",
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout == (
        f"EmulatorMissing motebase.emu._motesim\n{missing_message('motebase.emu.network')}\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["explain", SQL],
        ["encode-query", SQL, "--qid", "3"],
        ["decode", "-"],
        ["--help"],
    ],
)
def test_the_gateway_commands_work_as_with_the_emulator(args: list[str], tmp_path: Path) -> None:
    # decode reads what encode-query writes (the query's AM 101 packets)
    stdin = python(MOTE, "encode-query", SQL, cwd=tmp_path).stdout if "decode" in args else None
    runs = [
        subprocess.run(
            [sys.executable, "-c", prefix + MOTE, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
        )
        for prefix in (NO_EXTENSION, "")
    ]
    blocked, normal = runs
    assert blocked.returncode == 0, blocked.stderr
    assert (blocked.stdout, blocked.stderr) == (normal.stdout, normal.stderr)
    assert blocked.stdout != ""
