"""The plain-PySpark baseline the Spark stages are compared with (bench/spark_ingest.py,
bench/spark_latency.py): the readings sink's columns, projected by hand from JSON lines
read with a schema, where motebase's source parses the result log itself."""

from __future__ import annotations

from typing import Any


def plain_readings(frame: Any, *lead: str) -> Any:
    """The readings columns of ``frame`` (``values`` flattened, times as timestamps), after
    the ``lead`` columns a stage keeps besides them (spark_latency's ``log_offset``)."""
    from pyspark.sql import functions as F

    return frame.select(
        *lead,
        "query_id",
        "epoch",
        "node_id",
        F.timestamp_seconds("epoch_time").alias("epoch_time"),
        F.timestamp_seconds("receive_time").alias("receive_time"),
        "values.*",
    )
