"""The pipeline's analytics checked against plain-Python computations over the same rows."""

from __future__ import annotations

import math
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import spark_fixtures
from click.testing import CliRunner
from pyspark.sql import SparkSession
from spark_fixtures import parquet_offsets
from synthetic_log import QUERY_ID, T0, epoch_records, logged, write_log

from motebase.gateway.cli.main import build_cli
from motebase.gateway.resultlog import ResultLog
from motebase.spark.pipeline import (
    PipelineConfig,
    WindowJoinSpec,
    node_averages,
    positions_frame,
    read_log,
    start_parquet_sink,
    window_join,
    with_date,
)
from motebase.spark.topology import NodePosition, write_positions_csv

pytestmark = pytest.mark.spark
spark_session = spark_fixtures.spark_session  # the one SparkSession of the test session

NODES = 6
WINDOW_S = 60


def _flush_watermark(log_dir: Path, query, epoch: int) -> None:
    """Append a reading far in event time; the batch after it runs with the new watermark."""
    with ResultLog(log_dir) as log:
        log.append_batch(epoch_records(epoch, 1))
    query.processAllAvailable()


def expected_node_averages(readings: dict[int, dict]) -> dict[tuple[int, int], dict]:
    """(node, window start) -> reading count and the mean of each attribute (nulls skipped)."""
    groups: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for record in readings.values():
        start = math.floor(record["epoch_time"] / WINDOW_S) * WINDOW_S
        groups[(record["node_id"], start)].append(record["values"])
    expected = {}
    for key, rows in groups.items():
        means = {}
        for name in ("nodeid", "light", "temp", "depth"):
            present = [row[name] for row in rows if row[name] is not None]
            means[name] = sum(present) / len(present) if present else None
        expected[key] = {"readings": len(rows), **means}
    return expected


def test_per_node_window_averages_with_positions_match_a_python_computation(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 90), NODES)
    topology = tmp_path / "grid.csv"
    positions = {n: NodePosition(n, 10.0 * n, 5.0 + n) for n in range(1, 5)}  # 5, 6 unplaced
    write_positions_csv(topology, list(positions.values()))
    config = PipelineConfig(log_dir, out_dir, topology=topology, trigger_s=0.5)

    averages = node_averages(
        read_log(spark_session, log_dir, "readings"),
        positions_frame(spark_session, topology),
        window=f"{WINDOW_S} seconds",
        watermark="10 seconds",
    )
    query = start_parquet_sink(
        with_date(averages, "window_start"), config, "node_averages", ["query_id", "date"]
    )
    try:
        query.processAllAvailable()
        expected = expected_node_averages(logged(log_dir, "reading"))
        _flush_watermark(log_dir, query, 1000)
        _flush_watermark(log_dir, query, 1001)
    finally:
        query.stop()

    flush_window = math.floor((T0 + 1000 * 2.048) / WINDOW_S) * WINDOW_S
    rows = [
        row
        for row in spark_session.read.parquet(str(out_dir / "node_averages")).collect()
        if row.window_start.timestamp() < flush_window
    ]
    got = {(row.node_id, round(row.window_start.timestamp())): row for row in rows}
    assert len(got) == len(rows)
    assert len(expected) >= 3 * NODES
    assert set(got) == set(expected)
    for key, row in got.items():
        want = expected[key]
        assert row.query_id == QUERY_ID
        assert row.readings == want["readings"]
        for name in ("nodeid", "light", "temp", "depth"):
            assert getattr(row, f"avg_{name}") == pytest.approx(want[name])
        assert row.window_end.timestamp() - row.window_start.timestamp() == WINDOW_S
        placed = positions.get(row.node_id)
        assert (row.x, row.y) == ((placed.x, placed.y) if placed else (None, None))


def _pairable(left: dict, right: dict, spec: WindowJoinSpec) -> bool:
    right_attribute = spec.right_attribute or spec.attribute
    if left["query_id"] != right["query_id"]:
        return False
    if left["values"][spec.attribute] is None or right["values"][right_attribute] is None:
        return False
    if spec.left_node is None and spec.right_node is None:
        return left["node_id"] < right["node_id"]
    return spec.left_node in (None, left["node_id"]) and spec.right_node in (
        None,
        right["node_id"],
    )


def expected_pairs(readings: dict[int, dict], spec: WindowJoinSpec) -> set[tuple[int, int]]:
    return {
        (lo, ro)
        for lo, left in readings.items()
        for ro, right in readings.items()
        if lo != ro
        and _pairable(left, right, spec)
        and abs(left["epoch_time"] - right["epoch_time"]) <= spec.within_s
    }


