"""Several queries on one emulated network, through the serial bridge and the real gateway
session: a second query while the first runs, a query after a stop (reusing the stopped
id, as the gateway's status-based allocation does), and four queries at once. Every node
must deliver tuples for every query, so each query's parts reached the whole network
while other queries kept the nodes on their sleep schedule."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
from emulated import emulated_bridge

from motebase.gateway.assembly import Reading
from motebase.gateway.plan import compile_query
from motebase.gateway.session import QuerySession, SessionConfig
from motebase.gateway.transport import open_link

#: Real-time end-to-end runs: tox runs them on py311 only (tox.ini).
pytestmark = pytest.mark.slow

NODES = 9  # 3 x 3 grid, node 0 the root: two levels below it
CONFIG = SessionConfig(status_wait_s=0.5, stop_gap_s=0.05)
SPREAD_S = 15.0  # wall seconds (= virtual seconds, realtime) for a query to reach every node
TREE_MS = 30_000  # virtual ms of beacons before the gateway connects
SQL = "SELECT nodeid, light FROM sensors EPOCH DURATION 500"
SQL_TEMP = "SELECT nodeid, temp FROM sensors EPOCH DURATION 500"


@pytest.fixture
def pty_path() -> Iterator[str]:
    with emulated_bridge(NODES, tree_ms=TREE_MS) as served:  # the tree forms before any query
        assert served.pty_path is not None
        yield served.pty_path


@pytest.fixture
def session(pty_path: str) -> Iterator[QuerySession]:
    with connect(pty_path) as net_session:
        yield net_session


@contextlib.contextmanager
def connect(pty_path: str) -> Iterator[QuerySession]:
    """A gateway session on the bridge's pty, as one `mote query` process has."""
    net_session = QuerySession(open_link(pty_path), config=CONFIG)
    try:
        yield net_session
    finally:
        net_session.close()


def start(session: QuerySession, sql: str, qid: int | None = None) -> int:
    return session.start_query(compile_query(sql), sql, qid).query_id


def nodes_heard(session: QuerySession, qids: list[int]) -> dict[int, set[int]]:
    """Poll until every node has sent a tuple of every query in ``qids`` (or time runs out)."""
    heard: dict[int, set[int]] = {qid: set() for qid in qids}
    deadline = time.monotonic() + SPREAD_S
    everyone = set(range(NODES))  # the root reports its own tuple too
    while time.monotonic() < deadline and any(heard[q] != everyone for q in qids):
        for row in session.poll(0.2):
            if isinstance(row, Reading) and row.query_id in heard:
                assert row.node_id == row.columns["nodeid"]
                heard[row.query_id].add(row.node_id)
    return heard


def test_a_second_query_reaches_every_node_while_the_first_runs(
    session: QuerySession,
) -> None:
    first = start(session, SQL)
    assert nodes_heard(session, [first])[first] == set(range(NODES))
    second = start(session, SQL_TEMP)
    assert second != first  # the root reports the first one running
    heard = nodes_heard(session, [first, second])
    assert heard == {first: set(range(NODES)), second: set(range(NODES))}


def test_a_query_after_a_stop_reuses_the_id_and_reaches_every_node(pty_path: str) -> None:
    with connect(pty_path) as session:  # `mote query ... --epochs N`: runs, then stops
        first = start(session, SQL)
        assert nodes_heard(session, [first])[first] == set(range(NODES))
        session.stop_query(first)
    with connect(pty_path) as session:  # the next `mote query`
        # Nothing runs any more, so once the old results have ceased the gateway takes
        # the same id again (TinyDB's rule). Here it is reused at once (`--qid`), while
        # the motes still remember it as stopped and some still drain the old query.
        reused = start(session, SQL_TEMP, qid=first)
        assert nodes_heard(session, [reused])[reused] == set(range(NODES))
        session.stop_query(reused)
        fresh = start(session, SQL, qid=reused + 1)  # `--qid`: an id never used
        assert nodes_heard(session, [fresh])[fresh] == set(range(NODES))


def test_four_queries_at_once(session: QuerySession) -> None:
    qids = [start(session, SQL if k % 2 else SQL_TEMP) for k in range(4)]
    assert len(set(qids)) == 4
    heard = nodes_heard(session, qids)
    assert heard == {qid: set(range(NODES)) for qid in qids}
    assert set(qids) <= session.running_query_ids(wait_s=0.5)
