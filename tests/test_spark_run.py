"""`mote run`, the README's main job, through the real `mote` host in its own process:
emulated network -> gateway -> result log -> Spark -> Parquet, every logged reading once."""

from __future__ import annotations

from pathlib import Path

import pytest
import spark_fixtures
from pyspark.sql import SparkSession
from spark_fixtures import parquet_offsets, run_mote

from motebase.gateway.resultlog import ResultLog

pytestmark = pytest.mark.spark
spark_session = spark_fixtures.spark_session


def test_mote_run_lands_every_logged_reading_in_parquet_once(
    tmp_path: Path, spark_session: SparkSession
) -> None:
    out = tmp_path / "run"
    done = run_mote("run", "--nodes", "9", "--duration", "12", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Parquet tables in" in done.stdout

    logged = [offset for offset, _ in ResultLog(out / "log").read(kind="reading")]
    assert logged, "the gateway logged no reading"
    assert parquet_offsets(spark_session, out / "parquet" / "readings") == logged

    readings = spark_session.read.parquet(str(out / "parquet" / "readings"))
    keys = readings.select("query_id", "epoch", "node_id").collect()
    assert len(keys) == len(set(keys)), "a (query, epoch, node) reading landed twice"
    nodes = {row.node_id for row in keys}
    assert nodes <= set(range(9)), nodes  # motes 0..8: the root reports its own reading too
