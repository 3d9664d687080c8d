"""``motebase``: a Spark data source (Python Data Source API) over the gateway's result log.

    spark.readStream.format("motebase").option("path", LOG_DIR)
         .option("table", "readings" | "aggregates").option("query_id", N).load()

Streaming offsets are log offsets (``{"offset": next offset to read}``); a micro-batch
is the half-open offset range between two of them. The log never changes a record once
it is complete, so a batch replayed after a restart from its checkpoint reads the same
rows: together with a checkpointed file sink, every record lands exactly once.
The same source reads in batch mode (``spark.read.format("motebase")``).

Options (names are case-insensitive, as Spark's are; spark/README.md has the table):
``path`` (the log directory, required; ``.load(LOG_DIR)`` sets it), ``table`` (default
``readings``), ``query_id`` (only that query's rows; for ``readings`` also only its
attributes, else the union of all queries' attributes in the log when the query starts),
``recordsPerPartition`` (the smallest offset range one Spark task reads, default 250000).
A missing or invalid option, or an unknown one, is a :class:`MotebaseOptionError` when
the source is created, that is at ``load()`` on the driver, before any task runs.
Readers run in Python workers: on a cluster the log directory must be on a filesystem
every executor sees, and motebase must be installed there.

A damaged log (see :mod:`motebase.gateway.resultlog`) fails the batch that needs the damaged
records, or the query's start if the schema or the log's end cannot be read, with the
log's own LogCorruptError: the file, the byte, the record offsets and the
``mote log repair`` to run. Offsets the repair declared lost are passed over.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import pairwise
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import BinaryType, StructType

from motebase.gateway.resultlog import LogCorruptError, Payloads, ResultLog, parse_payloads
from motebase.spark.schemas import (
    AGGREGATES_SCHEMA,
    READING_COLUMNS,
    TABLES,
    arrow_schema,
    readings_schema,
    selected_attributes,
)

Row = tuple[Any, ...]

#: A Python task costs a worker round trip, and a Parquet sink one file per task; below
#: this many records one task is cheaper. 250,000 rather than 50,000: a 10^6-row log
#: then costs ~20 % less CPU in local[2] (4 tasks rather than 16; issue 14).
DEFAULT_RECORDS_PER_PARTITION = 250_000


class LogBehindCheckpointError(Exception):
    """The log ends before offsets a streaming query has already read."""


class MotebaseOptionError(ValueError):
    """An option of the motebase source is missing, unknown or invalid."""


#: Every option the source reads, as spelled in the docs (Spark lowercases option names).
OPTIONS = ("path", "table", "query_id", "recordsPerPartition")


def _integer(options: Mapping[str, str], name: str, minimum: int) -> int | None:
    """Option ``name`` as an integer of at least ``minimum``; None when it is not given."""
    value = options.get(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise MotebaseOptionError(
            f"the motebase source's {name} must be an integer >= {minimum}, not {value!r}"
        )
    return number


@dataclass(frozen=True)
class SourceOptions:
    """The source's options, checked once where the source is created (on the driver):
    a mistake there is one clear error at ``load()``, not a failed task later."""

    path: str
    table: str = "readings"
    query_id: int | None = None
    records_per_partition: int = DEFAULT_RECORDS_PER_PARTITION

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> SourceOptions:
        known = {name.lower() for name in OPTIONS}
        unknown = sorted(name for name in options if name.lower() not in known)
        if unknown:
            # Spark ignores options a source does not read; a misspelt query_id would then
            # silently read every query.
            raise MotebaseOptionError(
                f"the motebase source has no option {', '.join(map(repr, unknown))}; "
                f"its options are {', '.join(OPTIONS)}"
            )
        path = options.get("path")
        if not path:
            raise MotebaseOptionError(
                "the motebase source needs the result log directory: "
                '.option("path", LOG_DIR) or .load(LOG_DIR)'
            )
        if not Path(path).is_dir():
            raise MotebaseOptionError(
                f"the motebase source's path {path} is not a directory: it must be the "
                "result log directory the gateway writes (mote query ... --log DIR)"
            )
        table = options.get("table", "readings")
        if table not in TABLES:
            raise MotebaseOptionError(
                f"the motebase source has no table {table!r}; its tables are {', '.join(TABLES)}"
            )
        records = _integer(options, "recordsPerPartition", 1)
        return cls(
            path=path,
            table=table,
            query_id=_integer(options, "query_id", 0),
            records_per_partition=DEFAULT_RECORDS_PER_PARTITION if records is None else records,
        )


class OffsetRange(InputPartition):
    """Log offsets ``start <= offset < end`` (a picklable task description)."""

    def __init__(self, start: int, end: int) -> None:
        super().__init__((start, end))
        self.start = start
        self.end = end


def _timestamp(unix_seconds: float) -> datetime:
    return datetime.fromtimestamp(unix_seconds, tz=timezone.utc)


def _hex_to_bytes(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


#: Readings per Arrow batch a task hands to Spark.
BATCH_ROWS = 8192

#: How the reading columns before the attributes appear in a reading record's JSON.
_JSON_FIELDS = {"query_id": pa.int32(), "epoch": pa.int32(), "node_id": pa.int32()}
_JSON_TIMES = ("epoch_time", "receive_time")


class _ReadingParser:
    """Reading records' JSON payloads straight into Arrow batches of ``schema``:
    pyarrow's JSON reader parses a whole chunk in C++, with no Python object per value
    (issue 14: the per-record ``json.loads`` and column building capped a reader at
    ~75,000 rows/s). A chunk pyarrow cannot take as the schema says is parsed the
    Python way, which reports what is wrong with it as it always did."""

    def __init__(self, schema: StructType, query_id: int | None) -> None:
        self.schema = schema
        self.arrow = arrow_schema(schema)
        self.query_id = query_id
        attributes = schema.fields[len(READING_COLUMNS.fields) :]
        # BYTES values are logged as hex text: read as strings, turned into bytes after.
        self.hex_columns = {f.name for f in attributes if isinstance(f.dataType, BinaryType)}
        attribute_names = {f.name for f in attributes}
        values = pa.struct(
            [
                pa.field(f.name, pa.string() if f.name in self.hex_columns else f.type)
                for f in self.arrow
                if f.name in attribute_names
            ]
        )
        json_schema = pa.schema(
            [
                ("kind", pa.string()),
                *_JSON_FIELDS.items(),
                *((name, pa.float64()) for name in _JSON_TIMES),
                # pyarrow cannot read into an empty struct; without attributes a
                # reading's values are not read.
                *([("values", values)] if attribute_names else []),
            ]
        )
        self.parse_options = pa_json.ParseOptions(
            explicit_schema=json_schema, unexpected_field_behavior="ignore"
        )

    def batches(self, chunk: Payloads) -> Iterator[pa.RecordBatch]:
        offsets, payloads = chunk
        if not payloads:
            return
        table = self._table(offsets, payloads)
        if table is None:
            table = _python_table(self.arrow, self._python_records(offsets, payloads))
        yield from table.to_batches(max_chunksize=BATCH_ROWS)

    def _table(self, offsets: list[int], payloads: list[bytes]) -> pa.Table | None:
        """The readings of one chunk, or None if pyarrow cannot parse it as the schema
        says (a value out of its column's range, a field of another type)."""
        blob = b"\n".join(payloads)
        read_options = pa_json.ReadOptions(use_threads=False, block_size=len(blob) + 1)
        try:
            parsed = pa_json.read_json(
                pa.BufferReader(blob), read_options=read_options, parse_options=self.parse_options
            )
        except pa.ArrowInvalid:
            return None
        parsed = parsed.append_column("log_offset", pa.array(offsets, pa.int64()))
        keep = pc.equal(parsed["kind"], "reading")
        if self.query_id is not None:
            keep = pc.and_(keep, pc.equal(parsed["query_id"], self.query_id))
        parsed = parsed.filter(pc.fill_null(keep, False))
        fixed = ["log_offset", *_JSON_FIELDS, *_JSON_TIMES]
        values = parsed["values"].combine_chunks() if "values" in parsed.column_names else None
        if any(parsed[name].null_count for name in fixed) or (values and values.null_count):
            return None  # a reading without one of its keys: the Python way says which
        columns = [parsed["log_offset"], *(parsed[name] for name in _JSON_FIELDS)]
        columns += [_timestamps(parsed[name]) for name in _JSON_TIMES]
        names = self.arrow.names[len(columns) :]
        for name, column in zip(names, values.flatten() if values else [], strict=True):
            if name in self.hex_columns:
                column = pa.array([_hex_to_bytes(v) for v in column.to_pylist()], pa.binary())
            columns.append(column)
        return pa.Table.from_arrays(columns, schema=self.arrow)

    def _python_records(
        self, offsets: list[int], payloads: list[bytes]
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        for offset, record in zip(offsets, parse_payloads(payloads), strict=True):
            if record.get("kind") != "reading":
                continue
            if self.query_id is None or record["query_id"] == self.query_id:
                yield offset, record


def _timestamps(seconds: pa.ChunkedArray) -> pa.ChunkedArray:
    """Unix seconds as microsecond timestamps, rounded as ``datetime.fromtimestamp``
    rounds them (the fraction, half to even), so both ways of reading give one value."""
    whole = pc.trunc(seconds)
    micros = pc.round(pc.multiply(pc.subtract(seconds, whole), 1e6), round_mode="half_to_even")
    total = pc.add(pc.multiply(pc.cast(whole, pa.int64()), 1_000_000), pc.cast(micros, pa.int64()))
    return total.cast(pa.timestamp("us", tz="UTC"))


def _python_table(arrow: pa.Schema, records: Iterator[tuple[int, dict[str, Any]]]) -> pa.Table:
    """Readings as an Arrow table of ``arrow``, built from parsed records in Python."""
    attribute_fields = list(arrow)[len(READING_COLUMNS.fields) :]
    chunk = list(records)
    values = [record["values"] for _, record in chunk]
    columns: list[list[Any]] = [
        [offset for offset, _ in chunk],
        [record["query_id"] for _, record in chunk],
        [record["epoch"] for _, record in chunk],
        [record["node_id"] for _, record in chunk],
        [_timestamp(record["epoch_time"]) for _, record in chunk],
        [_timestamp(record["receive_time"]) for _, record in chunk],
    ]
    for field in attribute_fields:
        column = [v.get(field.name) for v in values]
        columns.append([_hex_to_bytes(v) for v in column] if field.type == pa.binary() else column)
    arrays = [
        pa.array(column, type=field.type) for column, field in zip(columns, arrow, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=arrow)


def _aggregate_row(offset: int, record: dict[str, Any]) -> Row:
    value = record["value"]
    return (
        offset,
        record["query_id"],
        record["epoch"],
        record["group"],
        record["aggregate"],
        record["attribute"],
        None if value is None else float(value),
        _hex_to_bytes(record["partial"]),
        _timestamp(record["epoch_time"]),
        _timestamp(record["receive_time"]),
    )


class _LogScan:
    """What every reader shares: which records of the log become rows, and how."""

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.path = options.path
        self.table = options.table
        self.query_id = options.query_id
        self.records_per_partition = options.records_per_partition
        self.schema = schema

    def latest_end(self) -> int:
        """One past the last committed offset."""
        try:
            return ResultLog(self.path).latest_offset() + 1
        except LogCorruptError as exc:
            # The log's message is the whole story; the frames inside the reader are not.
            raise exc.with_traceback(None) from None

    def partitions(self, start: int, end: int) -> list[OffsetRange]:
        """``[start, end)`` in tasks of at least ``records_per_partition`` offsets, cut at
        segment boundaries so that no task rescans part of another's segment."""
        bounds = [start]
        for cut in ResultLog(self.path).segment_offsets():
            if cut < end and cut - bounds[-1] >= self.records_per_partition:
                bounds.append(cut)
        bounds.append(end)
        return [OffsetRange(a, b) for a, b in pairwise(bounds) if a < b]

    def rows(self, partition: OffsetRange) -> Iterator[Row] | Iterator[pa.RecordBatch]:
        """Readings as Arrow batches, aggregate records as rows (fewer: one per group)."""
        if partition.start >= partition.end:
            return iter(())
        if self.table == "readings":
            return self._reading_batches(partition)
        return (_aggregate_row(o, r) for o, r in self._records(partition, "aggregate"))

    def _reading_batches(self, partition: OffsetRange) -> Iterator[pa.RecordBatch]:
        parser = _ReadingParser(self.schema, self.query_id)
        chunks = ResultLog(self.path).read_payloads(partition.start, partition.end, "reading")
        try:
            for chunk in chunks:
                yield from parser.batches(chunk)
        except LogCorruptError as exc:
            raise exc.with_traceback(None) from None

    def _records(self, partition: OffsetRange, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
        records = ResultLog(self.path).read(partition.start, partition.end, kind)
        try:
            for offset, record in records:
                if self.query_id is None or record["query_id"] == self.query_id:
                    yield offset, record
        except LogCorruptError as exc:
            raise exc.with_traceback(None) from None


class MotebaseBatchReader(DataSourceReader):
    def __init__(self, scan: _LogScan) -> None:
        self.scan = scan

    def partitions(self) -> Sequence[InputPartition]:
        # Spark turns an empty list into one partition of None; an empty range says the
        # same in a form read() knows (the log has no records yet).
        return self.scan.partitions(0, self.scan.latest_end()) or [OffsetRange(0, 0)]

    def read(self, partition: InputPartition) -> Iterator[Row] | Iterator[pa.RecordBatch]:
        assert isinstance(partition, OffsetRange)
        return self.scan.rows(partition)


class MotebaseStreamReader(DataSourceStreamReader):
    def __init__(self, scan: _LogScan) -> None:
        self.scan = scan

    def initialOffset(self) -> dict[str, int]:
        return {"offset": 0}

    def latestOffset(self) -> dict[str, int]:
        return {"offset": self.scan.latest_end()}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        if end["offset"] < start["offset"]:
            # Offsets are never reused or taken back, so this log is not the one the
            # checkpoint read: reading on would skip or repeat rows without a word.
            raise LogBehindCheckpointError(
                f"the result log {self.scan.path} ends before offset {end['offset']}, but "
                f"this query already read up to offset {start['offset']}: the log directory "
                "was replaced; point the query at the log it read, or at a new checkpoint"
            )
        return self.scan.partitions(start["offset"], end["offset"])

    def read(self, partition: InputPartition) -> Iterator[Row] | Iterator[pa.RecordBatch]:
        assert isinstance(partition, OffsetRange)
        return self.scan.rows(partition)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to release: the log is the gateway's, and retention is not Spark's call."""


class MotebaseDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "motebase"

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        try:
            self.parsed = SourceOptions.parse(options)
        except MotebaseOptionError as exc:
            # The message is the whole story; where in the parser it was found is not.
            raise exc.with_traceback(None) from None

    def schema(self) -> StructType:
        if self.parsed.table == "aggregates":
            return AGGREGATES_SCHEMA
        try:
            queries = ResultLog(self.parsed.path).find("query")
        except LogCorruptError as exc:
            raise exc.with_traceback(None) from None
        return readings_schema(selected_attributes(queries, self.parsed.query_id))

    def reader(self, schema: StructType) -> DataSourceReader:
        return MotebaseBatchReader(_LogScan(self.parsed, schema))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return MotebaseStreamReader(_LogScan(self.parsed, schema))
