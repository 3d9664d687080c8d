"""A plain PySpark session finds ``format("motebase")`` by itself (pyspark_motebase.py).

Each test runs a fresh Python with a clean environment, as a user's notebook or script
would start: no PYSPARK_PYTHON, no ``spark.dataSource.register``, nothing of motebase
imported by the driver. PYTHONPATH stands in for the installed package (this tree, so
that Spark's Python workers import the code under test).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic_log import write_log

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
EPOCHS, NODES = 5, 4

# Reads the log as a batch and as a stream (to completion) in a plain session and prints
# what it saw as one JSON line.
READ_BOTH_WAYS = """
import json, os, sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[2]").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
log = sys.argv[1]
batch = spark.read.format("motebase").load(log)
per_node = {r.node_id: r["count"] for r in batch.groupBy("node_id").count().collect()}
stream = spark.readStream.format("motebase").option("path", log).load()
query = (stream.writeStream.format("memory").queryName("readings")
         .trigger(availableNow=True).start())
query.awaitTermination()
print(json.dumps({
    "pyspark_python": os.environ.get("PYSPARK_PYTHON"),
    "batch_rows": batch.count(),
    "per_node": sorted(per_node.items()),
    "stream_rows": spark.table("readings").count(),
    "stream_offsets": sorted(r.log_offset for r in spark.table("readings").collect()),
}))
"""


def clean_env(path: str) -> dict[str, str]:
    """Only what a login shell would have; PATH decides which python3 Spark's workers run."""
    env = {"HOME": os.environ["HOME"], "PATH": path, "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"}
    if "JAVA_HOME" in os.environ:
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return env


def run_script(
    script: str, args: list[Path], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    """``script`` in a fresh interpreter; ``cwd`` is an empty directory, since Spark's
    workers put their working directory first on sys.path."""
    cwd.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=env,
        cwd=cwd,
    )


def last_json_line(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_plain_session_reads_the_log_as_batch_and_stream(tmp_path: Path) -> None:
    # As in an activated virtualenv (or a notebook started from one): python3 on PATH is
    # the interpreter motebase is installed in, and Spark's workers run that one.
    write_log(tmp_path / "log", range(EPOCHS), NODES)
    env = clean_env(f"{VENV_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin")
    seen = last_json_line(run_script(READ_BOTH_WAYS, [tmp_path / "log"], env, tmp_path / "cwd"))
    assert seen == {
        "pyspark_python": None,
        "batch_rows": EPOCHS * NODES,
        "per_node": [[node, EPOCHS] for node in range(1, NODES + 1)],
        "stream_rows": EPOCHS * NODES,
        # offset 0 is the query record; the readings follow it
        "stream_offsets": list(range(1, EPOCHS * NODES + 1)),
    }


def test_an_interpreter_not_on_path_works_once_pyspark_python_names_it(tmp_path: Path) -> None:
    # A Jupyter kernel or `venv/bin/python script.py` without activation: python3 on PATH
    # is another interpreter, which cannot import motebase. Spark takes the workers'
    # interpreter from the environment only (not from spark.pyspark.python), so the
    # documented remedy is setting PYSPARK_PYTHON before the first session.
    write_log(tmp_path / "log", range(EPOCHS), NODES)
    script = "import os, sys\nos.environ['PYSPARK_PYTHON'] = sys.executable\n" + READ_BOTH_WAYS
    env = clean_env(f"/usr/bin{os.pathsep}/bin")
    seen = last_json_line(run_script(script, [tmp_path / "log"], env, tmp_path / "cwd"))
    assert (seen["batch_rows"], seen["stream_rows"]) == (EPOCHS * NODES, EPOCHS * NODES)


def test_an_unimportable_motebase_is_named_and_hides_no_other_source(tmp_path: Path) -> None:
    # A worker interpreter that has pyspark_motebase but cannot import motebase.spark.source
    # (here a shadowing `motebase` package that raises): the source is still registered, and
    # using it says why it cannot work; Spark's other sources are unaffected.
    write_log(tmp_path / "log", range(EPOCHS), NODES)
    shadow = tmp_path / "shadow" / "motebase"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no motebase spark here')\n")
    (tmp_path / "rows.json").write_text('{"a": 1}\n{"a": 2}\n')
    script = """
import sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[1]").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
print("json rows", spark.read.json(sys.argv[2]).count())
try:
    spark.read.format("motebase").load(sys.argv[1])
except Exception as exc:
    print(type(exc).__name__, str(exc).splitlines()[-2])
"""
    env = clean_env(f"{VENV_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin")
    env["PYTHONPATH"] = f"{tmp_path / 'shadow'}{os.pathsep}{REPO}"
    result = run_script(script, [tmp_path / "log", tmp_path / "rows.json"], env, tmp_path / "cwd")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-2:] == [
        "json rows 2",
        "AnalysisException ImportError: the motebase data source cannot be imported in "
        f"Spark's Python worker ({VENV_BIN / 'python3'}): no motebase spark here. Install motebase "
        "with its spark extra in that interpreter, or point PYSPARK_PYTHON at the one where "
        "it is installed",
    ]
