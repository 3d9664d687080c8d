"""The time-sync stamp of results (issue 13 §5): a motebase root stamps every result it
passes to the serial port with the network's logical time (firmware/core/txpath.c), and
assembled rows carry it as ``node_time``, tuple and aggregate rows alike (an aggregate row
the latest stamp of its records); a stamp left 0 is None."""

from __future__ import annotations

import itertools
import random

import pytest
from scripted_mote import tuple_packet

from motebase.emu.network import Network, NetworkConfig
from motebase.emu.virtual_link import SERIAL_BAUD, VirtualEndpoint
from motebase.gateway.assembly import AggregateRow, TupleResult
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import AmType, decode_packet
from motebase.gateway.protocol.codec import parse
from motebase.gateway.protocol.errors import DecodeError
from motebase.gateway.protocol.result import QrType, TimeSyncStamp, time_sync_ms
from motebase.gateway.session import QuerySession, SessionConfig, result_schema, wire_result

POLL_S = 0.01
#: The longest frame the root sends a result in: 7E, protocol, TOS header, multihop
#: header, 42-byte QueryResult, CRC, 7E, and some escapes.
LONGEST_FRAME_BYTES = 64


def test_a_stamp_is_the_low_32_bits_and_the_high_byte() -> None:
    assert time_sync_ms(bytes(5)) is None
    assert time_sync_ms(b"\x00" + (16_667).to_bytes(4, "little")) == 16_667
    assert time_sync_ms(b"\x01" + (5).to_bytes(4, "little")) == 2**32 + 5


def test_an_unstamped_result_has_no_node_time() -> None:
    # As the scripted TinyDB root of the session tests sends it: timeSyncData left 0.
    plan = compile_query("SELECT nodeid, light FROM sensors")
    packet = tuple_packet(1, 3, 7, [7, 300], [4, 4])
    decoded = decode_packet(packet, schemas={1: result_schema(plan)})
    result = wire_result(decoded.body, origin=7, plan=plan)
    assert isinstance(result, TupleResult)
    assert result.node_time is None


def test_rows_carry_the_roots_clock_when_it_sent_them() -> None:
    """The emulator's clock is the root's (its logical clock never adjusts: the root is
    the time source), so a row's node_time is the virtual millisecond the root handed the
    result to its UART, truncated to a whole ms. The session sees the packet at the end of
    the poll in which its last byte arrived: after the stamp, by at most the poll, the
    frame's time on the 57,600-baud line and the truncated fraction of a millisecond."""
    with Network(NetworkConfig(nodes=9, lossless=True)) as net:
        net.run_for(10_000)  # every node of the 3x3 grid has a parent after about 4 s
        endpoint = VirtualEndpoint(net)
        config = SessionConfig(silence_epochs=None)
        session = QuerySession(endpoint, clock=endpoint.clock, config=config)
        session.start_query(compile_query("SELECT nodeid, light FROM sensors SAMPLE PERIOD 1s"))
        rows = []
        while len(rows) < 40:
            rows.extend(session.poll(POLL_S))
    frame_ms = LONGEST_FRAME_BYTES * 10 / SERIAL_BAUD * 1000
    bound_ms = POLL_S * 1000 + frame_ms + 1
    for row in rows:
        assert row.node_time is not None
        assert 0 < row.receive_time * 1000 - row.node_time <= bound_ms


class RecordingEndpoint(VirtualEndpoint):
    """The root's UART, keeping every packet the root sent."""

    def __init__(self, net: Network) -> None:
        super().__init__(net)
        self.packets: list[bytes] = []

    def read_packets(self, timeout: float) -> list[bytes]:
        packets = super().read_packets(timeout)
        self.packets.extend(packets)
        return packets


def test_aggregate_rows_carry_the_latest_stamp_of_their_records() -> None:
    """On a lossless 3x3 grid every epoch's row is finalized from the root's two records
    (COUNT and MAX); its node_time is the later of the two stamps, read here from the
    packets the root sent, decoded apart from the session."""
    sql = "SELECT COUNT(*), MAX(light) FROM sensors SAMPLE PERIOD 1s"
    plan = compile_query(sql)
    with Network(NetworkConfig(nodes=9, lossless=True)) as net:
        net.run_for(10_000)
        endpoint = RecordingEndpoint(net)
        session = QuerySession(endpoint, clock=endpoint.clock, config=SessionConfig())
        query = session.start_query(plan, sql)
        rows: list[AggregateRow] = []
        while len(rows) < 8:
            rows.extend(row for row in session.poll(POLL_S) if isinstance(row, AggregateRow))
    stamps: dict[int, list[int | None]] = {}
    for packet in endpoint.packets:
        decoded = decode_packet(packet, schemas={query.query_id: result_schema(plan)})
        body = decoded.body
        if decoded.am == AmType.QUERY_RESULT and body["qrType"] == QrType.AGG_SINGLE_FIELD:
            stamps.setdefault(body["epoch"], []).append(time_sync_ms(body["timeSyncData"]))
    assert [row.aggregates[0].value for row in rows] == [9] * 8  # lossless: every node
    assert [len(stamps[row.epoch]) for row in rows] == [2] * 8
    assert [row.node_time for row in rows] == [max(stamps[row.epoch]) for row in rows]
    # The root sends each epoch's aggregates at the same point of the epoch: one period apart.
    times = [row.node_time for row in rows]
    assert None not in times
    assert [b - a for a, b in itertools.pairwise(times)] == [1_000] * 7  # type: ignore[operator]


def test_time_sync_ms_reads_what_the_construct_reads() -> None:
    """time_sync_ms unpacks a struct flattened from TimeSyncStamp (issue 14); its values
    are the construct's, and too short a field is still the construct's DecodeError."""
    rng = random.Random(14)
    for data in [bytes(5), b"\xff" * 5, *(rng.randbytes(5) for _ in range(500))]:
        stamp = parse("TimeSyncStamp", TimeSyncStamp, data)
        assert time_sync_ms(data) == ((stamp["timeHigh"] << 32) | stamp["timeLow"] or None)
    with pytest.raises(DecodeError):
        time_sync_ms(b"\x01\x02")
