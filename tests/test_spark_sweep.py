"""`mote sweep` (motebase.spark.sweep): every point of a spec as one Spark task, one row a
point in Parquet, a failed point a row with its error, a summary by seed group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import spark_fixtures
from pyspark.sql import SparkSession
from spark_fixtures import run_mote

from motebase.emu.sweep import parse_spec
from motebase.spark.sweep import run_points, write_sweep

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


def test_a_sweep_lands_one_row_a_point(tmp_path: Path, spark_session: SparkSession) -> None:
    spec = parse_spec(SPEC)
    seen: list[tuple[int, int]] = []
    rows = run_points(spark_session, spec.points(), lambda done, total: seen.append((done, total)))
    assert [r["point"] for r in rows] == list(range(8))
    target = write_sweep(spark_session, spec, rows, tmp_path)

    table = sorted(spark_session.read.parquet(str(target)).collect(), key=lambda r: r.point)
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
    assert seen and all(total == 8 for _, total in seen)

    summary = json.loads((tmp_path / "summary.json").read_text())
    assert (summary["points"], summary["failed"]) == (8, 4)
    grid9 = [g for g in summary["groups"] if g["params"]["nodes"] == 9]
    good = next(g for g in grid9 if g["params"]["topology"] == "grid")
    assert good["points"] == 2 and good["count_median"] == {"mean": 9.0, "median": 9.0}


def test_mote_sweep_runs_a_spec(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.replace('["grid", "moon"]', '["grid"]').replace("[4, 9]", "[4]"))
    out = tmp_path / "out"
    done = run_mote("sweep", str(spec), "--out", str(out), "--master", "local[2]", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 points (0 failed)" in done.stderr
    assert (out / "parquet" / "sweep").is_dir()
