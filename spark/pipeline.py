"""The streaming pipeline from the result log to Parquet.

Four streaming queries, each with its own checkpoint under ``OUT/_checkpoints/<table>``
and its Parquet table under ``OUT/<table>``:

``readings``, ``aggregates``
    the log's rows as they are, partitioned by ``query_id`` and ``date`` (of event time).
``node_averages``
    readings joined with node positions (stream-static), then per-node averages of every
    numeric attribute over event-time windows (default one minute) with a watermark.
``window_join``
    STEAM's window join, a stream-stream join with watermarks on both sides: pairs of
    readings (two nodes, or two attributes) whose event times lie within ``w``.

Append mode throughout: a window is written once the watermark has passed its end.
Read the tables with Spark (``spark.read.parquet``), which honours the sinks'
``_spark_metadata`` logs; files of a batch interrupted by a crash are not in that log.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import (
    ByteType,
    DoubleType,
    IntegerType,
    LongType,
    ShortType,
    StructField,
    StructType,
)

from motebase.gateway.resultlog import ResultLog
from motebase.spark.schemas import READING_COLUMNS
from motebase.spark.topology import read_positions

NUMERIC_TYPES = (ByteType, ShortType, IntegerType, LongType)
POSITIONS_SCHEMA = StructType(
    [
        StructField("node_id", IntegerType(), False),
        StructField("x", DoubleType(), False),
        StructField("y", DoubleType(), False),
    ]
)


@dataclass(frozen=True)
class WindowJoinSpec:
    """Pairs (left, right) of one query's readings with ``|left time - right time| <= within_s``.

    ``left_node``/``right_node`` restrict each side to one node; with neither given,
    every pair of distinct nodes is reported once (``left.node_id < right.node_id``).
    ``right_attribute`` joins a second attribute (default: the same one).
    A reading is never paired with itself.
    """

    attribute: str
    within_s: float = 1.0
    left_node: int | None = None
    right_node: int | None = None
    right_attribute: str | None = None


@dataclass(frozen=True)
class PipelineConfig:
    log_dir: Path
    out_dir: Path
    topology: Path | None = None
    window: str = "1 minute"
    watermark: str = "30 seconds"
    join: WindowJoinSpec | None = None
    trigger_s: float = 1.0
    query_id: int | None = None

    def table_dir(self, table: str) -> Path:
        return self.out_dir / table

    def checkpoint_dir(self, table: str) -> Path:
        return self.out_dir / "_checkpoints" / table


@dataclass(frozen=True)
class BatchProgress:
    """One finished micro-batch of one streaming query."""

    query: str
    batch_id: int
    rows: int
    duration_ms: int
    rows_per_s: float
    end_offsets: tuple[int, ...]


# -- sources -------------------------------------------------------------------------


def read_log(
    spark: SparkSession,
    log_dir: Path,
    table: str,
    query_id: int | None = None,
    streaming: bool = True,
) -> DataFrame:
    reader = spark.readStream if streaming else spark.read
    reader = reader.format("motebase").option("path", str(log_dir)).option("table", table)
    if query_id is not None:
        reader = reader.option("query_id", str(query_id))
    return reader.load()


def positions_frame(spark: SparkSession, topology: Path | None) -> DataFrame:
    rows = [] if topology is None else read_positions(topology)
    return spark.createDataFrame([(p.node_id, p.x, p.y) for p in rows], schema=POSITIONS_SCHEMA)


def numeric_attributes(readings: DataFrame) -> list[str]:
    attribute_fields = readings.schema.fields[len(READING_COLUMNS.fields) :]
    return [f.name for f in attribute_fields if isinstance(f.dataType, NUMERIC_TYPES)]


def has_query_record(log_dir: Path) -> bool:
    return next(ResultLog(log_dir).read(kind="query"), None) is not None


def wait_for_query_record(log_dir: Path, timeout_s: float, poll_s: float = 0.5) -> bool:
    """The readings schema comes from query records: wait until the log has one."""
    deadline = time.monotonic() + timeout_s
    while not has_query_record(log_dir):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True


def default_join_attribute(readings: DataFrame) -> str | None:
    """The first numeric sensor attribute (``nodeid`` is a key, not a reading)."""
    candidates = [name for name in numeric_attributes(readings) if name.lower() != "nodeid"]
    return candidates[0] if candidates else None


# -- transformations -----------------------------------------------------------------


def with_date(frame: DataFrame, time_column: str) -> DataFrame:
    """The ``date`` partition column: the UTC day of the row's event time."""
    return frame.withColumn("date", F.to_date(F.col(time_column)))


