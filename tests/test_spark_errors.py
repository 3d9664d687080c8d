"""Spark failing for reasons of the machine, for real, through the installed `mote spark`:
one paragraph naming the likely cause and exit 1, no Python or JVM stack trace
(spark/errors.py; the recognition itself is tested in test_cli_spark_boundary.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic_log import write_log

pytestmark = pytest.mark.spark

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script
# The interpreter it runs, which the messages name: its shebang's, this one's path or another
# name for it (pip writes python3.11 where pytest runs as python); pip's /bin/sh launcher
# for long paths execs this one.
_SHEBANG = Path(MOTE).read_text().splitlines()[0].removeprefix("#!").split()[0]
MOTE_PYTHON = sys.executable if _SHEBANG == "/bin/sh" else _SHEBANG


def mote_spark(tmp_path: Path, pyspark_python: str) -> subprocess.CompletedProcess[str]:
    write_log(tmp_path / "log", range(1, 5), nodes=3)
    log, out = str(tmp_path / "log"), str(tmp_path / "out")
    return subprocess.run(
        [MOTE, "spark", "--log", log, "--out", out, "--no-join", "--until-idle", "3"],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
        env={**os.environ, "PYSPARK_PYTHON": pyspark_python},
        cwd=tmp_path,
    )


def assert_explained(result: subprocess.CompletedProcess[str], paragraph: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.endswith(f"Error: {paragraph}\n"), result.stderr
    assert "Traceback" not in result.stderr
    assert "\tat " not in result.stderr  # no JVM stack trace in Spark's log lines either


def test_a_python_worker_that_does_not_connect_back_in_time(tmp_path: Path) -> None:
    # A worker interpreter that takes longer to start than the 10 s Spark waits for it:
    # what an overloaded machine does to a Python that starts normally. Slow only as the
    # stream's worker (-m pyspark.sql.streaming...), the one whose wait runs out: the
    # version probes and the data source daemons before it wait longer, and slowed too
    # they only made the test 50 s longer.
    slow = tmp_path / "slow-python"
    slow.write_text(
        f'#!/bin/sh\ncase "$2" in pyspark.sql.streaming.*) sleep 12 ;; esac\n'
        f'exec {sys.executable} "$@"\n'
    )
    slow.chmod(0o755)
    result = mote_spark(tmp_path, str(slow))
    assert_explained(
        result,
        'Spark failed: its Python worker did not connect back in time ("Python worker failed '
        'to connect back"). Spark starts Python workers for its tasks and gives each 10 '
        "seconds to connect back to the JVM on localhost. Likely causes: the machine is "
        "overloaded (run with fewer cores, e.g. --master local[2], or when it is less busy); "
        f"PYSPARK_PYTHON names another or a slow-starting interpreter (it is {slow}; "
        f"motebase runs in {MOTE_PYTHON}); or a firewall or security tool blocks "
        "connections to 127.0.0.1. Rerunning with the same --out resumes from the checkpoints.",
    )


def test_a_python_that_does_not_exist(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-python")
    assert_explained(
        mote_spark(tmp_path, missing),
        f"Spark failed: it cannot run {missing!r} to start its Python workers. PYSPARK_PYTHON "
        f"(it is {missing}) must name an interpreter that exists and can import motebase and "
        f"pyspark, such as {MOTE_PYTHON}; unset it to let motebase choose that one. "
        "Rerunning with the same --out resumes from the checkpoints.",
    )


def test_mote_run_explains_too(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-python")
    result = subprocess.run(
        [MOTE, "run", "--nodes", "4", "--duration", "5", "--out", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
        env={**os.environ, "PYSPARK_PYTHON": missing},
        cwd=tmp_path,
    )
    assert_explained(
        result,
        f"Spark failed: it cannot run {missing!r} to start its Python workers. PYSPARK_PYTHON "
        f"(it is {missing}) must name an interpreter that exists and can import motebase and "
        f"pyspark, such as {MOTE_PYTHON}; unset it to let motebase choose that one. "
        "Rerunning with the same --out resumes from the checkpoints.",
    )


def test_a_java_that_does_not_start(tmp_path: Path) -> None:
    write_log(tmp_path / "log", range(1, 2), nodes=1)
    result = subprocess.run(
        [MOTE, "spark", "--log", str(tmp_path / "log"), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "JAVA_HOME": str(tmp_path / "no-java")},
        cwd=tmp_path,
    )
    assert_explained(
        result,
        "Spark failed to start: its Java process exited at once. Spark needs Java 17: install "
        f"it and make sure JAVA_HOME (it is {tmp_path / 'no-java'}) points at it, or, with "
        "JAVA_HOME unset, that `java` on PATH is it.",
    )
