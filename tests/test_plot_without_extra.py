"""Without the plot extra the picture commands say what to install, exit 1 and write
nothing, before doing any work; `mote` itself starts and lists them. matplotlib is
blocked in the child processes by a stand-in package earlier on PYTHONPATH, as an
interpreter without the extra would fail to import it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script
INSTALL = '  pip install "motebase[plot]"\n'
NOT_INSTALLED = (
    "needs the plot extra (matplotlib), which is not installed here: matplotlib cannot be "
    "imported. Install it with\n" + INSTALL
)


@pytest.fixture
def blocked(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import matplotlib`` fails as it does without the extra."""
    shim = tmp_path / "shim" / "matplotlib"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'matplotlib\'", name="matplotlib")\n'
    )
    # Only the stand-in goes on the path: the script runs the installed package (in tox a
    # wheel, whose emulator extension the source tree does not have).
    return {**os.environ, "PYTHONPATH": str(shim.parent)}


def mote(*args: str | Path, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOTE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=cwd,
    )


def test_the_stand_in_blocks_matplotlib(blocked: dict[str, str], tmp_path: Path) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import matplotlib"],
        capture_output=True,
        text=True,
        env=blocked,
        cwd=tmp_path,
        check=False,
    )
    assert probe.returncode == 1
    assert "ModuleNotFoundError: No module named 'matplotlib'" in probe.stderr


@pytest.mark.parametrize("command", ["topology", "log"])
def test_plot_says_what_to_install(command: str, blocked: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "log").mkdir()
    result = mote("plot", command, tmp_path / "log", "--out", "x.svg", env=blocked, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Error: mote plot {command} {NOT_INSTALLED}"
    assert list(tmp_path.iterdir()) == [tmp_path / "log", tmp_path / "shim"]


def test_emulate_plot_says_what_to_install_before_it_runs(
    blocked: dict[str, str], tmp_path: Path
) -> None:
    started = time.monotonic()
    result = mote("emulate", "--nodes", "400", "--duration", "1h", "--plot", "net.svg",
                  env=blocked, cwd=tmp_path)  # fmt: skip
    assert time.monotonic() - started < 30  # an hour of 400 motes would take longer
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Error: mote emulate --plot {NOT_INSTALLED}"
    assert not (tmp_path / "net.svg").exists()


def test_accuracy_plot_says_what_to_install(blocked: dict[str, str], tmp_path: Path) -> None:
    for name in ("r.jsonl", "t.jsonl"):
        (tmp_path / name).write_text("")
    result = mote("accuracy", "r.jsonl", "t.jsonl", "--plot", "a.png", env=blocked, cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Error: mote accuracy --plot {NOT_INSTALLED}"
    assert not (tmp_path / "a.png").exists()


def test_mote_starts_and_lists_plot_without_the_extra(
    blocked: dict[str, str], tmp_path: Path
) -> None:
    result = mote("--help", env=blocked, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "  plot " in result.stdout
    helped = mote("plot", "log", "--help", env=blocked, cwd=tmp_path)
    assert helped.returncode == 0 and "--attr" in helped.stdout
    # Without --plot, emulate and accuracy do their work as before.
    run = mote("emulate", "--nodes", "4", "--lossless", "--epochs", "2", "--query",
               "SELECT nodeid FROM sensors EPOCH DURATION 2s", "--out", "r.jsonl",
               "--truth", "t.jsonl", env=blocked, cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    plain = mote("accuracy", "r.jsonl", "t.jsonl", "--json", env=blocked, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert list(json.loads(plain.stdout)) == ["1"]