def node_averages(
    readings: DataFrame, positions: DataFrame, window: str, watermark: str
) -> DataFrame:
    """Per node and event-time window: reading count and mean of each numeric attribute,
    with the node's position (null where the topology does not place the node)."""
    attributes = numeric_attributes(readings)
    located = readings.withWatermark("epoch_time", watermark).join(
        positions, on="node_id", how="left"
    )
    means = [F.avg(F.col(name)).alias(f"avg_{name}") for name in attributes]
    grouped = located.groupBy(
        F.window("epoch_time", window).alias("window"), "query_id", "node_id", "x", "y"
    ).agg(F.count(F.lit(1)).alias("readings"), *means)
    return grouped.select(
        F.col("window.start").alias("window_start"),
        F.col("window.end").alias("window_end"),
        "query_id",
        "node_id",
        "x",
        "y",
        "readings",
        *[f"avg_{name}" for name in attributes],
    )


def _join_side(
    readings: DataFrame, prefix: str, node: int | None, attribute: str, watermark: str
) -> DataFrame:
    side = readings.where(F.col(attribute).isNotNull())
    if node is not None:
        side = side.where(F.col("node_id") == node)
    return side.select(
        F.col("log_offset").alias(f"{prefix}_offset"),
        F.col("query_id").alias(f"{prefix}_query_id"),
        F.col("node_id").alias(f"{prefix}_node"),
        F.col("epoch").alias(f"{prefix}_epoch"),
        F.col("epoch_time").alias(f"{prefix}_time"),
        F.col(attribute).alias(f"{prefix}_value"),
    ).withWatermark(f"{prefix}_time", watermark)


def window_join(
    left_readings: DataFrame, right_readings: DataFrame, spec: WindowJoinSpec, watermark: str
) -> DataFrame:
    """STEAM window join; both inputs are readings frames (may be the same stream read twice)."""
    right_attribute = spec.right_attribute or spec.attribute
    left = _join_side(left_readings, "l", spec.left_node, spec.attribute, watermark)
    right = _join_side(right_readings, "r", spec.right_node, right_attribute, watermark)
    within = F.expr(f"INTERVAL {round(spec.within_s * 1000)} MILLISECONDS")
    # Spark needs an equality key in a stream-stream join (pairs come from one query) and
    # derives the join state's eviction from the time band alone; the other predicates
    # filter the joined pairs, which is the same for an inner join.
    joined = left.join(
        right,
        (F.col("l_query_id") == F.col("r_query_id"))
        & (F.col("r_time") >= F.col("l_time") - within)
        & (F.col("r_time") <= F.col("l_time") + within),
        "inner",
    ).where(F.col("l_offset") != F.col("r_offset"))
    if spec.left_node is None and spec.right_node is None:
        # l_node < r_node, spelled without a range comparison: Spark would try (and fail,
        # noisily) to read a range comparison between the sides as a time constraint.
        joined = joined.where(
            (F.least("l_node", "r_node") == F.col("l_node")) & (F.col("l_node") != F.col("r_node"))
        )
    return joined.select(
        F.col("l_query_id").alias("query_id"),
        F.lit(spec.attribute).alias("left_attribute"),
        F.lit(right_attribute).alias("right_attribute"),
        "l_node",
        "r_node",
        "l_epoch",
        "r_epoch",
        "l_time",
        "r_time",
        "l_value",
        "r_value",
        "l_offset",
        "r_offset",
    )


# -- sinks ---------------------------------------------------------------------------


def start_parquet_sink(
    frame: DataFrame,
    config: PipelineConfig,
    table: str,
    partition_by: Iterable[str],
) -> StreamingQuery:
    return (
        frame.writeStream.queryName(table)
        .format("parquet")
        .option("path", str(config.table_dir(table)))
        .option("checkpointLocation", str(config.checkpoint_dir(table)))
        .partitionBy(*partition_by)
        .outputMode("append")
        .trigger(processingTime=f"{int(config.trigger_s * 1000)} milliseconds")
        .start()
    )


