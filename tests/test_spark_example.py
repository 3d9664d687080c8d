"""docs/spark_example.py, the notebook-style example, runs as written against a small log:
a plain session (no PYSPARK_PYTHON, no registration) reads it as a batch and as a stream
and shows the same per-node aggregate both ways."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic_log import reading_record, write_log

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "spark_example.py"
# Five epochs: every mean of five integer light readings has one decimal exactly, so
# Spark's round(avg, 1) needs no rounding rule to agree with this test.
EPOCHS, NODES = 5, 4


def expected_rows() -> list[list[str]]:
    rows = [["node_id", "readings", "avg_light", "last_epoch"]]
    for node in range(1, NODES + 1):
        lights = [reading_record(epoch, node)["values"]["light"] for epoch in range(EPOCHS)]
        rows.append([str(node), str(EPOCHS), str(sum(lights) / EPOCHS), str(EPOCHS - 1)])
    return rows


def shown_tables(stdout: str) -> list[list[list[str]]]:
    """The tables ``DataFrame.show()`` printed (runs of lines framed by ``+`` and ``|``),
    each as its rows of cell texts."""
    tables: list[list[list[str]]] = []
    previous_in_table = False
    for line in stdout.splitlines():
        in_table = line.startswith(("+", "|"))
        if in_table and not previous_in_table:
            tables.append([])
        if line.startswith("|"):
            tables[-1].append([cell.strip() for cell in line.strip("|").split("|")])
        previous_in_table = in_table
    return tables


def test_the_notebook_example_runs_and_shows_the_per_node_aggregate(tmp_path: Path) -> None:
    write_log(tmp_path / "log", range(EPOCHS), NODES)
    (tmp_path / "cwd").mkdir()
    env = {
        "HOME": os.environ["HOME"],
        # python3 on PATH is this interpreter, as in an activated virtualenv
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "PYTHONPATH": str(REPO),  # stands in for the installed package
        "MOTEBASE_LOG": str(tmp_path / "log"),
        **({"JAVA_HOME": os.environ["JAVA_HOME"]} if "JAVA_HOME" in os.environ else {}),
    }
    result = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=env,
        cwd=tmp_path / "cwd",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[0] == (
        f"{EPOCHS * NODES} readings, columns: log_offset, query_id, epoch, node_id, "
        "epoch_time, receive_time, nodeid, light, temp, depth"
    )
    assert shown_tables(result.stdout) == [expected_rows(), expected_rows()]
