"""Sessions through SerialForwarder TCP: `mote sf`'s bridge in front of a pty mote."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from polling import poll_until
from scripted_mote import ScriptedMote, TinyDBRoot, aggregate_packet, query_parts, tuple_packet

from motebase.gateway.assembly import Reading
from motebase.gateway.encoder import encode_query
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import AmType
from motebase.gateway.session import QuerySession, SessionConfig
from motebase.gateway.sfserver import SerialForwarder
from motebase.gateway.transport import open_link

FAST = SessionConfig(status_wait_s=0.3, stop_gap_s=0.01)


@pytest.fixture
def mote(tmp_path: Path) -> Iterator[ScriptedMote]:
    scripted = ScriptedMote(tmp_path, TinyDBRoot(running=[2]))
    yield scripted
    scripted.close()


@pytest.fixture
def forwarder(mote: ScriptedMote) -> Iterator[SerialForwarder]:
    with SerialForwarder(open_link(str(mote.path)), host="127.0.0.1", port=0) as sf:
        yield sf


def sf_session(forwarder: SerialForwarder) -> QuerySession:
    return QuerySession(open_link(f"sf://127.0.0.1:{forwarder.port}"), config=FAST)


def wait_clients(forwarder: SerialForwarder, count: int) -> None:
    deadline = time.monotonic() + 5
    while forwarder.client_count != count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert forwarder.client_count == count


def test_full_session_through_serial_forwarder(
    mote: ScriptedMote, forwarder: SerialForwarder
) -> None:
    session = sf_session(forwarder)
    try:
        sql = "SELECT MAX(light) FROM sensors GROUP BY nodeid EPOCH DURATION 1024"
        plan = compile_query(sql)
        query = session.start_query(plan, sql)
        assert query.query_id == 3  # the root reported query 2 running
        parts = mote.wait_for(AmType.QUERY, len(encode_query(plan, 3)))
        assert [p[5:] for p in parts] == encode_query(plan, 3)
        assert len(mote.acked_tokens) == 1 + len(parts)  # the forwarder used protocol 65
        mote.send(aggregate_packet(3, 1, 4, 0, bytes.fromhex("5802 0400")))
        mote.send(aggregate_packet(3, 1, 5, 0, bytes.fromhex("2003 0500"), result_idx=1))
        mote.send(aggregate_packet(3, 2, 4, 0, bytes.fromhex("5902 0400")))
        rows = poll_until(session, 2)
        assert sorted((r.epoch, r.group, r.columns["MAX(light)"]) for r in rows) == [
            (1, 4, 600),
            (1, 5, 800),
        ]
        session.stop_query(3)
        mote.wait_for(AmType.QUERY, len(parts) + 5)  # SF writes are not acknowledged
        stops = [p for p in query_parts(mote) if p["msgType"] == 1]
        assert len(stops) == 5
    finally:
        session.close()


def test_clients_share_one_mote(mote: ScriptedMote, forwarder: SerialForwarder) -> None:
    first, second = sf_session(forwarder), sf_session(forwarder)
    try:
        wait_clients(forwarder, 2)
        sql = "SELECT nodeid, light FROM sensors"
        first.start_query(compile_query(sql), sql, qid=5)
        second.start_query(compile_query(sql), sql, qid=5)  # a second listener of query 5
        mote.send(tuple_packet(5, 1, 7, [7, 123], [4, 4]))
        for session in (first, second):
            (row,) = poll_until(session, 1)
            assert isinstance(row, Reading)
            assert (row.node_id, row.columns) == (7, {"nodeid": 7, "light": 123})
        assert forwarder.packets_to_clients >= 1
    finally:
        first.close()
        second.close()


def test_a_client_leaving_does_not_disturb_the_others(
    mote: ScriptedMote, forwarder: SerialForwarder
) -> None:
    leaving, staying = sf_session(forwarder), sf_session(forwarder)
    try:
        wait_clients(forwarder, 2)
        leaving.close()
        wait_clients(forwarder, 1)
        sql = "SELECT nodeid, light FROM sensors"
        staying.start_query(compile_query(sql), sql, qid=6)
        mote.send(tuple_packet(6, 1, 2, [2, 50], [4, 4]))
        assert len(poll_until(staying, 1)) == 1
    finally:
        staying.close()
