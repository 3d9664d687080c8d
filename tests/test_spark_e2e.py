"""End to end: emulated network -> `mote query` gateway process (pty) -> result log ->
Spark streaming -> Parquet; every result the gateway logged lands exactly once, also
when the gateway is killed with SIGKILL and a new one appends to the same log."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import spark_fixtures
from emulated import LIGHT_BASE, emulated_bridge
from pyspark.sql import SparkSession
from spark_fixtures import parquet_offsets
from synthetic_log import logged

from motebase.gateway.resultlog import ResultLog
from motebase.spark.pipeline import (
    PipelineConfig,
    read_log,
    start_parquet_sink,
    wait_for_query_record,
    with_date,
)

pytestmark = pytest.mark.spark
spark_session = spark_fixtures.spark_session  # the one SparkSession of the test session

NODES = 9  # 3 x 3 grid, node 0 the root
SELECT = "SELECT nodeid, light FROM sensors EPOCH DURATION 500"
AGGREGATE = "SELECT COUNT(light), MAX(light) FROM sensors EPOCH DURATION 500"


@contextlib.contextmanager
def emulated_network() -> Iterator[str]:
    """A 3 x 3 grid behind a pty; yields the pty path."""
    with emulated_bridge(NODES) as served:
        assert served.pty_path is not None
        yield served.pty_path


def start_gateway(pty: str, log_dir: Path, sql: str, *limits: str) -> subprocess.Popen[str]:
    command = "from motebase.gateway.cli.main import main; main()"
    args = ["query", sql, "--port", pty, "--log", str(log_dir), "--no-table", *limits]
    return subprocess.Popen(
        [sys.executable, "-c", command, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_readings(log_dir: Path, count: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while len(logged(log_dir, "reading")) < count:
        assert time.monotonic() < deadline, f"fewer than {count} readings logged"
        time.sleep(0.2)


def test_emulator_gateway_log_spark_parquet_exactly_once_across_a_gateway_sigkill(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    """The basestation is restarted with the gateway: a second query on the same emulated
    network after the first one yields no results at the time of writing (see report)."""
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    config = PipelineConfig(log_dir=log_dir, out_dir=out_dir, trigger_s=0.5)
    with emulated_network() as pty:
        first = start_gateway(pty, log_dir, SELECT, "--duration", "60s")
        assert wait_for_query_record(log_dir, timeout_s=60), "the gateway logged no query"
        readings = with_date(read_log(spark_session, log_dir, "readings"), "epoch_time")
        aggregates = with_date(read_log(spark_session, log_dir, "aggregates"), "epoch_time")
        queries = [
            start_parquet_sink(readings, config, "readings", ["query_id", "date"]),
            start_parquet_sink(aggregates, config, "aggregates", ["query_id", "date"]),
        ]
        try:
            wait_for_readings(log_dir, 10, timeout_s=60)
            os.kill(first.pid, signal.SIGKILL)
            first.wait()
        except BaseException:
            for query in queries:
                query.stop()
            raise
    killed_at = ResultLog(log_dir).latest_offset()
    try:
        with emulated_network() as pty:
            second = start_gateway(pty, log_dir, AGGREGATE, "--epochs", "6")
            _, errors = second.communicate(timeout=120)
            assert second.returncode == 0, errors
        for query in queries:
            query.processAllAvailable()
    finally:
        for query in queries:
            query.stop()

    readings_logged = logged(log_dir, "reading")
    aggregates_logged = logged(log_dir, "aggregate")
    assert len([r for _, r in ResultLog(log_dir).read() if r["kind"] == "query"]) == 2
    assert min(aggregates_logged) > killed_at  # the second gateway appended after the first
    assert parquet_offsets(spark_session, out_dir / "readings") == sorted(readings_logged)
    assert parquet_offsets(spark_session, out_dir / "aggregates") == sorted(aggregates_logged)

    for row in spark_session.read.parquet(str(out_dir / "readings")).collect():
        assert row.light == LIGHT_BASE + row.node_id
        assert row.nodeid == row.node_id
    for row in spark_session.read.parquet(str(out_dir / "aggregates")).collect():
        record = aggregates_logged[row.log_offset]
        assert (row.aggregate, row.value) == (record["aggregate"], record["value"])
        assert bytes(row.partial) == bytes.fromhex(record["partial"])
        if row.aggregate == "MAX":
            assert LIGHT_BASE <= row.value < LIGHT_BASE + NODES
        else:
            assert 1 <= row.value <= NODES
