"""What every paper script shares: its points run through `mote sweep`'s machinery
(spark/sweep.py, one emulation a Spark task) on a Spark session of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def sweep_rows(points: Sequence[dict[str, Any]], master: str, name: str) -> list[dict[str, Any]]:
    """The points' rows, in point order; the session is stopped however the run ends."""
    from motebase.spark.session import build_session
    from motebase.spark.sweep import run_points

    spark = build_session(master, app_name=f"motebase-{name}")
    try:
        return run_points(spark, points)
    finally:
        spark.stop()
