"""The time-sync stamp of results (issue 13 §5): a motebase root stamps every result it
passes to the serial port with the network's logical time (firmware/core/txpath.c), and
assembled rows carry it as ``node_time``; a stamp left 0 is None."""

from __future__ import annotations

from scripted_mote import tuple_packet

from motebase.emu.network import Network, NetworkConfig
from motebase.emu.virtual_link import SERIAL_BAUD, VirtualEndpoint
from motebase.gateway.assembly import TupleResult
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import decode_packet
from motebase.gateway.protocol.result import time_sync_ms
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
