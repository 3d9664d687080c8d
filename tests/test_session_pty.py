"""Query sessions over a real pty against a scripted TinyDB root (tests/scripted_mote.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from polling import poll_until, poll_while
from scripted_mote import (
    ScriptedMote,
    TinyDBRoot,
    aggregate_packet,
    query_parts,
    tuple_packet,
)

from motebase.gateway.assembly import AggregateRow, Reading, Row
from motebase.gateway.encoder import encode_query
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import (
    AmType,
    build_query_request,
    build_tos_packet,
    parse_tos_packet,
)
from motebase.gateway.session import QuerySession, RunLimits, SendError, SessionConfig, run_query
from motebase.gateway.transport import open_link

FAST = SessionConfig(status_wait_s=0.3, stop_gap_s=0.01)
SELECT = "SELECT nodeid, light FROM sensors EPOCH DURATION 1024"
LIGHT_TYPES = [4, 4]  # nodeid, light: uint16 in the catalog


@pytest.fixture
def mote(tmp_path: Path) -> Iterator[ScriptedMote]:
    scripted = ScriptedMote(tmp_path, TinyDBRoot(running=[3, 7]))
    yield scripted
    scripted.close()


@pytest.fixture
def session(mote: ScriptedMote) -> Iterator[QuerySession]:
    s = QuerySession(open_link(str(mote.path)), config=FAST)
    yield s
    s.close()


def test_query_id_is_one_past_the_highest_running(session: QuerySession) -> None:
    assert session.running_query_ids() == {3, 7}
    assert session.allocate_query_id() == 8


def test_every_part_is_sent_as_the_java_tool_does(
    session: QuerySession, mote: ScriptedMote
) -> None:
    plan = compile_query("SELECT MAX(light) FROM sensors WHERE temp > 100 EPOCH DURATION 2048")
    query = session.start_query(plan, "sql")
    assert query.query_id == 8
    sent = mote.packets(AmType.QUERY)
    assert [parse_tos_packet(p)[1] for p in sent] == encode_query(plan, 8)
    for packet in sent:
        header, _ = parse_tos_packet(packet)
        assert header == {"addr": 0xFFFF, "type": 101, "group": 0x7D, "length": 40}
    # status request + every part went out as acknowledged (protocol 65) frames
    assert len(mote.acked_tokens) == 1 + len(sent)
    assert len(set(mote.acked_tokens)) == len(mote.acked_tokens)


def test_tuples_arrive_as_rows(session: QuerySession, mote: ScriptedMote) -> None:
    query = session.start_query(compile_query(SELECT), SELECT)
    qid = query.query_id
    mote.send(tuple_packet(qid, 1, 4, [4, 310], LIGHT_TYPES))
    mote.send(tuple_packet(qid, 1, 4, [4, 310], LIGHT_TYPES))  # retransmitted duplicate
    mote.send(tuple_packet(qid, 1, 9, [9, 280], LIGHT_TYPES, addr=9))  # not for the UART
    mote.send(tuple_packet(qid, 1, 5, [5, None], LIGHT_TYPES))
    mote.send(tuple_packet(qid + 1, 1, 5, [5, 1], LIGHT_TYPES))  # another query's result
    rows = poll_until(session, 2)
    rows += poll_while(session, lambda _: session.assembler.stats.unknown_query < 1)
    assert [(r.node_id, r.columns) for r in rows if isinstance(r, Reading)] == [
        (4, {"nodeid": 4, "light": 310}),
        (5, {"nodeid": 5, "light": None}),
    ]
    assert session.assembler.stats.duplicates == 1
    assert session.assembler.stats.unknown_query == 1
    assert session.counters.not_for_uart == 1


def test_aggregate_records_are_finalized_per_epoch(
    session: QuerySession, mote: ScriptedMote
) -> None:
    sql = "SELECT COUNT(light), AVG(light) FROM sensors EPOCH DURATION 1024"
    qid = session.start_query(compile_query(sql), sql).query_id
    mote.send(aggregate_packet(qid, 1, 0, 0, bytes.fromhex("18000000")))
    mote.send(aggregate_packet(qid, 1, 0, 1, bytes.fromhex("60090c00"), result_idx=1))
    mote.send(aggregate_packet(qid, 2, 0, 0, bytes.fromhex("19000000")))
    (row,) = poll_until(session, 1)
    assert isinstance(row, AggregateRow)
    assert (row.epoch, row.columns) == (1, {"COUNT(light)": 24, "AVG(light)": 200.0})
    rest = session.finish()
    assert [(r.epoch, r.columns) for r in rest] == [(2, {"COUNT(light)": 25, "AVG(light)": None})]


def test_stop_sends_del_five_times(session: QuerySession, mote: ScriptedMote) -> None:
    session.stop_query(12)
    stops = [parse_tos_packet(p)[1] for p in mote.wait_for(AmType.QUERY, 5)]
    # qid 12, fwdNode 0x007E, DEL, the common header's defaults, then u.ttl = 3
    expected = bytes.fromhex("0c 7e00 01 00 00 ff 00 6600 00 00 0000000000 0000 03") + bytes(20)
    assert stops == [expected] * 5


def test_rate_change(session: QuerySession, mote: ScriptedMote) -> None:
    session.set_rate(8, 4096)
    (packet,) = mote.wait_for(AmType.QUERY, 1)
    message = parse_tos_packet(packet)[1]
    assert message[0] == 8 and message[3] == 3  # qid, msgType RATE
    assert message[8:10] == (409).to_bytes(2, "little")  # 4096 ms in 10-ms units


def test_parts_a_node_asks_for_are_resent(session: QuerySession, mote: ScriptedMote) -> None:
    sql = "SELECT nodeid, light FROM sensors WHERE light > 10 EPOCH DURATION 1024 FOR 20"
    plan = compile_query(sql)
    qid = session.start_query(plan, sql).query_id
    parts = encode_query(plan, qid)
    # The requester holds field 0 and expression 0 (bits 0 and numFields + 0 = 2).
    request = build_query_request({"qid": qid, "qmsgMask": 0b101, "reqNode": 3, "fromNode": 0})
    mote.send(build_tos_packet(0x007E, AmType.QUERY_REQUEST, 0x7D, request))
    poll_until(session, 1, timeout=1.0)
    resent = [parse_tos_packet(p)[1] for p in mote.packets(AmType.QUERY)[len(parts) :]]
    field1 = parts[1]
    n_epochs = parts[-1]
    assert resent == [field1, n_epochs]
    assert session.counters.resent_parts == 2


def test_unacknowledged_query_is_an_error(tmp_path: Path) -> None:
    silent = ScriptedMote(tmp_path, TinyDBRoot(), ack=False)
    try:
        config = SessionConfig(send_attempts=1, status_wait_s=0.1)
        session = QuerySession(open_link(str(silent.path)), config=config)
        with pytest.raises(SendError, match="did not acknowledge"):
            session.start_query(compile_query(SELECT), SELECT, qid=1)
        session.close()
    finally:
        silent.close()


class ListSink:
    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.started = self.closed = False

    def start(self, query: object) -> None:
        self.started = True

    def write(self, rows: list[Row]) -> None:
        self.rows.extend(rows)

    def close(self) -> None:
        self.closed = True


def feed_epochs(mote: ScriptedMote, parts: int, epochs: range) -> threading.Thread:
    """Once the query's parts arrived, send a tuple of nodes 1 and 2 every epoch."""

    def run() -> None:
        qid = parse_tos_packet(mote.wait_for(AmType.QUERY, parts)[0])[1][0]
        for epoch in epochs:
            for node in (1, 2):
                mote.send(tuple_packet(qid, epoch, node, [node, 100 * epoch], LIGHT_TYPES))
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_run_query_stops_after_the_requested_epochs(
    session: QuerySession, mote: ScriptedMote
) -> None:
    feeder = feed_epochs(mote, 2, range(1, 30))
    sink = ListSink()
    query = run_query(session, compile_query(SELECT), SELECT, [sink], RunLimits(epochs=3))
    feeder.join(timeout=5)
    assert sink.started and sink.closed
    epochs = sorted({r.epoch for r in sink.rows})
    assert epochs[:4] == [1, 2, 3, 4]
    assert max(epochs) < 29  # stopped long before the feed ended
    dels = [p for p in query_parts(mote) if p["msgType"] == 1]
    assert len(dels) == 5 and {d["qid"] for d in dels} == {query.query_id}


