"""Shared by the Spark tests: one SparkSession for the whole test session."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from motebase.spark.session import build_session


@pytest.fixture(scope="session")
def spark_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    # Started outside the checkout: Spark's Python workers start in the JVM's directory
    # and import from it first, and a clean checkout's motebase/ (no emulator built) would
    # shadow the installed one in the tasks that run emulations (the paper scripts').
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("spark-home"))
    try:
        session = build_session("local[2]", app_name="motebase-tests")
    finally:
        os.chdir(here)
    yield session
    session.stop()


def parquet_offsets(spark: SparkSession, path: Path) -> list[int]:
    """Every ``log_offset`` in a Parquet table as Spark reads it (through the sink's log)."""
    frame = spark.read.parquet(str(path))
    return sorted(row.log_offset for row in frame.select("log_offset").collect())


def run_mote(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``mote ARGS`` as a user runs it, in ``cwd`` -- not the checkout, where a stale
    egg-info would shadow the entry points; the caller checks the exit status."""
    return subprocess.run(
        [sys.executable, "-c", "from motebase.gateway.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )
