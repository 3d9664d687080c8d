"""The motebase source's options: a missing or invalid one is one clear error at
``load()``, on the driver, before any task runs (spark/source.py, SourceOptions)."""

from __future__ import annotations

from pathlib import Path

import pytest
import spark_fixtures
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from synthetic_log import write_log

pytestmark = pytest.mark.spark
spark_session = spark_fixtures.spark_session  # the one SparkSession of the test session

EPOCHS, NODES = 4, 3


def load_error(spark: SparkSession, options: dict[str, str], streaming: bool) -> str:
    """The line naming the source's error in what ``load()`` raised.

    Spark wraps an exception raised where a Python source is created in an
    AnalysisException whose message holds the Python traceback; its last line but the
    SQLSTATE is the exception itself."""
    reader = spark.readStream if streaming else spark.read
    with pytest.raises(AnalysisException) as raised:
        reader.format("motebase").options(**options).load()
    lines = str(raised.value).splitlines()
    assert lines[0].startswith("[PYTHON_DATA_SOURCE_ERROR] Failed to create Python data source")
    return next(
        line for line in lines if line.startswith("motebase.spark.source.MotebaseOptionError: ")
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "stream"])
def test_a_missing_path_is_refused_at_load(spark_session: SparkSession, streaming: bool) -> None:
    assert load_error(spark_session, {}, streaming) == (
        "motebase.spark.source.MotebaseOptionError: the motebase source needs the result log "
        'directory: .option("path", LOG_DIR) or .load(LOG_DIR)'
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "stream"])
def test_a_log_directory_that_does_not_exist_is_refused_at_load(
    spark_session: SparkSession, tmp_path: Path, streaming: bool
) -> None:
    # Before: load() succeeded and the batch failed in a task with a bare AssertionError.
    missing = tmp_path / "no-such-log"
    assert load_error(spark_session, {"path": str(missing)}, streaming) == (
        f"motebase.spark.source.MotebaseOptionError: the motebase source's path {missing} is not a "
        "directory: it must be the result log directory the gateway writes "
        "(mote query ... --log DIR)"
    )


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("table", "reading", "has no table 'reading'; its tables are readings, aggregates"),
        ("query_id", "three", "query_id must be an integer >= 0, not 'three'"),
        ("query_id", "-1", "query_id must be an integer >= 0, not '-1'"),
        ("recordsPerPartition", "0", "recordsPerPartition must be an integer >= 1, not '0'"),
        (
            "maxRecordsPerBatch",
            "10",
            "has no option 'maxrecordsperbatch'; its options are path, table, query_id, "
            "recordsPerPartition",
        ),
    ],
)
def test_an_invalid_or_unknown_option_is_refused_at_load(
    spark_session: SparkSession, tmp_path: Path, option: str, value: str, message: str
) -> None:
    write_log(tmp_path, range(EPOCHS), NODES)
    options = {"path": str(tmp_path), option: value}
    line = load_error(spark_session, options, streaming=False)
    assert line.startswith("motebase.spark.source.MotebaseOptionError: the motebase source")
    assert line.endswith(message)


def test_option_names_are_case_insensitive(spark_session: SparkSession, tmp_path: Path) -> None:
    write_log(tmp_path, range(EPOCHS), NODES)
    frame = (
        spark_session.read.format("motebase")
        .option("PATH", str(tmp_path))
        .option("Query_Id", "3")
        .option("RECORDSPERPARTITION", "1")
        .load()
    )
    assert frame.count() == EPOCHS * NODES


def test_a_log_directory_with_no_records_yet_reads_as_no_rows(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    # The gateway has not written yet; before, the batch failed with an AssertionError.
    assert spark_session.read.format("motebase").load(str(tmp_path)).count() == 0