def test_ids_heard_on_the_air_and_used_before_are_not_reused(tmp_path: Path) -> None:
    root = TinyDBRoot(running=[])

    def root_still_delivering_query_5(packet: bytes) -> list[bytes]:
        replies = root(packet)
        if replies:  # a status reply: a stopped query 5 is still draining through the tree
            replies.append(tuple_packet(5, 40, 2, [2, 1], LIGHT_TYPES))
        return replies

    mote = ScriptedMote(tmp_path, root_still_delivering_query_5)
    session = QuerySession(open_link(str(mote.path)), config=FAST)
    try:
        assert session.running_query_ids() == set()
        first = session.start_query(compile_query(SELECT), SELECT)
        assert first.query_id == 6
        session.stop_query(first.query_id)
        assert session.start_query(compile_query(SELECT), SELECT).query_id == 7
    finally:
        session.close()
        mote.close()


def test_results_of_the_wrong_kind_are_not_rows(session: QuerySession, mote: ScriptedMote) -> None:
    sql = "SELECT MAX(light) FROM sensors"
    qid = session.start_query(compile_query(sql), sql).query_id
    mote.send(tuple_packet(qid, 1, 4, [310], [4]))  # a tuple: an older query's
    mote.send(tuple_packet(qid, 1, 4, [4, 310], LIGHT_TYPES))  # ... with more fields than ours
    mote.send(aggregate_packet(qid, 1, 0, 0, bytes.fromhex("0900 0400")))
    rows = poll_while(session, lambda _: session.assembler.stats.aggregate_records < 1)
    rows += session.finish()
    assert [r.columns for r in rows] == [{"MAX(light)": 9}]
    assert session.counters.mismatched == 1
    assert session.counters.undecodable == 1
