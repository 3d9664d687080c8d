"""Synthetic result logs, as the gateway's session writes them (no Spark needed).

A ``query`` record, then ``reading`` records of several nodes per epoch (and
``aggregate`` records), with plausible Mica sensor values. Every value derives from the
epoch and node number, so a test or a writer subprocess can regenerate the same rows.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from motebase.gateway.resultlog import ResultLog

T0 = 1_700_000_000.0  # event time of epoch 0, unix seconds
EPOCH_S = 2.048
QUERY_ID = 3
FIELDS = [
    {"name": "nodeid", "type": 4},  # UINTTWO
    {"name": "light", "type": 4},  # UINTTWO
    {"name": "temp", "type": 4},  # UINTTWO
    {"name": "depth", "type": 2},  # UINTONE
]


def query_record(query_id: int = QUERY_ID, fields: list[dict[str, Any]] = FIELDS) -> dict:
    return {
        "kind": "query",
        "query_id": query_id,
        "sql": "SELECT " + ", ".join(f["name"] for f in fields) + " EPOCH DURATION 2048",
        "epoch_ms": 2048,
        "fields": fields,
        "aggregates": [],
        "group_by": None,
        "start_time": T0,
    }


def node_skew(node: int) -> float:
    """A node's sampling offset within its epoch (nodes do not sample in lockstep)."""
    return 0.05 * ((node * 7) % 11)


def reading_record(epoch: int, node: int, query_id: int = QUERY_ID) -> dict:
    epoch_time = T0 + epoch * EPOCH_S + node_skew(node)
    light = 300 + round(200 * math.sin(epoch / 9 + node)) + node
    temp = None if (epoch + node) % 13 == 0 else 480 + (epoch * node) % 40
    return {
        "kind": "reading",
        "query_id": query_id,
        "epoch": epoch,
        "node_id": node,
        "epoch_time": epoch_time,
        "receive_time": epoch_time + 0.2 + 0.01 * node,
        "values": {"nodeid": node, "light": light, "temp": temp, "depth": 1 + node // 4},
    }


def aggregate_record(epoch: int, query_id: int = QUERY_ID + 1) -> dict:
    total, count = 41 * epoch, 5
    return {
        "kind": "aggregate",
        "query_id": query_id,
        "epoch": epoch,
        "group": epoch % 3,
        "aggregate": "AVG",
        "attribute": "light",
        "value": total / count,
        "partial": (total.to_bytes(2, "little") + count.to_bytes(2, "little")).hex(),
        "epoch_time": T0 + epoch * EPOCH_S,
        "receive_time": T0 + epoch * EPOCH_S + 0.5,
    }


def epoch_records(epoch: int, nodes: int) -> list[dict]:
    return [reading_record(epoch, node) for node in range(1, nodes + 1)]


def write_log(directory: Path, epochs: range, nodes: int, with_query: bool = True) -> None:
    with ResultLog(directory, segment_bytes=8192) as log:
        if with_query:
            log.append_batch([query_record()])
        for epoch in epochs:
            log.append_batch(epoch_records(epoch, nodes))


def logged(directory: Path, kind: str) -> dict[int, dict]:
    return {o: r for o, r in ResultLog(directory).read() if r["kind"] == kind}
