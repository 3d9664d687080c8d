"""A dropped link is reported and reopened; rows decoded before the drop are kept. When
it is back the session asks the root which queries it runs: a query the root still runs
is left alone, one it lost (the basestation rebooted) is sent again under its id."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from polling import poll_while
from scripted_mote import (
    ScriptedMote,
    TinyDBRoot,
    aggregate_packet,
    query_parts,
    tuple_packet,
)

from motebase.gateway.assembly import Row
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import AmType
from motebase.gateway.session import QuerySession, SessionConfig
from motebase.gateway.sfserver import SerialForwarder
from motebase.gateway.transport import ReconnectingEndpoint, open_link

FAST = SessionConfig(status_wait_s=0.2, stop_gap_s=0.01)
SELECT = "SELECT nodeid, light FROM sensors EPOCH DURATION 1024"


class LinkEvents:
    def __init__(self) -> None:
        self.drops: list[BaseException] = []
        self.reconnected = threading.Event()

    def endpoint(self, url: str) -> ReconnectingEndpoint:
        return ReconnectingEndpoint(
            lambda: open_link(url),
            on_drop=self.drops.append,
            on_reconnect=self.reconnected.set,
            min_backoff=0.05,
            max_backoff=0.2,
        )


def poll_until_reconnected(session: QuerySession, events: LinkEvents) -> list[Row]:
    rows: list[Row] = []
    deadline = time.monotonic() + 10
    while not events.reconnected.is_set() and time.monotonic() < deadline:
        rows += session.poll(0.05)
    assert events.reconnected.is_set(), "the link was not reopened"
    return rows


def test_unplugged_pty_is_reopened_and_results_continue(tmp_path: Path) -> None:
    root = TinyDBRoot()
    mote = ScriptedMote(tmp_path, root)
    events = LinkEvents()
    notes: list[str] = []
    session = QuerySession(events.endpoint(str(mote.path)), config=FAST, notify=notes.append)
    try:
        qid = session.start_query(compile_query(SELECT), SELECT).query_id
        root.running = [qid]  # the motes keep running it across the outage
        parts_sent = len(query_parts(mote))
        for epoch in (1, 2):
            mote.send(tuple_packet(qid, epoch, 3, [3, epoch], [4, 4]))
        rows = poll_while(session, lambda got: len(got) < 2)

        mote.unplug()
        rows += poll_while(session, lambda _: not events.drops)  # the drop shows while polling
        assert len(events.drops) == 1
        mote.replug()
        rows += poll_until_reconnected(session, events)

        for epoch in (3, 4):
            mote.send(tuple_packet(qid, epoch, 3, [3, epoch], [4, 4]))
        rows += poll_while(session, lambda got: len(rows) + len(got) < 4)
        assert [(r.epoch, r.columns["light"]) for r in rows] == [(1, 1), (2, 2), (3, 3), (4, 4)]
        assert session.endpoint.stats.reconnects == 1  # type: ignore[attr-defined]
        # The root was asked after the reconnect, and reported the query: nothing re-sent.
        assert len(mote.packets(AmType.STATUS)) == 2  # the id allocation, the reconnect
        assert len(query_parts(mote)) == parts_sent
        assert session.assembler.stats.duplicates == 0
        assert notes == []
    finally:
        session.close()
        mote.close()


def test_open_aggregate_bucket_survives_a_drop(tmp_path: Path) -> None:
    mote = ScriptedMote(tmp_path, TinyDBRoot())
    events = LinkEvents()
    session = QuerySession(events.endpoint(str(mote.path)), config=FAST)
    try:
        sql = "SELECT MAX(light), MIN(light) FROM sensors"
        qid = session.start_query(compile_query(sql), sql).query_id
        mote.send(aggregate_packet(qid, 1, 0, 0, bytes.fromhex("6400 0100")))  # MAX only
        rows = poll_while(session, lambda _: session.assembler.stats.aggregate_records < 1)
        mote.unplug()
        rows += poll_while(session, lambda _: not events.drops)
        mote.replug()
        rows += poll_until_reconnected(session, events)
        mote.send(aggregate_packet(qid, 1, 0, 1, bytes.fromhex("0500 0200")))  # MIN of epoch 1
        mote.send(aggregate_packet(qid, 2, 0, 0, bytes.fromhex("6500 0100")))
        rows += poll_while(session, lambda got: len(rows) + len(got) < 1)
        assert [(r.epoch, r.columns) for r in rows] == [(1, {"MAX(light)": 100, "MIN(light)": 5})]
    finally:
        session.close()
        mote.close()


def test_serial_forwarder_client_reconnects_when_the_forwarder_restarts(
    tmp_path: Path,
) -> None:
    mote = ScriptedMote(tmp_path, TinyDBRoot())
    forwarder = SerialForwarder(open_link(str(mote.path)), host="127.0.0.1", port=0).start()
    port = forwarder.port
    events = LinkEvents()
    session = QuerySession(events.endpoint(f"sf://127.0.0.1:{port}"), config=FAST)
    try:
        qid = session.start_query(compile_query(SELECT), SELECT, qid=4).query_id
        mote.send(tuple_packet(qid, 1, 8, [8, 11], [4, 4]))
        rows = poll_while(session, lambda got: len(got) < 1)

        forwarder.close()  # SerialForwarder gone: also releases the pty
        rows += poll_while(session, lambda _: not events.drops)
        assert len(events.drops) == 1
        forwarder = SerialForwarder(open_link(str(mote.path)), host="127.0.0.1", port=port)
        forwarder.start()
        rows += poll_until_reconnected(session, events)
        deadline = time.monotonic() + 5
        while forwarder.client_count < 1 and time.monotonic() < deadline:
            time.sleep(0.01)

        mote.send(tuple_packet(qid, 2, 8, [8, 12], [4, 4]))
        rows += poll_while(session, lambda got: len(rows) + len(got) < 2)
        assert [(r.epoch, r.columns["light"]) for r in rows] == [(1, 11), (2, 12)]
    finally:
        session.close()
        forwarder.close()
        mote.close()


def test_query_the_rebooted_root_lost_is_resent_and_results_resume(tmp_path: Path) -> None:
    root = TinyDBRoot()
    mote = ScriptedMote(tmp_path, root)
    events = LinkEvents()
    notes: list[str] = []
    session = QuerySession(events.endpoint(str(mote.path)), config=FAST, notify=notes.append)
    try:
        qid = session.start_query(compile_query(SELECT), SELECT).query_id
        root.running = [qid]
        first_parts = query_parts(mote)
        for epoch in (1, 2):
            mote.send(tuple_packet(qid, epoch, 3, [3, epoch], [4, 4]))
        rows = poll_while(session, lambda got: len(got) < 2)

        mote.unplug()
        rows += poll_while(session, lambda _: not events.drops)
        root.running = []  # rebooted: it runs nothing
        mote.replug()
        rows += poll_until_reconnected(session, events)
        rows += poll_while(session, lambda _: len(query_parts(mote)) < 2 * len(first_parts))
        assert query_parts(mote) == first_parts + first_parts  # the same query, same id
        assert notes == [
            f"query {qid} re-sent: the basestation did not run it after the link came back"
        ]

        # The restarted query numbers its epochs from 1 again; the rows keep growing
        # epochs instead of passing for duplicates of epochs 1 and 2.
        for epoch in (1, 2):
            mote.send(tuple_packet(qid, epoch, 3, [3, 10 + epoch], [4, 4]))
        rows += poll_while(session, lambda got: len(rows) + len(got) < 4)
        assert [r.columns["light"] for r in rows] == [1, 2, 11, 12]
        epochs = [r.epoch for r in rows]
        assert epochs[:2] == [1, 2]
        assert epochs[2] > 2
        assert epochs[3] == epochs[2] + 1
        assert session.assembler.stats.duplicates == 0
        assert session.assembler.stats.late == 0
    finally:
        session.close()
        mote.close()


def test_a_silent_query_is_reported_once_per_silent_stretch(tmp_path: Path) -> None:
    root = TinyDBRoot()
    mote = ScriptedMote(tmp_path, root)
    notes: list[str] = []
    config = SessionConfig(
        status_wait_s=0.2, stop_gap_s=0.01, silence_epochs=2, first_epoch_delay_s=0.0
    )
    session = QuerySession(open_link(str(mote.path)), config=config, notify=notes.append)
    sql = "SELECT nodeid, light FROM sensors EPOCH DURATION 256"
    try:
        qid = session.start_query(compile_query(sql), sql).query_id
        silent = f"query {qid}: no results for 2 epochs"
        poll_while(session, lambda _: not notes)
        assert len(notes) == 1 and notes[0].startswith(silent), notes
        poll_while(session, lambda _: True, timeout=1.0)  # four more epochs: no repeat
        assert len(notes) == 1

        mote.send(tuple_packet(qid, 1, 3, [3, 1], [4, 4]))
        poll_while(session, lambda _: len(notes) < 2)
        assert notes[1] == f"query {qid}: results again"
        poll_while(session, lambda _: len(notes) < 3)  # a new silent stretch
        assert len(notes) == 3 and notes[2].startswith(silent), notes
    finally:
        session.close()
        mote.close()
