"""Shared by the Spark tests: one SparkSession for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from motebase.spark.session import build_session


@pytest.fixture(scope="session")
def spark_session() -> Iterator[SparkSession]:
    session = build_session("local[2]", app_name="motebase-tests")
    yield session
    session.stop()


def parquet_offsets(spark: SparkSession, path: Path) -> list[int]:
    """Every ``log_offset`` in a Parquet table as Spark reads it (through the sink's log)."""
    frame = spark.read.parquet(str(path))
    return sorted(row.log_offset for row in frame.select("log_offset").collect())
