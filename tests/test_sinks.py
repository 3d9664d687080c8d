"""Sinks: JSON lines, CSV, the durable result log and the live table."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from motebase.gateway.assembly import (
    AggregateResult,
    Reading,
    RegisteredQuery,
    ResultAssembler,
    Row,
    TupleResult,
)
from motebase.gateway.plan import compile_query
from motebase.gateway.resultlog import ResultLog
from motebase.gateway.sinks import CsvSink, JsonLinesSink, LiveTableSink, ResultLogSink

START = 1_700_000_000.0


def tuple_rows() -> tuple[RegisteredQuery, list[Row]]:
    sql = "SELECT nodeid, light * 2 FROM sensors EPOCH DURATION 1000"
    query = RegisteredQuery(4, compile_query(sql), START, sql)
    asm = ResultAssembler()
    asm.register(query)
    rows = asm.add(TupleResult(4, 1, 3, {"nodeid": 3, "light": 21}), START + 1.5)
    rows += asm.add(TupleResult(4, 1, 5, {"nodeid": 5, "light": None}), START + 1.6)
    return query, rows


def aggregate_rows() -> tuple[RegisteredQuery, list[Row]]:
    sql = "SELECT MAX(light), AVG(temp) FROM sensors GROUP BY nodeid EPOCH DURATION 2000"
    query = RegisteredQuery(6, compile_query(sql), START, sql)
    asm = ResultAssembler()
    asm.register(query)
    asm.add(AggregateResult(6, 2, 0, 1, 0, bytes.fromhex("2c010300")), START + 4.2)
    asm.add(AggregateResult(6, 2, 0, 1, 1, bytes.fromhex("0a000400")), START + 4.3)
    return query, asm.flush()


def test_result_log_gets_the_query_record_then_readings(tmp_path: Path) -> None:
    query, rows = tuple_rows()
    sink = ResultLogSink(ResultLog(tmp_path / "log"))
    sink.start(query)
    sink.write(rows)
    sink.close()
    records = [r for _, r in ResultLog(tmp_path / "log").read()]
    assert records[0] == {
        "kind": "query",
        "query_id": 4,
        "sql": query.sql,
        "epoch_ms": 1000,
        "fields": [{"name": "nodeid", "type": 4}, {"name": "light", "type": 4}],
        "aggregates": [],
        "group_by": None,
        "start_time": START,
    }
    assert records[1:] == [
        {
            "kind": "reading",
            "query_id": 4,
            "epoch": 1,
            "node_id": 3,
            "epoch_time": START + 1.0,
            "receive_time": START + 1.5,
            "node_time": None,
            "values": {"nodeid": 3, "light": 21},
        },
        {
            "kind": "reading",
            "query_id": 4,
            "epoch": 1,
            "node_id": 5,
            "epoch_time": START + 1.0,
            "receive_time": START + 1.6,
            "node_time": None,
            "values": {"nodeid": 5, "light": None},
        },
    ]


def test_result_log_gets_one_record_per_aggregate(tmp_path: Path) -> None:
    query, rows = aggregate_rows()
    sink = ResultLogSink(ResultLog(tmp_path / "log"))
    sink.start(query)
    sink.write(rows)
    sink.close()
    records = [r for _, r in ResultLog(tmp_path / "log").read()]
    assert records[0]["group_by"] == "nodeid"
    assert records[0]["aggregates"] == [
        {"name": "MAX", "attribute": "light", "expr_idx": 0},
        {"name": "AVG", "attribute": "temp", "expr_idx": 1},
    ]
    common = {"kind": "aggregate", "query_id": 6, "epoch": 2, "group": 1}
    times = {"epoch_time": START + 4.0, "receive_time": START + 4.3, "node_time": None}
    assert records[1:] == [
        {**common, "aggregate": "MAX", "column": "MAX(light)", "attribute": "light",
         "value": 300, "partial": "2c010300", **times},
        {**common, "aggregate": "AVG", "column": "AVG(temp)", "attribute": "temp",
         "value": 2.5, "partial": "0a000400", **times},
    ]  # fmt: skip


def json_lines(tmp_path: Path, query: RegisteredQuery, rows: list[Row]) -> list[dict[str, Any]]:
    out = tmp_path / "r.jsonl"
    sink = JsonLinesSink(out)
    sink.start(query)
    sink.write(rows)
    sink.close()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_json_lines_carry_each_value_once(tmp_path: Path) -> None:
    # nodeid is in values; only the computed column is added.
    lines = json_lines(tmp_path, *tuple_rows())
    assert [(line["values"], line["columns"]) for line in lines] == [
        ({"nodeid": 3, "light": 21}, {"light * 2": 42}),
        ({"nodeid": 5, "light": None}, {"light * 2": None}),
    ]


def test_json_lines_of_plain_attributes_have_no_columns(tmp_path: Path) -> None:
    sql = "SELECT nodeid, light FROM sensors EPOCH DURATION 1000"
    query = RegisteredQuery(4, compile_query(sql), START, sql)
    asm = ResultAssembler()
    asm.register(query)
    rows = asm.add(TupleResult(4, 1, 3, {"nodeid": 3, "light": 21}), START + 1.5)
    [line] = json_lines(tmp_path, query, rows)
    assert line["values"] == {"nodeid": 3, "light": 21}
    assert "columns" not in line


def test_json_lines_of_aggregates_carry_each_value_once(tmp_path: Path) -> None:
    # Each aggregate in its own record's value; the GROUP BY key in group.
    lines = json_lines(tmp_path, *aggregate_rows())
    assert [(line["column"], line["value"], line["group"]) for line in lines] == [
        ("MAX(light)", 300, 1),
        ("AVG(temp)", 2.5, 1),
    ]
    assert all("columns" not in line for line in lines)


def test_json_lines_keep_a_computed_group_column(tmp_path: Path) -> None:
    sql = "SELECT temp / 10, MAX(light) * 2 FROM sensors GROUP BY temp EPOCH DURATION 2000"
    query = RegisteredQuery(6, compile_query(sql), START, sql)
    asm = ResultAssembler()
    asm.register(query)
    asm.add(AggregateResult(6, 2, 0, 40, 0, bytes.fromhex("2c010300")), START + 4.2)
    [line] = json_lines(tmp_path, query, asm.flush())
    assert (line["group"], line["value"]) == (40, 300)
    assert line["columns"] == {"temp / 10": 4, "MAX(light) * 2": 600}


def csv_table(tmp_path: Path, query: RegisteredQuery, rows: list[Row]) -> list[list[str]]:
    out = tmp_path / "r.csv"
    sink = CsvSink(out)
    sink.start(query)
    sink.write(rows)
    sink.close()
    return list(csv.reader(out.open()))


def test_csv_has_a_header_and_one_line_per_row(tmp_path: Path) -> None:
    query, rows = aggregate_rows()
    table = csv_table(tmp_path, query, rows)
    assert table[0] == [
        "query_id", "epoch", "group", "epoch_time", "receive_time", "node_time", "MAX(light)",
        "AVG(temp)",
    ]  # fmt: skip
    assert table[1] == ["6", "2", "1", str(START + 4.0), str(START + 4.3), "", "300", "2.5"]


def stamped_rows() -> tuple[RegisteredQuery, list[Row]]:
    """One tuple and one aggregate query's rows from stamped results (time-sync, ms)."""
    sql = "SELECT MAX(light), AVG(temp) FROM sensors EPOCH DURATION 2000"
    query = RegisteredQuery(6, compile_query(sql), START, sql)
    asm = ResultAssembler()
    asm.register(query)
    # The row's stamp is its records' latest, whichever order they came in.
    asm.add(AggregateResult(6, 2, 0, 0, 0, bytes.fromhex("2c010300"), 61_250), START + 4.2)
    asm.add(AggregateResult(6, 2, 0, 0, 1, bytes.fromhex("0a000400"), 61_190), START + 4.3)
    return query, asm.flush()


