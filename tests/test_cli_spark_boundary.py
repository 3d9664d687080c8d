"""`mote spark` and `mote run` fail with a sentence, not a traceback, when Spark cannot run
(spark/errors.py). Runs without the spark extra too: PySpark is blocked or not needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark.errors import missing_extra

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script

# A meta-path finder that refuses pyspark as an interpreter without the extra does
# (ModuleNotFoundError naming it), installed in every process through sitecustomize.
NO_PYSPARK = """
import sys


class NoPySpark:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "pyspark":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoPySpark())
"""


def mote(*args: str, env_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = None if env_path is None else {**os.environ, "PYTHONPATH": str(env_path)}
    return subprocess.run(
        [MOTE, *args], capture_output=True, text=True, timeout=120, check=False, env=env
    )


@pytest.mark.parametrize(
    ("command", "args"),
    [("spark", ["--log", "{log}", "--out", "{out}"]), ("run", ["--out", "{out}"])],
)
def test_without_the_spark_extra_the_command_says_what_to_install(
    command: str, args: list[str], tmp_path: Path
) -> None:
    (tmp_path / "sitecustomize.py").write_text(NO_PYSPARK)
    (tmp_path / "log").mkdir()
    formatted = [a.format(log=tmp_path / "log", out=tmp_path / "out") for a in args]
    result = mote(command, *formatted, env_path=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"Error: mote {command} needs the spark extra (PySpark, PyArrow, pandas; and Java 17), "
        "which is not installed here: pyspark cannot be imported. Install it with\n"
        '  pip install "motebase[spark]"\n'
    )
    assert not (tmp_path / "out").exists()  # mote run stopped before the emulator started


def test_mote_starts_and_lists_spark_without_the_extra(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text(NO_PYSPARK)
    result = mote("--help", env_path=tmp_path)
    assert result.returncode == 0
    assert "  spark " in result.stdout and "  run " in result.stdout


def test_spark_refuses_a_log_directory_that_does_not_exist_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    result = mote("spark", "--log", str(tmp_path / "no-such-log"), "--out", str(tmp_path / "o"))
    assert time.monotonic() - started < 30  # it waited 60 s for a query record there
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.endswith(
        f"Error: Invalid value for '--log': Directory '{tmp_path / 'no-such-log'}' does not "
        "exist.\n"
    )


def test_only_the_spark_extras_modules_are_the_spark_extra() -> None:
    assert missing_extra(ModuleNotFoundError("x", name="pyarrow.lib"), "spark") is not None
    assert missing_extra(ModuleNotFoundError("x", name="numpy"), "spark") is None
    assert missing_extra(ImportError("cannot import name 'x'"), "spark") is None
