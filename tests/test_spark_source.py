"""The motebase Spark source: schemas from the log, batch reads, exactly-once streaming."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
import spark_fixtures
from damaged_log import flip_bit, line_start
from pyspark.errors import AnalysisException, StreamingQueryException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, ShortType
from spark_fixtures import parquet_offsets
from synthetic_log import (
    aggregate_record,
    epoch_records,
    logged,
    query_record,
    reading_record,
    write_log,
)

from motebase.gateway.logrepair import repair_log
from motebase.gateway.protocol.result import WireType
from motebase.gateway.resultlog import ResultLog, segment_name
from motebase.spark.pipeline import PipelineConfig, read_log, start_parquet_sink, with_date
from motebase.spark.schemas import Attribute, arrow_schema, readings_schema
from motebase.spark.source import _python_table, _ReadingParser

pytestmark = pytest.mark.spark
spark_session = spark_fixtures.spark_session  # the one SparkSession of the test session

TESTS_DIR = Path(__file__).parent
NODES = 6
SECOND_QUERY_FIELDS = [{"name": "light", "type": 4}, {"name": "accel_x", "type": 3}]


def start_readings_sink(spark: SparkSession, log_dir: Path, out_dir: Path):
    config = PipelineConfig(log_dir=log_dir, out_dir=out_dir, trigger_s=0.5)
    readings = with_date(read_log(spark, log_dir, "readings"), "epoch_time")
    return start_parquet_sink(readings, config, "readings", ["query_id", "date"])


def test_readings_schema_is_the_union_of_the_logged_queries_fields(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    with ResultLog(tmp_path) as log:
        log.append_batch([query_record(), query_record(5, SECOND_QUERY_FIELDS)])
    frame = read_log(spark_session, tmp_path, "readings", streaming=False)
    types = {f.name: f.dataType for f in frame.schema.fields}
    assert frame.columns[6:] == ["nodeid", "light", "temp", "depth", "accel_x"]
    assert types["light"] == IntegerType()  # UINTTWO widened
    assert types["depth"] == ShortType()  # UINTONE widened
    assert types["accel_x"] == ShortType()  # INTTWO
    only_5 = read_log(spark_session, tmp_path, "readings", query_id=5, streaming=False)
    assert only_5.columns[6:] == ["light", "accel_x"]


def test_batch_read_returns_every_logged_reading_and_aggregate(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    with ResultLog(tmp_path, segment_bytes=4096) as log:
        log.append_batch([query_record()])
        for epoch in range(1, 41):
            log.append_batch([*epoch_records(epoch, NODES), aggregate_record(epoch)])
    assert len(list(tmp_path.glob("*.seg"))) > 3

    readings = (
        spark_session.read.format("motebase")
        .option("path", str(tmp_path))
        .option("recordsPerPartition", "50")
        .load()
    )
    assert readings.rdd.getNumPartitions() > 1  # tasks cut at segment boundaries
    got = {
        (r.log_offset, r.query_id, r.epoch, r.node_id, r.light, r.temp, r.depth, round(r.t, 3))
        for r in readings.withColumn("t", F.col("epoch_time").cast("double")).collect()
    }
    expected = {
        (
            o,
            r["query_id"],
            r["epoch"],
            r["node_id"],
            r["values"]["light"],
            r["values"]["temp"],
            r["values"]["depth"],
            round(r["epoch_time"], 3),
        )
        for o, r in logged(tmp_path, "reading").items()
    }
    assert got == expected

    aggregates = read_log(spark_session, tmp_path, "aggregates", streaming=False).collect()
    expected_aggregates = logged(tmp_path, "aggregate")
    assert len(aggregates) == len(expected_aggregates) == 40
    for row in aggregates:
        record = expected_aggregates[row.log_offset]
        assert (row.epoch, row.group, row.aggregate, row.attribute, row.value) == (
            record["epoch"],
            record["group"],
            record["aggregate"],
            record["attribute"],
            record["value"],
        )
        assert bytes(row.partial) == bytes.fromhex(record["partial"])


def test_streaming_into_parquet_delivers_every_reading_exactly_once(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 31), NODES)
    query = start_readings_sink(spark_session, log_dir, out_dir)
    try:
        query.processAllAvailable()
        with ResultLog(log_dir) as log:
            for epoch in range(31, 61):
                log.append_batch(epoch_records(epoch, NODES))
        query.processAllAvailable()
    finally:
        query.stop()
    assert parquet_offsets(spark_session, out_dir / "readings") == sorted(
        logged(log_dir, "reading")
    )
    partitions = {p.name for p in (out_dir / "readings").glob("query_id=*/date=*")}
    assert partitions == {"date=2023-11-14"}


def _wait_for_rows(query, deadline: float) -> None:
    while not any(p["numInputRows"] for p in query.recentProgress):
        assert time.monotonic() < deadline, f"{query.name} never read a row"
        time.sleep(0.1)


def test_query_stopped_mid_stream_resumes_from_its_checkpoint(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 3), NODES)
    stop_writing = threading.Event()

    def keep_writing() -> None:
        with ResultLog(log_dir) as log:
            epoch = 3
            while not stop_writing.is_set():
                log.append_batch(epoch_records(epoch, NODES))
                epoch += 1
                time.sleep(0.02)

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        deadline = time.monotonic() + 120
        first = start_readings_sink(spark_session, log_dir, out_dir)
        _wait_for_rows(first, deadline)
        first.stop()  # while the log keeps growing, possibly inside a batch
        stopped_at = ResultLog(log_dir).latest_offset()

        second = start_readings_sink(spark_session, log_dir, out_dir)
        _wait_for_rows(second, deadline)
        stop_writing.set()
        writer.join()
        second.processAllAvailable()
        second.stop()
    finally:
        stop_writing.set()
        writer.join()
    readings = logged(log_dir, "reading")
    assert max(readings) > stopped_at
    assert parquet_offsets(spark_session, out_dir / "readings") == sorted(readings)


# Appends epochs up to argv[2], resuming after the log's last complete record the way a
# restarted gateway does; acknowledges each fsync'd batch on stdout.
_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[3])
    from synthetic_log import epoch_records, query_record
    from motebase.gateway.resultlog import ResultLog

    NODES = int(sys.argv[4])
    log = ResultLog(sys.argv[1], segment_bytes=4096)
    last = log.open_writer()
    if last < 0:
        log.append_batch([query_record()])
        done = 0
    else:
        record = next(r for _, r in log.read(last))
        done = 0 if record["kind"] == "query" else (record["epoch"] - 1) * NODES + record["node_id"]
    todo = [r for e in range(1, int(sys.argv[2]) + 1) for r in epoch_records(e, NODES)][done:]
    for start in range(0, len(todo), 10 * NODES):
        print(log.append_batch(todo[start : start + 10 * NODES]), flush=True)
    """
)


