"""What every paper script shares: its points run through `mote sweep`'s machinery
(spark/sweep.py, one emulation a Spark task) on a Spark session of its own, or on the
running one where it is called from a session already started (a notebook, the tests)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def sweep_rows(points: Sequence[dict[str, Any]], master: str, name: str) -> list[dict[str, Any]]:
    """The points' rows, in point order. A session started here is stopped however the run
    ends; a running one is used, and left running."""
    from pyspark.sql import SparkSession

    from motebase.spark.session import build_session
    from motebase.spark.sweep import run_points

    running = SparkSession.getActiveSession()
    spark = running or build_session(master, app_name=f"motebase-{name}")
    try:
        return run_points(spark, points)
    finally:
        if running is None:
            spark.stop()
