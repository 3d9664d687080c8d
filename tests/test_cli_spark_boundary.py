"""`mote spark` and `mote run` fail with a sentence, not a traceback, when Spark cannot run
(spark/errors.py). Runs without the spark extra too: PySpark is blocked or not needed.

The Spark runs that produce these failures for real are in test_spark_errors.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from motebase.spark.errors import missing_extra, spark_failure_hint

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

# Real messages, from runs of `mote spark` with PYSPARK_PYTHON a wrapper that sleeps 12 s
# before starting Python (the streaming query's error, then the JVM's stack trace of it)
# and with PYSPARK_PYTHON=/nonexistent/python (a Py4JJavaError), cut short; PySpark's
# error when JAVA_HOME=/nonexistent.
WORKER_TIMEOUT = """streaming query readings failed: Python worker failed to connect back.
=== Streaming Query ===
Identifier: readings [id = dca9d689-2f06-48c0-b6de-724b0fd755d3, runId = 7cd6c7cb-cadc-46f5-9765-0eaf01f8d278]
Current Committed Offsets: {}
Current Available Offsets: {}

Current State: INITIALIZING
Thread State: RUNNABLE"""  # noqa: E501
WORKER_TIMEOUT_JVM = """org.apache.spark.SparkException: Python worker failed to connect back.
\tat org.apache.spark.api.python.PythonWorkerFactory.createSimpleWorker(PythonWorkerFactory.scala:252)
\tat org.apache.spark.sql.execution.python.streaming.PythonStreamingSourceRunner.init(PythonStreamingSourceRunner.scala:97)
Caused by: java.net.SocketTimeoutException: Timed out while waiting for the Python worker to connect back
\tat org.apache.spark.api.python.PythonWorkerFactory.createSimpleWorker(PythonWorkerFactory.scala:234)
\t... 34 more"""  # noqa: E501
CANNOT_RUN = """An error occurred while calling o47.load.
: java.io.IOException: Cannot run program "/nonexistent/python": error=2, No such file or directory
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1143)
\tat java.base/java.lang.ProcessBuilder.start(ProcessBuilder.java:1073)
\tat org.apache.spark.api.python.PythonWorkerFactory.startDaemon(PythonWorkerFactory.scala:287)"""

NO_JAVA = "[JAVA_GATEWAY_EXITED] Java gateway process exited before sending its port number."


def mote(*args: str, env_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = (
        None
        if env_path is None
        else {**os.environ, "PYTHONPATH": str(env_path)}  # the installed package runs
    )
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


@pytest.mark.parametrize("text", [WORKER_TIMEOUT, WORKER_TIMEOUT_JVM])
def test_a_worker_that_did_not_connect_back_is_explained(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/slow/python")
    assert spark_failure_hint(text) == (
        'Spark failed: its Python worker did not connect back in time ("Python worker failed '
        'to connect back"). Spark starts Python workers for its tasks and gives each 10 '
        "seconds to connect back to the JVM on localhost. Likely causes: the machine is "
        "overloaded (run with fewer cores, e.g. --master local[2], or when it is less busy); "
        "PYSPARK_PYTHON names another or a slow-starting interpreter (it is /opt/slow/python; "
        f"motebase runs in {sys.executable}); or a firewall or security tool blocks "
        "connections to 127.0.0.1. Rerunning with the same --out resumes from the checkpoints."
    )


def test_a_python_that_cannot_be_run_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", "/nonexistent/python")
    assert spark_failure_hint(CANNOT_RUN) == (
        "Spark failed: it cannot run '/nonexistent/python' to start its Python workers. "
        "PYSPARK_PYTHON (it is /nonexistent/python) must name an interpreter that exists and "
        f"can import motebase and pyspark, such as {sys.executable}; unset it to let motebase "
        "choose that one. Rerunning with the same --out resumes from the checkpoints."
    )


def test_java_that_does_not_start_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", "/opt/no-java")
    assert spark_failure_hint(NO_JAVA) == (
        "Spark failed to start: its Java process exited at once. Spark needs Java 17: install "
        "it and make sure JAVA_HOME (it is /opt/no-java) points at it, or, with JAVA_HOME "
        "unset, that `java` on PATH is it."
    )


def test_other_spark_errors_are_not_explained_away() -> None:
    assert spark_failure_hint("[PATH_NOT_FOUND] Path does not exist: file:/tmp/x.") is None


def test_only_the_spark_extras_modules_are_the_spark_extra() -> None:
    assert missing_extra(ModuleNotFoundError("x", name="pyarrow.lib"), "spark") is not None
    assert missing_extra(ModuleNotFoundError("x", name="numpy"), "spark") is None
    assert missing_extra(ImportError("cannot import name 'x'"), "spark") is None
