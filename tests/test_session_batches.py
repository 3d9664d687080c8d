"""The session's batch path (tuple runs decoded with numpy, readings assembled as columns)
makes exactly the rows, and counts exactly what, the packet-at-a-time path makes and counts.

The streams are random: tuples of two queries with NULL fields and fewer fields than the
plan, a query that aggregates (its tuples are mismatched), an unknown query, results
addressed to a node rather than the UART, DIRECTED_DATA packets, aggregate records,
garbage; epochs that repeat, go back, wrap past 65535 and jump by more than the
duplicate horizon and by more than a quarter of the epoch range; stamped and unstamped
results; delivered in random chunks.
"""

from __future__ import annotations

import io
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from motebase.gateway.assembly import RegisteredQuery, Row, expand_rows
from motebase.gateway.plan.compile import compile_query
from motebase.gateway.protocol.result import QrType, build_query_result
from motebase.gateway.protocol.tos import (
    DEFAULT_GROUP,
    UART_ADDR,
    AmType,
    build_mhop,
    build_tos_packet,
)
from motebase.gateway.resultlog import ResultLog
from motebase.gateway.session import (
    QuerySession,
    RowSink,
    SessionConfig,
    deliver,
    result_schema,
)
from motebase.gateway.sinks import JsonLinesSink, ResultLogSink

QUERIES = {
    1: "SELECT nodeid, light, temp FROM sensors SAMPLE PERIOD 1s",
    2: "SELECT light, temp + 1 FROM sensors SAMPLE PERIOD 2s",
    3: "SELECT COUNT(*) FROM sensors SAMPLE PERIOD 1s",
}
PLANS = {qid: compile_query(sql) for qid, sql in QUERIES.items()}
TYPES = {qid: result_schema(plan).field_types for qid, plan in PLANS.items()}


class Feed:
    """An endpoint that hands out the packets it is given, a chunk per read."""

    def __init__(self) -> None:
        self.chunks: list[list[bytes]] = []

    def read_packets(self, timeout: float) -> list[bytes]:
        return self.chunks.pop(0) if self.chunks else []

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        return True

    def close(self) -> None:
        pass


class OneByOne(QuerySession):
    """The session as it read packets before the batch path: each through _dispatch."""

    def _receive(self, timeout: float) -> list[Row]:  # type: ignore[override]
        rows: list[Row] = []
        for packet in self.endpoint.read_packets(timeout):
            rows.extend(self._dispatch(packet))
        return rows


def tuple_packet(rng: random.Random, qid: int, epoch: int, origin: int) -> bytes:
    types = TYPES.get(qid) or TYPES[1]
    count = len(types) if rng.random() < 0.9 else rng.randint(1, len(types))
    values = [None if rng.random() < 0.1 else rng.randint(0, 1023) for _ in range(count)]
    stamp = bytes(5) if rng.random() < 0.3 else rng.randbytes(5)
    result = build_query_result(
        {
            "qid": qid,
            "epoch": epoch & 0xFFFF,
            "qrType": QrType.NOT_AGG,
            "timeSyncData": stamp,
            "d": {"values": values},
        },
        types[:count],
    )
    am = AmType.QUERY_RESULT if rng.random() < 0.97 else AmType.DIRECTED_DATA
    addr = UART_ADDR if rng.random() < 0.97 else rng.randint(0, 50)
    payload = build_mhop(0, origin, epoch & 0xFF, 1, result)
    return build_tos_packet(addr, am, DEFAULT_GROUP, payload)


def record_packet(rng: random.Random, epoch: int, origin: int) -> bytes:
    result = build_query_result(
        {
            "qid": 3,
            "epoch": epoch & 0xFFFF,
            "qrType": QrType.AGG_SINGLE_FIELD,
            "d": {"groupNo": 0, "exprIdx": 0, "state": rng.randint(1, 30).to_bytes(2, "little")},
        }
    )
    payload = build_mhop(0, origin, epoch & 0xFF, 1, result)
    return build_tos_packet(UART_ADDR, AmType.QUERY_RESULT, DEFAULT_GROUP, payload)


def next_epoch(rng: random.Random, epoch: int) -> int:
    roll = rng.random()
    if roll < 0.6:
        return epoch
    if roll < 0.9:
        return epoch + 1
    if roll < 0.95:
        return epoch - rng.randint(1, 8)  # late
    if roll < 0.98:
        return epoch + rng.randint(257, 2000)  # past the duplicate horizon
    return epoch + rng.randint(0x4000, 0x7000)  # a quarter of the range and more


