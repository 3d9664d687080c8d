"""A small summary of the pipeline's Parquet output, computed by Spark from the files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

PIPELINE_TABLES = ("readings", "aggregates", "node_averages", "window_join")


@dataclass(frozen=True)
class TableSummary:
    table: str
    path: Path
    rows: int
    queries: tuple[int, ...]
    nodes: int | None  # distinct nodes, for the tables that have a node column
    first_event: str | None
    last_event: str | None


_NODE_COLUMN = {"readings": "node_id", "node_averages": "node_id", "window_join": "l_node"}
_TIME_COLUMN = {
    "readings": "epoch_time",
    "aggregates": "epoch_time",
    "node_averages": "window_start",
    "window_join": "l_time",
}


def summarize(spark: SparkSession, out_dir: Path) -> list[TableSummary]:
    """One summary per table that has committed output (a sink with no rows writes none)."""
    summaries = []
    for table in PIPELINE_TABLES:
        path = out_dir / table
        if not any(path.glob("**/*.parquet")):
            continue
        frame = spark.read.parquet(str(path))
        node_column = _NODE_COLUMN.get(table)
        time_column = _TIME_COLUMN[table]
        aggregates = [
            F.count(F.lit(1)).alias("rows"),
            F.sort_array(F.collect_set("query_id")).alias("queries"),
            F.min(time_column).cast("string").alias("first"),
            F.max(time_column).cast("string").alias("last"),
        ]
        if node_column:
            aggregates.append(F.countDistinct(node_column).alias("nodes"))
        row = frame.agg(*aggregates).collect()[0]
        summaries.append(
            TableSummary(
                table=table,
                path=path,
                rows=row["rows"],
                queries=tuple(row["queries"]),
                nodes=row["nodes"] if node_column else None,
                first_event=row["first"],
                last_event=row["last"],
            )
        )
    return summaries
