"""`mote sweep` (motebase.spark.sweep): every point of a spec as one Spark task, one row a
point in Parquet, a failed point a row with its error, a summary by seed group.

It runs as users run it, in its own process and not in the checkout: Spark's Python
workers start in the driver's directory, where a clean checkout's motebase/ (without the
emulator built) would shadow the installed package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import spark_fixtures
from pyspark.sql import SparkSession
from spark_fixtures import run_mote

pytestmark = pytest.mark.spark
spark_session = spark_fixtures.spark_session  # the one SparkSession of the test session

SPEC = """
query = "SELECT COUNT(*) FROM sensors SAMPLE PERIOD 2048"
epochs = 3
lossless = true

[grid]
nodes = [4, 9]
seed = [1, 2]
topology = ["grid", "moon"]
"""


def test_mote_sweep_lands_one_row_a_point(tmp_path: Path, spark_session: SparkSession) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    done = run_mote("sweep", str(spec), "--out", str(out), "--master", "local[2]", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 points (4 failed)" in done.stderr
    assert "point 1: ConfigError: unknown topology 'moon'" in done.stderr

    table = sorted(
        spark_session.read.parquet(str(out / "parquet" / "sweep")).collect(), key=lambda r: r.point
    )
    assert [(r.nodes, r.seed, r.topology) for r in table] == [
        (n, s, t) for n in (4, 9) for s in (1, 2) for t in ("grid", "moon")
    ]
    for row in table:
        if row.topology == "moon":  # a failed point is a row with its error
            assert row.error.startswith("ConfigError: unknown topology 'moon'")
            assert row.count_median is None
        else:  # lossless: COUNT is the node count in every epoch
            assert row.error is None and row.sound
            assert (row.count_median, row.exact_fraction) == (float(row.nodes), 1.0)
            assert json.loads(row.accuracy)["1"]["kind"] == "aggregate"

    summary = json.loads((out / "summary.json").read_text())
    assert (summary["points"], summary["failed"]) == (8, 4)
    grid9 = [g for g in summary["groups"] if g["params"]["nodes"] == 9]
    good = next(g for g in grid9 if g["params"]["topology"] == "grid")
    assert good["points"] == 2 and good["count_median"] == {"mean": 9.0, "median": 9.0}