def stream(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    epoch = rng.choice([1, 65_400, 30_000])
    packets = []
    for _ in range(count):
        epoch = max(0, next_epoch(rng, epoch))
        roll = rng.random()
        if packets and roll < 0.05:  # the root sent it again
            packets.append(packets[-1])
            continue
        origin = rng.randint(0, 30)
        if roll < 0.85:
            packets.append(tuple_packet(rng, rng.choice([1, 1, 1, 2]), epoch, origin))
        elif roll < 0.9:
            packets.append(tuple_packet(rng, rng.choice([3, 9]), epoch, origin))
        elif roll < 0.97:
            packets.append(record_packet(rng, epoch, origin))
        else:
            packets.append(rng.randbytes(rng.randint(0, 60)))
    return packets


def chunked(rng: random.Random, packets: list[bytes]) -> list[list[bytes]]:
    chunks, at = [], 0
    while at < len(packets):
        size = rng.choice([1, 2, 5, 50, 400])
        chunks.append(packets[at : at + size])
        at += size
    return chunks


def run(
    session: QuerySession,
    packets: list[bytes],
    seed: int,
    *,
    batches: bool,
    sinks: Sequence[RowSink] = (),
) -> list[Row]:
    """Every row of ``packets``, polled as batches (and delivered as batches to the
    sinks that take them) or as rows."""
    queries = [RegisteredQuery(qid, PLANS[qid], 0.0, sql) for qid, sql in QUERIES.items()]
    for query in queries:
        session.follow(query)
        for sink in sinks:
            sink.start(query)
    feed = session.endpoint
    assert isinstance(feed, Feed)
    feed.chunks = chunked(random.Random(seed), packets)
    rows: list[Row] = []
    while feed.chunks:
        if batches:
            items = session.poll_batches(0)
            deliver(sinks, items)
            rows.extend(expand_rows(items))
        else:
            polled = session.poll(0)
            for sink in sinks:
                sink.write(polled)
            rows.extend(polled)
    last = session.finish()
    for sink in sinks:
        sink.write(last)
        sink.close()
    return rows + last


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("promiscuous", [False, True])
def test_batches_make_the_rows_one_packet_at_a_time_makes(seed: int, promiscuous: bool) -> None:
    packets = stream(seed, 3000)
    config = SessionConfig(silence_epochs=0, promiscuous=promiscuous)
    one = OneByOne(Feed(), clock=lambda: 5.0, config=config)
    batch = QuerySession(Feed(), clock=lambda: 5.0, config=config)
    expected = run(one, packets, seed, batches=False)
    got = run(batch, packets, seed, batches=True)
    assert got == expected
    assert batch.counters == one.counters
    assert batch.assembler.stats == one.assembler.stats
    for qid in QUERIES:
        assert batch.assembler.epochs_seen(qid) == one.assembler.epochs_seen(qid)
    # The streams reach what they are meant to: many rows, duplicates, and each miss.
    assert len(expected) > 1000
    assert one.assembler.stats.duplicates > 150
    assert one.assembler.stats.unknown_query > 0
    assert one.counters.mismatched > 0
    assert one.counters.not_for_uart > 0 or promiscuous


def test_poll_expands_the_batches() -> None:
    """poll() gives Readings; poll_batches() gives the same readings as batches."""
    packets = stream(11, 500)
    config = SessionConfig(silence_epochs=0)
    plain = QuerySession(Feed(), clock=lambda: 5.0, config=config)
    batched = QuerySession(Feed(), clock=lambda: 5.0, config=config)
    assert run(plain, packets, 11, batches=False) == run(batched, packets, 11, batches=True)


@pytest.mark.parametrize("seed", [21, 22])
def test_sinks_write_batches_as_they_write_rows(seed: int, tmp_path: Path) -> None:
    """The JSON-lines file and the result log hold the same bytes whether the readings
    came as batches (a template per batch) or as rows (json.dumps per record): with
    stamps and without, NULL fields, a computed column (query 2), aggregates."""
    packets = stream(seed, 2000)
    config = SessionConfig(silence_epochs=0)
    outputs = {}
    for batches in (False, True):
        text = io.StringIO()
        log = ResultLog(tmp_path / f"log-{batches}")
        session = QuerySession(Feed(), clock=lambda: 5.25, config=config)
        sinks = [JsonLinesSink(text), ResultLogSink(log)]
        run(session, packets, seed, batches=batches, sinks=sinks)
        segments = sorted((tmp_path / f"log-{batches}").glob("*.seg"))
        outputs[batches] = (text.getvalue(), b"".join(p.read_bytes() for p in segments))
    assert outputs[True] == outputs[False]
    lines = outputs[True][0].splitlines()
    assert len(lines) > 1000
    assert any('"columns"' in line for line in lines)  # query 2's temp + 1
    assert any('"node_time": null' in line for line in lines)
    assert any('"temp": null' in line for line in lines)
