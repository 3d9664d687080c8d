"""Where assembled rows go: a live terminal table, JSON lines, CSV, the durable result log.

Every sink gets ``start`` once with the query, then ``write`` with each batch of rows a
session poll produced, then ``close``. The record shapes written to the result log are
the contract with the Spark reader (spark/): a ``query`` record first, then ``reading``
and ``aggregate`` records; JSON lines use the same shapes, plus in ``columns`` the output
columns the record does not already carry (computed or renamed ones).
"""

from __future__ import annotations

import csv
import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

import numpy as np
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from motebase.gateway.assembly import (
    AggregateRow,
    Assembled,
    AssemblyStats,
    Reading,
    ReadingBatch,
    RegisteredQuery,
    ResultPlan,
    Row,
)
from motebase.gateway.console import end_live
from motebase.gateway.logfiles import record_payload
from motebase.gateway.resultlog import ResultLog

Record = dict[str, Any]


class Sink(Protocol):
    def start(self, query: RegisteredQuery) -> None: ...

    def write(self, rows: Sequence[Row]) -> None: ...

    def close(self) -> None: ...


def query_record(query: RegisteredQuery) -> Record:
    """The log's description of a query, written before any of its results. Field types
    are wire type codes (motebase.gateway.protocol.WireType), from which Spark derives its
    schema."""
    plan = query.plan
    return {
        "kind": "query",
        "query_id": query.query_id,
        "sql": query.sql,
        "epoch_ms": plan.epoch_ms,
        "fields": [{"name": f.name, "type": f.wire_type} for f in plan.fields],
        "aggregates": [
            {"name": a.name, "attribute": a.attribute, "expr_idx": a.expr_idx}
            for a in plan.aggregates
            if not a.hidden
        ],
        "group_by": plan.group_by,
        "start_time": query.start_time,
    }


def row_records(row: Row) -> list[Record]:
    """Log records of one row: one reading, or one record per aggregate of a group."""
    if isinstance(row, Reading):
        return [
            {
                "kind": "reading",
                "query_id": row.query_id,
                "epoch": row.epoch,
                "node_id": row.node_id,
                "epoch_time": row.epoch_time,
                "receive_time": row.receive_time,
                "node_time": row.node_time,
                "values": {k: _jsonable(v) for k, v in row.values.items()},
            }
        ]
    return [
        {
            "kind": "aggregate",
            "query_id": row.query_id,
            "epoch": row.epoch,
            "group": row.group,
            "aggregate": agg.name,
            "column": agg.column,
            "attribute": agg.attribute,
            "value": agg.value,
            "partial": agg.partial.hex() if agg.partial is not None else None,
            "epoch_time": row.epoch_time,
            "receive_time": row.receive_time,
            "node_time": row.node_time,
        }
        for agg in row.aggregates
    ]


class ReadingLines:
    """``json.dumps(row_records(reading)[0], ...)`` of each reading of a batch, spelled the
    same, from a ``%`` template and the batch's columns as JSON text: no record dict per
    reading. One template per query and set of fields, kept: a sink polled often gets
    small batches. tests/test_session_batches.py holds the lines to json.dumps's."""

    _SCALARS = ("epoch", "node_id", "epoch_time", "receive_time", "node_time")

    def __init__(self, *, sort_keys: bool, separators: tuple[str, str]) -> None:
        self._dumps = functools.partial(json.dumps, sort_keys=sort_keys, separators=separators)
        self._templates: dict[tuple[int, tuple[str, ...]], tuple[str, list[str]]] = {}

    def lines(self, batch: ReadingBatch) -> list[str]:
        names = tuple(batch.values)
        key = (batch.query_id, names)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = self._template(batch.query_id, names)
        text, order = template
        n = len(batch)
        texts = {
            "epoch": list(map(str, batch.epoch.tolist())),
            "node_id": list(map(str, batch.node_id.tolist())),
            "epoch_time": list(map(float.__repr__, batch.epoch_time.tolist())),
            "receive_time": [json.dumps(batch.receive_time)] * n,
            "node_time": [str(t) if t else "null" for t in batch.node_time.tolist()],
        }
        for name, column in batch.values.items():
            texts[f"value {name}"] = _json_column(column, n)
        return [text % row for row in zip(*(texts[hole] for hole in order), strict=True)]

    def _template(self, query_id: int, names: tuple[str, ...]) -> tuple[str, list[str]]:
        """The line with a ``%s`` per hole, and the holes in the order they come."""
        marks = {hole: f"\x00{hole}\x00" for hole in self._SCALARS}
        marks.update({f"value {name}": f"\x00value {name}\x00" for name in names})
        record = {
            "kind": "reading",
            "query_id": query_id,
            **{hole: marks[hole] for hole in self._SCALARS},
            "values": {name: marks[f"value {name}"] for name in names},
        }
        text = self._dumps(record).replace("%", "%%")
        order = sorted(marks, key=lambda hole: text.index(json.dumps(marks[hole])))
        for hole in order:
            text = text.replace(json.dumps(marks[hole]), "%s", 1)
        return text, order