def test_an_aggregate_row_carries_its_latest_stamp(tmp_path: Path) -> None:
    query, rows = stamped_rows()
    assert [row.node_time for row in rows] == [61_250]
    assert [line["node_time"] for line in json_lines(tmp_path, query, rows)] == [61_250] * 2
    table = csv_table(tmp_path, query, rows)
    assert table[1] == ["6", "2", "0", str(START + 4.0), str(START + 4.3), "61250", "300", "2.5"]


def test_csv_carries_a_readings_stamp(tmp_path: Path) -> None:
    sql = "SELECT nodeid, light FROM sensors EPOCH DURATION 1000"
    query = RegisteredQuery(4, compile_query(sql), START, sql)
    asm = ResultAssembler()
    asm.register(query)
    rows = asm.add(TupleResult(4, 1, 3, {"nodeid": 3, "light": 21}, 16_667), START + 1.5)
    table = csv_table(tmp_path, query, rows)
    assert table[0][5] == "node_time"
    assert table[1] == ["4", "1", "3", str(START + 1.0), str(START + 1.5), "16667", "3", "21"]


def test_csv_writes_null_as_empty(tmp_path: Path) -> None:
    query, rows = tuple_rows()
    table = csv_table(tmp_path, query, rows)
    assert table[0][2] == "node_id"
    assert table[2][-2:] == ["5", ""]


def test_live_table_shows_the_rows() -> None:
    query, rows = aggregate_rows()
    buffer = io.StringIO()
    sink = LiveTableSink(Console(file=buffer, width=120), stats=lambda: ResultAssembler().stats)
    sink.start(query)
    sink.write(rows)
    sink.close()
    text = buffer.getvalue()
    assert "MAX(light)" in text
    assert "AVG(temp)" in text
    assert "2.500" in text
    assert "300" in text


def reading(epoch: int, node: int) -> Reading:
    values: dict[str, int | None] = {"nodeid": node, "light": 100 * epoch + node}
    return Reading(4, epoch, node, START + epoch, START + epoch + 0.5, values, dict(values))


def table_keys(text: str) -> list[tuple[int, int]]:
    """(epoch, node) of each body line of a rendered table (its first two cells)."""
    keys = []
    for line in text.splitlines():
        cells = line.strip("│┃ ").replace("│", " ").split()
        if len(cells) == 4 and all(cell.isdigit() for cell in cells):
            keys.append((int(cells[0]), int(cells[1])))
    return keys


def test_live_table_is_sorted_by_epoch_and_node() -> None:
    sql = "SELECT nodeid, light FROM sensors EPOCH DURATION 1000"
    query = RegisteredQuery(4, compile_query(sql), START, sql)
    buffer = io.StringIO()
    sink = LiveTableSink(Console(file=buffer, width=120), max_rows=4)
    sink.start(query)
    # Out of order within a batch and across batches (a late row of epoch 1).
    sink.write([reading(2, 5), reading(2, 3), reading(3, 1)])
    sink.write([reading(1, 9), reading(3, 0)])
    sink.close()
    last_frame = buffer.getvalue().split("query 4:")[-1]
    # The newest four by (epoch, node): epoch 1's late row fell off the top.
    assert table_keys(last_frame) == [(2, 3), (2, 5), (3, 0), (3, 1)]
