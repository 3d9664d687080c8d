"""Full sessions against the emulated network (real firmware core) through its serial
bridge: a pty and a SerialForwarder port, exactly as a real basestation is reached."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from emulated import LIGHT_BASE, emulated_bridge

from motebase.gateway.assembly import AggregateRow, Reading, RegisteredQuery, Row
from motebase.gateway.plan import compile_query
from motebase.gateway.session import QuerySession, RunLimits, SessionConfig, run_query
from motebase.gateway.transport import open_link

#: Real-time end-to-end runs: tox runs them on py311 only (tox.ini).
pytestmark = pytest.mark.slow

NODES = 9  # 3 x 3 grid, node 0 the root
CONFIG = SessionConfig(status_wait_s=0.5, stop_gap_s=0.05)


class ListSink:
    def __init__(self) -> None:
        self.rows: list[Row] = []

    def start(self, query: RegisteredQuery) -> None:
        pass

    def write(self, rows: list[Row]) -> None:
        self.rows.extend(rows)

    def close(self) -> None:
        pass


@pytest.fixture
def bridge() -> Iterator[object]:
    with emulated_bridge(NODES, seed=3, sf=True) as served:
        yield served


def run(
    url: str, sql: str, epochs: int, *, stop_at_end: bool = True
) -> tuple[QuerySession, RegisteredQuery, ListSink]:
    session = QuerySession(open_link(url), config=CONFIG)
    sink = ListSink()
    limits = RunLimits(epochs=epochs, duration_s=20)
    query = run_query(session, compile_query(sql), sql, [sink], limits, stop_at_end=stop_at_end)
    return session, query, sink


def test_tuples_through_the_pty(bridge: object) -> None:
    sql = "SELECT nodeid, light FROM sensors EPOCH DURATION 500"
    pty_path = bridge.pty_path  # type: ignore[attr-defined]
    session, query, sink = run(pty_path, sql, epochs=5, stop_at_end=False)
    try:
        readings = [r for r in sink.rows if isinstance(r, Reading)]
        assert readings, "no tuples arrived"
        for row in readings:
            assert row.query_id == query.query_id
            assert row.node_id == row.columns["nodeid"]
            assert 0 <= row.node_id < NODES  # the root reports its own tuple too
            assert row.columns["light"] == LIGHT_BASE + row.node_id
            assert row.epoch >= 1
        assert len({r.node_id for r in readings}) >= 3
        pairs = [(r.node_id, r.epoch) for r in readings]
        assert len(pairs) == len(set(pairs))  # one tuple per node and epoch
        assert query.query_id in session.running_query_ids(wait_s=0.5)
        session.stop_query(query.query_id)
        assert query.query_id not in session.running_query_ids(wait_s=0.5)
    finally:
        session.close()


def test_aggregates_through_serial_forwarder(bridge: object) -> None:
    sql = "SELECT COUNT(light), MAX(light) FROM sensors EPOCH DURATION 500"
    url = f"sf://127.0.0.1:{bridge.sf_port}"  # type: ignore[attr-defined]
    session, _, sink = run(url, sql, epochs=6)
    try:
        rows = [r for r in sink.rows if isinstance(r, AggregateRow)]
        assert len(rows) >= 6
        epochs = [r.epoch for r in rows]
        assert len(epochs) == len(set(epochs))  # one row per epoch
        for row in rows:
            count, highest = row.columns["COUNT(light)"], row.columns["MAX(light)"]
            assert count is not None and 1 <= count <= NODES
            assert highest is not None and LIGHT_BASE <= highest < LIGHT_BASE + NODES
            assert row.aggregates[0].partial is not None
    finally:
        session.close()