def _json_column(column: np.ndarray | None, n: int) -> list[str]:
    """A column of raw values as JSON text: integers, null (NULL in every tuple), hex
    strings (BYTES, as :func:`_jsonable`)."""
    if column is None:
        return ["null"] * n
    if column.dtype.kind in "iu":
        return list(map(str, column.tolist()))
    return [json.dumps(_jsonable(value)) for value in column.tolist()]


def _jsonable(value: object) -> object:
    """BYTES attributes travel as hex, as the Spark reader expects."""
    return value.hex() if isinstance(value, (bytes, bytearray)) else value


class ResultLogSink:
    """Appends rows to the durable result log, one fsync'd batch per ``write``."""

    def __init__(self, log: ResultLog) -> None:
        self._log = log
        self._lines = ReadingLines(sort_keys=False, separators=(",", ":"))

    def start(self, query: RegisteredQuery) -> None:
        self._log.append_batch([query_record(query)])

    def write(self, rows: Sequence[Row]) -> None:
        self.write_batches(rows)

    def write_batches(self, items: Sequence[Assembled]) -> None:
        payloads: list[bytes] = []
        for item in items:
            if isinstance(item, ReadingBatch):
                payloads.extend(line.encode("ascii") for line in self._lines.lines(item))
            else:
                payloads.extend(record_payload(record) for record in row_records(item))
        if payloads:
            self._log.append_payloads(payloads)

    def close(self) -> None:
        self._log.close()


def jsonl_records(row: Row, plan: ResultPlan) -> list[Record]:
    """The JSON lines of one row of a query with ``plan``: its log records, each value
    once, with ``columns`` when the select list computes something (see
    :func:`computed_columns`)."""
    records = row_records(row)
    computed = computed_columns(row, plan)
    if computed:
        for record in records:
            record["columns"] = computed
    return records


def computed_columns(row: Row, plan: ResultPlan) -> Record:
    """The output columns that are not a plain reference to a value the records already
    carry: select-list arithmetic (``light * 2``, ``temp/10`` of GROUP BY temp/10). A
    plain attribute is in a reading's ``values``; an aggregate in its record's
    ``value``; the GROUP BY key in ``group``."""
    if isinstance(row, Reading):
        carried = set(row.values)
    else:
        carried = {agg.column for agg in row.aggregates}
        if plan.group_by is not None:
            carried.add(plan.group_by)
    references = plan.column_references()
    return {
        name: _jsonable(value)
        for name, value in row.columns.items()
        if references.get(name) not in carried
    }


def _computes(plan: ResultPlan, batch: ReadingBatch) -> bool:
    """Whether the batch's rows have :func:`computed_columns`."""
    references = plan.column_references()
    return any(references.get(name) not in batch.values for name in plan.output_columns)


