"""A result log's queries and rows, as the pictures need them (no matplotlib here)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from motebase.gateway.resultlog import ResultLog


@dataclass(frozen=True)
class LoggedReading:
    epoch: int
    node: int
    values: Mapping[str, Any]


@dataclass(frozen=True)
class LoggedAggregate:
    epoch: int
    group: int
    column: str
    value: float | None


@dataclass
class LoggedQuery:
    """One query of a log: its ``query`` record and the rows logged for it."""

    query_id: int
    sql: str
    fields: list[str]
    aggregate: bool
    readings: list[LoggedReading] = field(default_factory=list)
    aggregates: list[LoggedAggregate] = field(default_factory=list)

    def epochs(self) -> list[int]:
        """Every epoch a row of the query was logged for, ascending."""
        rows: Iterable[LoggedReading | LoggedAggregate] = (
            self.aggregates if self.aggregate else self.readings
        )
        return sorted({row.epoch for row in rows})

    def nodes(self) -> list[int]:
        """Every node that delivered a reading, ascending."""
        return sorted({r.node for r in self.readings})

    def columns(self) -> list[str]:
        """The aggregate columns, in the order they first appear."""
        return list(dict.fromkeys(a.column for a in self.aggregates))

    def latest_readings(self) -> dict[int, Mapping[str, Any]]:
        """Each node's values from the latest epoch it delivered."""
        latest: dict[int, LoggedReading] = {}
        for reading in self.readings:
            if reading.node not in latest or reading.epoch >= latest[reading.node].epoch:
                latest[reading.node] = reading
        return {node: reading.values for node, reading in latest.items()}


def read_log(directory: str | os.PathLike[str]) -> dict[int, LoggedQuery]:
    """Every query of a result log directory with its rows, by query id. A query id the
    gateway reused starts over at its new ``query`` record: the rows are the last run's.
    LogCorruptError at damage (`mote log verify` and `repair` deal with it)."""
    queries: dict[int, LoggedQuery] = {}
    for _, record in ResultLog(Path(directory)).read():
        kind, qid = record.get("kind"), record.get("query_id")
        if not isinstance(qid, int):
            continue  # a record of no query: nothing to draw
        if kind == "query":
            queries[qid] = LoggedQuery(
                qid,
                str(record.get("sql", "")),
                [f["name"] for f in record.get("fields", [])],
                bool(record.get("aggregates")),
            )
        elif qid in queries and kind == "reading":
            queries[qid].readings.append(
                LoggedReading(record["epoch"], record["node_id"], record["values"])
            )
        elif qid in queries and kind == "aggregate":
            queries[qid].aggregates.append(
                LoggedAggregate(
                    record["epoch"], record["group"], record["column"], record.get("value")
                )
            )
    return queries
