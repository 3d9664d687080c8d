"""`mote spark` fails at once on a log directory that does not exist."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script


def mote(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MOTE, *args], capture_output=True, text=True, timeout=120, check=False)


def test_spark_refuses_a_log_directory_that_does_not_exist_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    result = mote("spark", "--log", str(tmp_path / "no-such-log"), "--out", str(tmp_path / "o"))
    assert time.monotonic() - started < 30  # it waited 60 s for a query record there
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.endswith(
        f"Error: Invalid value for '--log': Directory '{tmp_path / 'no-such-log'}' does not "
        "exist.\n"
    )