def start_pipeline(spark: SparkSession, config: PipelineConfig) -> list[StreamingQuery]:
    """Start every streaming query of the pipeline; they run until stopped."""

    def readings() -> DataFrame:
        return read_log(spark, config.log_dir, "readings", config.query_id)

    aggregates = read_log(spark, config.log_dir, "aggregates", config.query_id)
    queries = [
        start_parquet_sink(
            with_date(readings(), "epoch_time"), config, "readings", ["query_id", "date"]
        ),
        start_parquet_sink(
            with_date(aggregates, "epoch_time"), config, "aggregates", ["query_id", "date"]
        ),
    ]
    averages = node_averages(
        readings(), positions_frame(spark, config.topology), config.window, config.watermark
    )
    queries.append(
        start_parquet_sink(
            with_date(averages, "window_start"), config, "node_averages", ["query_id", "date"]
        )
    )
    if config.join is not None:
        joined = window_join(readings(), readings(), config.join, config.watermark)
        queries.append(
            start_parquet_sink(
                with_date(joined, "l_time"), config, "window_join", ["query_id", "date"]
            )
        )
    return queries


# -- running -------------------------------------------------------------------------


def _end_offsets(progress: dict) -> tuple[int, ...]:
    ends = []
    for source in progress.get("sources", []):
        end = source.get("endOffset")
        if isinstance(end, str):
            end = json.loads(end)
        ends.append(int(end["offset"]) if end else 0)
    return tuple(ends)


class ProgressWatcher:
    """Turns the queries' progress reports into :class:`BatchProgress`, each once."""

    def __init__(self, queries: list[StreamingQuery]) -> None:
        self.queries = queries
        self._seen: dict[str, int] = {}

    def poll(self) -> list[BatchProgress]:
        batches = []
        for query in self.queries:
            for progress in query.recentProgress:
                name = progress.get("name") or str(query.id)
                if progress["batchId"] <= self._seen.get(name, -1):
                    continue
                self._seen[name] = progress["batchId"]
                batches.append(
                    BatchProgress(
                        query=name,
                        batch_id=progress["batchId"],
                        rows=progress["numInputRows"],
                        duration_ms=progress["durationMs"].get("triggerExecution", 0),
                        rows_per_s=progress.get("processedRowsPerSecond") or 0.0,
                        end_offsets=_end_offsets(progress),
                    )
                )
        return batches


def raise_if_failed(queries: list[StreamingQuery]) -> None:
    for query in queries:
        error = query.exception()
        if error is not None:
            # Chained, so the command boundary (spark/errors.py) sees Spark's own error.
            raise RuntimeError(f"streaming query {query.name} failed: {error}") from error


def caught_up(queries: list[StreamingQuery], log_end: int) -> bool:
    """Every query has committed a batch ending at ``log_end`` and has no batch running."""
    for query in queries:
        progress = query.lastProgress
        if progress is None or query.status["isTriggerActive"]:
            return False
        if any(end < log_end for end in _end_offsets(progress)):
            return False
    return True


def run_until(
    queries: list[StreamingQuery],
    log_dir: Path,
    *,
    duration_s: float | None = None,
    idle_s: float | None = None,
    on_batch: Callable[[BatchProgress], None] = lambda batch: None,
    poll_s: float = 0.5,
    stop: threading.Event | None = None,
) -> None:
    """Run until ``duration_s`` passed, or the log stayed unchanged for ``idle_s`` with
    every query caught up to its end, or ``stop`` is set (whichever comes first), then stop
    the queries. A signal sets ``stop`` rather than raising: an exception raised in the
    middle of a py4j call leaves its socket half used and py4j logs a traceback."""
    log = ResultLog(log_dir)
    watcher = ProgressWatcher(queries)
    started = time.monotonic()
    last_end, last_change = log.latest_offset() + 1, started
    try:
        while True:
            raise_if_failed(queries)
            for batch in watcher.poll():
                on_batch(batch)
            now = time.monotonic()
            end = log.latest_offset() + 1
            if end != last_end:
                last_end, last_change = end, now
            if duration_s is not None and now - started >= duration_s:
                return
            if idle_s is not None and now - last_change >= idle_s and caught_up(queries, end):
                return
            if stop is not None and stop.wait(poll_s):
                return
            if stop is None:
                time.sleep(poll_s)
    finally:
        for query in queries:
            query.stop()
        for batch in watcher.poll():
            on_batch(batch)