class JsonLinesSink:
    """One JSON object per log record (:func:`jsonl_records`), to a file or a stream."""

    def __init__(self, target: Path | IO[str], *, fresh: bool = False) -> None:
        # A stream (stdout for --out -) is the caller's: flushed, never closed. A file is
        # appended to unless `fresh`: a query session restarted on the same --out goes on.
        self._owned = isinstance(target, Path)
        self._file: IO[str] = (
            target.open("w" if fresh else "a", encoding="utf-8")
            if isinstance(target, Path)
            else target
        )
        self._plans: dict[int, ResultPlan] = {}  # by query id: one sink may serve several
        self._lines = ReadingLines(sort_keys=True, separators=(", ", ": "))

    def start(self, query: RegisteredQuery) -> None:
        self._plans[query.query_id] = query.plan

    def write(self, rows: Sequence[Row]) -> None:
        self.write_batches(rows)

    def write_batches(self, items: Sequence[Assembled]) -> None:
        for item in items:
            plan = self._plans[item.query_id]
            if isinstance(item, ReadingBatch) and not _computes(plan, item):
                self._file.write("".join(line + "\n" for line in self._lines.lines(item)))
                continue
            for row in item.readings() if isinstance(item, ReadingBatch) else [item]:
                for record in jsonl_records(row, plan):
                    self._file.write(json.dumps(record, sort_keys=True) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._owned:
            self._file.close()
        else:
            self._file.flush()


#: ``--out -``: the rows go to stdout as JSON lines.
STDOUT = Path("-")


def file_sinks(out: Path | None, log: Path | None, *, fresh: bool = False) -> list[Sink]:
    """Sinks for ``--out`` (a .jsonl or .csv file, or ``-``: JSON lines on stdout) and
    ``--log`` (a result log directory), as every command that writes rows takes them.
    A .jsonl file is appended to unless ``fresh`` (a .csv is always written afresh: one
    header). ValueError for another suffix."""
    sinks: list[Sink] = []
    if log is not None:
        sinks.append(ResultLogSink(ResultLog(log)))
    if out == STDOUT:
        sinks.append(JsonLinesSink(sys.stdout))
    elif out is not None:
        if out.suffix == ".csv":
            sinks.append(CsvSink(out))
        elif out.suffix in (".jsonl", ".json", ".ndjson"):
            sinks.append(JsonLinesSink(out, fresh=fresh))
        else:
            raise ValueError(f"{out}: results are written as .jsonl or .csv")
    return sinks


def _row_key_columns(row: Row) -> list[Any]:
    node_or_group = row.node_id if isinstance(row, Reading) else row.group
    node_time = "" if row.node_time is None else row.node_time
    return [row.query_id, row.epoch, node_or_group, row.epoch_time, row.receive_time, node_time]


class CsvSink:
    """One CSV line per row: identity columns, then the query's output columns."""

    def __init__(self, path: Path) -> None:
        self._file: IO[str] = path.open("w", encoding="utf-8", newline="")
        self._writer = csv.writer(self._file)
        self._columns: list[str] = []

    def start(self, query: RegisteredQuery) -> None:
        self._columns = list(query.plan.output_columns)
        origin = "group" if query.plan.aggregates else "node_id"
        self._writer.writerow(
            ["query_id", "epoch", origin, "epoch_time", "receive_time", "node_time", *self._columns]
        )

    def write(self, rows: Sequence[Row]) -> None:
        for row in rows:
            values = [row.columns.get(c) for c in self._columns]
            self._writer.writerow(_row_key_columns(row) + ["" if v is None else v for v in values])
        self._file.flush()

    def close(self) -> None:
        self._file.close()


class LiveTableSink:
    """A rich table of the most recent rows, redrawn in place, with the session's counters."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        max_rows: int = 20,
        stats: Callable[[], AssemblyStats] | None = None,
    ) -> None:
        self._console = console or Console()  # the CLI passes motebase.gateway.console's
        self._max_rows = max_rows
        self._rows: list[Row] = []
        self._stats = stats
        self._columns: list[str] = []
        self._title = ""
        self._live: Live | None = None
        self._aggregating = False

    def start(self, query: RegisteredQuery) -> None:
        self._columns = list(query.plan.output_columns)
        self._aggregating = bool(query.plan.aggregates)
        self._title = f"query {query.query_id}: {query.sql}"
        self._live = Live(self._render(), console=self._console, auto_refresh=False)
        self._live.start()

    def write(self, rows: Sequence[Row]) -> None:
        # The newest rows by (epoch, node or group), not by arrival: a late row or a batch
        # mixing epochs still reads top to bottom in order.
        self._rows = sorted([*self._rows, *rows], key=_table_order)[-self._max_rows :]
        if self._live is not None:
            self._live.update(self._render(), refresh=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.update(self._render(), refresh=True)
            self._live.stop()
            end_live(self._console)
            self._live = None

    def _render(self) -> Group:
        table = Table(title=self._title, title_justify="left")
        table.add_column("epoch", justify="right")
        table.add_column("group" if self._aggregating else "node", justify="right")
        for name in self._columns:
            table.add_column(name, justify="right")
        for row in self._rows:
            key = row.group if isinstance(row, AggregateRow) else row.node_id
            cells = [_cell(row.columns.get(c)) for c in self._columns]
            table.add_row(str(row.epoch), str(key), *cells)
        parts: list[Table | Text] = [table]
        if self._stats is not None:
            s = self._stats()
            parts.append(
                Text(
                    f"tuples {s.tuples}  aggregate records {s.aggregate_records}  "
                    f"duplicates {s.duplicates}  late {s.late}  "
                    f"filtered by HAVING {s.filtered_by_having}",
                    style="dim",
                )
            )
        return Group(*parts)


def _table_order(row: Row) -> tuple[int, int]:
    return (row.epoch, row.group if isinstance(row, AggregateRow) else row.node_id)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