def bytes_on_disk(directory: Path) -> int:
    return sum(segment.stat().st_size for segment in directory.glob("*.seg"))


def _start_writer(log_dir: Path, last_epoch: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(log_dir), str(last_epoch), str(TESTS_DIR), str(NODES)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_gateway_killed_mid_batch_then_restarted_spark_catches_up_exactly_once(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    writer = _start_writer(log_dir, last_epoch=100_000)
    assert writer.stdout is not None
    acked = int(writer.stdout.readline())  # the query record is in: the schema is known
    query = start_readings_sink(spark_session, log_dir, out_dir)
    try:
        while acked < 2000:
            acked = int(writer.stdout.readline())
        size = bytes_on_disk(log_dir)
        while bytes_on_disk(log_dir) == size:
            pass  # the next batch has started reaching the disk: kill inside it
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        killed_at = ResultLog(log_dir).latest_offset()

        restarted = _start_writer(log_dir, last_epoch=(killed_at // NODES) + 60)
        assert restarted.wait(timeout=120) == 0
        query.processAllAvailable()
    finally:
        query.stop()
    readings = logged(log_dir, "reading")
    assert list(readings) == list(range(1, len(readings) + 1))  # contiguous after the query
    keys = [(r["epoch"], r["node_id"]) for r in readings.values()]
    assert len(set(keys)) == len(keys)  # the restarted writer resumed, not repeated
    assert parquet_offsets(spark_session, out_dir / "readings") == sorted(readings)


# -- a damaged log --------------------------------------------------------------------------


def _flip_bit_in_record(log_dir: Path, offset: int, near_end: bool = False) -> tuple[Path, int]:
    """One bit flipped in record ``offset`` (20 bytes in, or 5 before its end): its segment
    and the byte its line starts at."""
    first = max(f for f in ResultLog(log_dir).segment_offsets() if f <= offset)
    segment = log_dir / segment_name(first)
    byte = line_start(segment, offset)
    if near_end:
        data = bytearray(segment.read_bytes())
        data[data.index(b"\n", byte) - 5] ^= 0x01
        segment.write_bytes(bytes(data))
    else:
        flip_bit(segment, offset)
    return segment, byte


def test_damage_fails_the_batch_with_the_logs_message_and_repair_lets_it_resume(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 11), NODES)
    query = start_readings_sink(spark_session, log_dir, out_dir)
    try:
        query.processAllAvailable()
        with ResultLog(log_dir) as log:
            for epoch in range(11, 21):
                log.append_batch(epoch_records(epoch, NODES))
        segment, byte = _flip_bit_in_record(log_dir, 100)  # committed, not read yet
        with pytest.raises(StreamingQueryException) as caught:
            query.processAllAvailable()
    finally:
        query.stop()
    message = str(caught.value)
    assert (
        f"LogCorruptError: damaged result log: {segment}, byte {byte}: corrupt record, "
        f"record offset 100; run `mote log repair {log_dir}`"
    ) in message
    assert "logscan.py" not in message and "resultlog.py" not in message  # no deep frames

    assert [d.offsets for d in repair_log(log_dir).declared_lost] == [range(100, 101)]
    query = start_readings_sink(spark_session, log_dir, out_dir)  # from its checkpoint
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    readings = logged(log_dir, "reading")
    assert sorted(readings) == [o for o in range(1, 121) if o != 100]
    assert parquet_offsets(spark_session, out_dir / "readings") == sorted(readings)


def test_lost_commit_marker_fails_the_query_with_the_logs_message(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 11), NODES)
    query = start_readings_sink(spark_session, log_dir, out_dir)
    try:
        query.processAllAvailable()
        (log_dir / "committed").unlink()
        with pytest.raises(StreamingQueryException) as caught:
            query.processAllAvailable()
    finally:
        query.stop()
    assert (
        f"LogCorruptError: damaged result log: {log_dir / 'committed'}: commit marker missing "
        f"or unreadable, record offsets 0-60; run `mote log repair {log_dir}`"
    ) in str(caught.value)


def test_schema_of_a_log_with_a_damaged_query_record_is_the_logs_message(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    # The schema comes from the query records alone (ResultLog.find): damage to one of
    # them is reported where the schema is asked for, in the log's words. (Damage that
    # leaves no sign of a query record fails the read instead, as the next test shows.)
    write_log(tmp_path, range(1, 11), NODES)
    segment, byte = _flip_bit_in_record(tmp_path, 0, near_end=True)
    with pytest.raises(AnalysisException) as caught:
        read_log(spark_session, tmp_path, "readings", streaming=False)
    message = str(caught.value)
    assert f"damaged result log: {segment}, byte {byte}: corrupt record, record offset 0" in (
        message
    )
    assert "schemas.py" not in message and "logscan.py" not in message


def test_a_batch_read_of_a_damaged_log_fails_with_the_logs_message(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    write_log(tmp_path, range(1, 11), NODES)
    segment, byte = _flip_bit_in_record(tmp_path, 30)
    frame = read_log(spark_session, tmp_path, "readings", streaming=False)
    with pytest.raises(Exception) as caught:  # Spark's own wrapper of the task's error
        frame.collect()
    message = str(caught.value)
    assert (
        f"LogCorruptError: damaged result log: {segment}, byte {byte}: corrupt record, "
        f"record offset 30; run `mote log repair {tmp_path}`"
    ) in message
    assert "logscan.py" not in message and "resultlog.py" not in message


def test_a_checkpoint_ahead_of_the_log_is_a_clear_error(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    write_log(log_dir, range(1, 11), NODES)
    query = start_readings_sink(spark_session, log_dir, out_dir)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    shutil.rmtree(log_dir)
    write_log(log_dir, range(1, 3), NODES)  # another, shorter log in its place
    query = start_readings_sink(spark_session, log_dir, out_dir)
    try:
        with pytest.raises(StreamingQueryException) as caught:
            query.processAllAvailable()
    finally:
        query.stop()
    assert (
        f"LogBehindCheckpointError: the result log {log_dir} ends before offset 13, but this "
        "query already read up to offset 61"
    ) in str(caught.value)


def _reading_row(offset: int, record: dict) -> tuple:
    values = record["values"]
    return (
        offset,
        record["query_id"],
        record["epoch"],
        record["node_id"],
        round(record["epoch_time"], 6),
        round(record["receive_time"], 6),
        values["nodeid"],
        values["light"],
        values["temp"],
        values["depth"],
    )


def _parquet_rows(spark: SparkSession, path: Path) -> list[tuple]:
    frame = spark.read.parquet(str(path)).select(
        "log_offset",
        "query_id",
        "epoch",
        "node_id",
        F.round(F.col("epoch_time").cast("double"), 6),
        F.round(F.col("receive_time").cast("double"), 6),
        "nodeid",
        "light",
        "temp",
        "depth",
    )
    return sorted(tuple(row) for row in frame.collect())


def test_parquet_equals_the_log_after_the_gateway_was_killed_and_restarted(
    spark_session: SparkSession, tmp_path: Path
) -> None:
    log_dir, out_dir = tmp_path / "log", tmp_path / "out"
    rng = random.Random(7)
    writer = _start_writer(log_dir, last_epoch=2000)
    assert writer.stdout is not None
    writer.stdout.readline()  # the query record is in: the schema is known
    query = start_readings_sink(spark_session, log_dir, out_dir)
    try:
        for _ in range(4):
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(writer.pid, signal.SIGKILL)
            writer.wait()
            # Spark commits what it read; a restarted writer that reused one of those
            # offsets would leave Parquet and the log disagreeing.
            query.processAllAvailable()
            writer = _start_writer(log_dir, last_epoch=2000)
            assert writer.stdout is not None
            writer.stdout.readline()
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        last_epoch = ResultLog(log_dir).latest_offset() // NODES + 10
        assert _start_writer(log_dir, last_epoch).wait(timeout=120) == 0
        query.processAllAvailable()
    finally:
        query.stop()
    readings = logged(log_dir, "reading")
    assert readings == {  # every reading once, in order: no restart repeated or skipped one
        (epoch - 1) * NODES + node: reading_record(epoch, node)
        for epoch in range(1, last_epoch + 1)
        for node in range(1, NODES + 1)
    }
    expected = sorted(_reading_row(offset, record) for offset, record in readings.items())
    assert _parquet_rows(spark_session, out_dir / "readings") == expected


def test_every_column_type_a_readings_schema_can_have_has_an_arrow_type() -> None:
    # Readings go to Spark as Arrow batches (source.py): a wire type without an Arrow type
    # would fail every read of a log that selects it.
    schema = readings_schema([Attribute(f"a{code}", code) for code in WireType])
    arrow = arrow_schema(schema)
    assert arrow.names == schema.names
    assert arrow.field("epoch_time").type == pa.timestamp("us", tz="UTC")


def _parsed_both_ways(
    attributes: list[Attribute], records: list[dict], query_id: int | None = None
) -> tuple[pa.Table, pa.Table]:
    """The readings of ``records`` through pyarrow's JSON reader and the Python way."""
    parser = _ReadingParser(readings_schema(attributes), query_id)
    offsets = list(range(100, 100 + len(records)))
    payloads = [json.dumps(r, separators=(",", ":")).encode() for r in records]
    arrow = parser._table(offsets, payloads)
    assert arrow is not None
    python = _python_table(parser.arrow, parser._python_records(offsets, payloads))
    return arrow, python


def test_readings_parsed_by_pyarrow_are_the_rows_the_python_way_gives() -> None:
    attributes = [
        Attribute("nodeid", WireType.UINTTWO),
        Attribute("light", WireType.INTTWO),
        Attribute("name", WireType.STRING),
        Attribute("blob", WireType.BYTES),
        Attribute("big", WireType.UINTFOUR),
    ]
    records = [
        {**reading_record(epoch, node), "query_id": 3 + node % 2}
        for epoch in range(1, 4)
        for node in range(1, 6)
    ]
    records[0]["values"] = {"nodeid": 1, "light": -7, "name": "a b", "blob": "00ff", "big": 1 << 31}
    records[1]["values"] = {}  # every attribute null
    records[2]["epoch_time"] = 1_700_000_000  # an integral time, logged as an int
    records[3]["receive_time"] = 1_700_000_000.0000005  # rounds half to even, as datetime
    records.insert(4, aggregate_record(1))
    records.insert(6, query_record())
    for query_id in (None, 3, 4):
        arrow, python = _parsed_both_ways(attributes, records, query_id)
        assert arrow.num_rows == python.num_rows > 0
        assert arrow.equals(python)


def test_a_reading_pyarrow_cannot_parse_fails_as_it_did_the_python_way() -> None:
    # A value outside its column's type: pyarrow refuses the chunk, and the Python way
    # raises what a read of it always raised.
    schema = readings_schema([Attribute("light", WireType.INTTWO)])
    parser = _ReadingParser(schema, None)
    record = {**reading_record(1, 1), "values": {"light": 1 << 20}}
    payloads = [json.dumps(record).encode()]
    assert parser._table([0], payloads) is None
    with pytest.raises(pa.ArrowInvalid):
        list(parser.batches(([0], payloads)))