@pytest.mark.parametrize(
    "spec",
    [
        # readings of different nodes taken within 0.32 s of each other in the same epoch
        WindowJoinSpec("light", within_s=0.32),
        # node 1's light against node 3's temp within 2.5 s: the same and adjacent epochs
        WindowJoinSpec("light", within_s=2.5, left_node=1, right_node=3, right_attribute="temp"),
    ],
    ids=["all-node-pairs", "two-nodes-two-attributes"],
)
def test_window_join_matches_a_python_nested_loop(
    spark_session: SparkSession, tmp_path: Path, spec: WindowJoinSpec
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 40), NODES)
    config = PipelineConfig(log_dir, out_dir, trigger_s=0.5)
    joined = window_join(
        read_log(spark_session, log_dir, "readings"),
        read_log(spark_session, log_dir, "readings"),
        spec,
        watermark="10 seconds",
    )
    query = start_parquet_sink(with_date(joined, "l_time"), config, "window_join", ["date"])
    try:
        query.processAllAvailable()
    finally:
        query.stop()

    readings = logged(log_dir, "reading")
    rows = spark_session.read.parquet(str(out_dir / "window_join")).collect()
    got = [(row.l_offset, row.r_offset) for row in rows]
    expected = expected_pairs(readings, spec)
    assert len(expected) > 50
    assert len(got) == len(set(got))
    assert set(got) == expected
    for row in rows:
        left, right = readings[row.l_offset], readings[row.r_offset]
        assert (row.l_node, row.r_node) == (left["node_id"], right["node_id"])
        assert row.l_value == left["values"][spec.attribute]
        assert row.r_value == right["values"][spec.right_attribute or spec.attribute]


def test_mote_spark_streams_a_log_into_parquet_tables_and_summarizes_them(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 80), NODES)
    args = ["spark", "--log", str(log_dir), "--out", str(out_dir), "--until-idle", "2"]
    args += ["--watermark", "10s", "--join-within", "320ms", "--trigger", "500ms"]
    result = CliRunner().invoke(build_cli(), args)
    assert result.exit_code == 0, result.output
    assert "readings batch" in result.output
    assert "Parquet tables in" in result.output
    assert parquet_offsets(spark_session, out_dir / "readings") == sorted(
        logged(log_dir, "reading")
    )
    joined = spark_session.read.parquet(str(out_dir / "window_join"))
    assert {row.left_attribute for row in joined.select("left_attribute").collect()} == {"light"}
    assert spark_session.read.parquet(str(out_dir / "node_averages")).count() > 0


def test_mote_spark_on_a_damaged_log_is_a_one_line_error(tmp_path: Path) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 3), NODES)
    (log_dir / "committed").unlink()
    args = ["spark", "--log", str(log_dir), "--out", str(out_dir), "--until-idle", "1"]
    result = CliRunner().invoke(build_cli(), args)
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: damaged result log: {log_dir / 'committed'}: commit marker missing or "
        f"unreadable, record offsets 0-12; run `mote log repair {log_dir}` to quarantine the "
        "damage and keep every intact record\n"
    )


def test_mote_spark_refuses_a_moved_output_and_rebuilds_it_once_removed(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    """Spark's sink keeps absolute paths: a moved --out is refused before Spark runs (it
    once ran, appended, and failed in the summary), and removing it rebuilds every table
    from the log, each row once."""
    log_dir, first, moved = tmp_path / "log", tmp_path / "first", tmp_path / "moved"
    write_log(log_dir, range(1, 6), NODES)
    args = ["spark", "--log", str(log_dir), "--until-idle", "2", "--no-join"]
    args += ["--trigger", "500ms"]
    assert CliRunner().invoke(build_cli(), [*args, "--out", str(first)]).exit_code == 0
    first.rename(moved)

    refused = CliRunner().invoke(build_cli(), [*args, "--out", str(moved)])
    assert refused.exit_code == 1
    # the first table, by name, that the first run wrote a file to
    table = min(t.name for t in moved.iterdir() if any(t.rglob("*.parquet")))
    assert refused.stderr == (
        f"Error: {moved / table} was written at {first / table}: Spark's Parquet sink keeps "
        f"the absolute path of every file it wrote (in {table}/_spark_metadata), so a moved "
        f"table can neither be appended to nor read whole. Move it back to {first}, or "
        f"rebuild it here from the result log: remove {moved} and rerun; every row of "
        f"{log_dir} lands in it once\n"
    )
    assert "Spark" not in refused.stdout  # refused before a session was asked for

    shutil.rmtree(moved)
    rebuilt = CliRunner().invoke(build_cli(), [*args, "--out", str(moved)])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert parquet_offsets(spark_session, moved / "readings") == sorted(logged(log_dir, "reading"))
