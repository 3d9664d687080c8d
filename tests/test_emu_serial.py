"""End to end through the serial bridge only: framed AM 101 query bytes in, framed AM 240
results out over a real pty, a real SerialForwarder TCP socket, or the in-process channel;
decoded with motebase.gateway.protocol."""

from __future__ import annotations

import collections
import time

import numpy as np
import serial

from motebase.emu.bridge import SerialBridge
from motebase.emu.network import Network, NetworkConfig
from motebase.emu.queries import query_frames
from motebase.emu.sources import Constant, Trace
from motebase.gateway.protocol.aggregates import AggOp
from motebase.gateway.protocol.framing import Deframer, Protocol
from motebase.gateway.protocol.packet import AggregateSchema, ResultSchema, decode_packet
from motebase.gateway.protocol.sf import SFClient
from motebase.gateway.protocol.tos import AmType

UINT16 = 4
WARMUP_MS = 30_000  # routing tree forms before the query arrives
EPOCHS = 14
# The root starts epoch 1 a start delay (4 s) after the query is complete, so the query has
# reached every node when epoch 1 begins (firmware/core/schedule.h): every epoch is whole.
# The runs last EPOCHS seconds, so epochs 1..8 are complete with time to spare.
STEADY = range(1, 9)
N = 25


def _results(packets: list[bytes], n_fields: int, agg: AggOp | None = None) -> list[dict]:
    schema = ResultSchema(
        field_types=(UINT16,) * n_fields,
        aggregates={0: AggregateSchema(op=agg)} if agg is not None else {},
    )
    out = []
    for packet in packets:
        decoded = decode_packet(packet, schemas={1: schema})
        if decoded.am == AmType.QUERY_RESULT:
            out.append({**decoded.body, "origin": decoded.mhop["originaddr"]})
    return out


def _net(**kw) -> Network:
    net = Network(NetworkConfig(nodes=N, lossless=True, seed=3, **kw))
    net.run_for(WARMUP_MS)
    return net


def test_select_over_a_pty_yields_every_node_every_epoch_with_trace_values() -> None:
    # node i reads i*1000, i*1000+1, ... one sample per read. Default grid radio range: the
    # root (a corner) hears only its 3 nearest nodes, so the other 21 tuples of every epoch
    # are relayed, the depth-1 nodes carrying up to ~10 each -- more than one slot interval
    # (125 ms at 1 s) carries, and more than their 8-entry queues hold at once.
    rows = np.arange(N)[:, None] * 1000 + np.arange(200)[None, :]
    net = _net(sensors={"light": Trace(values=rows)})
    depth = net.routing().depth
    assert depth.max() >= 4 and int((depth == 1).sum()) == 3, depth
    # one more epoch: relayed tuples of the last epoch reach the root after it ends
    bridge = SerialBridge(net, pty=True, until_ms=net.now_ms + (EPOCHS + 2) * 1000)
    port = serial.Serial(bridge.pty_path, 57600, timeout=0.2)
    for frame in query_frames("SELECT nodeid, light SAMPLE PERIOD 1s"):
        port.write(frame)
    port.flush()
    bridge.start()
    data = bytearray()
    while not bridge.finished.is_set() or port.in_waiting:
        data += port.read(4096)
    bridge.stop()
    port.close()
    packets = [
        f.payload for f in Deframer().feed(bytes(data)) if f.protocol == Protocol.PACKET_NO_ACK
    ]
    results = [r for r in _results(packets, 2) if r["epoch"] in STEADY]
    by_epoch = collections.defaultdict(list)
    for r in results:
        node, light = r["d"]["values"]
        assert r["origin"] == node
        assert light // 1000 == node  # from this node's trace row
        by_epoch[r["epoch"]].append((node, light))
    assert sorted(by_epoch) == list(STEADY)
    for epoch, tuples in by_epoch.items():
        assert sorted(n for n, _ in tuples) == list(range(N)), epoch  # each exactly once
    # one sample per epoch: consecutive epochs read consecutive trace samples
    for node in range(N):
        series = sorted((e, light) for e, ts in by_epoch.items() for n, light in ts if n == node)
        offsets = {light % 1000 - e for e, light in series}
        assert len(offsets) == 1, (node, series)


def test_count_over_serialforwarder_is_the_node_count_every_epoch() -> None:
    net = _net()
    bridge = SerialBridge(net, sf_port=0, until_ms=net.now_ms + (EPOCHS + 1) * 1000)
    client = SFClient("127.0.0.1", bridge.sf_port)
    deadline = time.monotonic() + 5
    while bridge._sf.client_count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    for frame in query_frames("SELECT COUNT(nodeid) SAMPLE PERIOD 1s"):
        packet = Deframer().feed(frame)[0].payload
        client.write_packet(packet)  # SF carries bare packets; the bridge frames them
    time.sleep(0.2)
    bridge.start()
    packets = []
    while not bridge.finished.is_set():
        if (p := client.read_packet(timeout=0.1)) is not None:
            packets.append(p)
    while (p := client.read_packet(timeout=0.3)) is not None:
        packets.append(p)
    bridge.stop()
    client.close()
    counts = {}
    for r in _results(packets, 1, AggOp.CNT):
        if r["qrType"] == 3 and r["epoch"] in STEADY:
            counts[r["epoch"]] = _agg_value(r["d"])
    assert sorted(counts) == list(STEADY)
    assert set(counts.values()) == {N}, counts  # the root counts itself too


def _agg_value(record: dict) -> int:
    return int(record["state"]["value"])


def test_max_over_the_in_process_channel_is_the_true_maximum() -> None:
    # the far corner (depth 4) holds the maximum, rising one per read; others are constant
    rows = np.full((N, 200), 100, dtype=np.int16) + np.arange(N)[:, None].astype(np.int16)
    rows[N - 1] = 900 + np.arange(200)
    net = _net(sensors={"light": Trace(values=rows)})
    bridge = SerialBridge(net, capture=True, until_ms=net.now_ms + (EPOCHS + 1) * 1000)
    for frame in query_frames("SELECT MAX(light) SAMPLE PERIOD 1s"):
        bridge.write(frame)
    bridge.start()
    bridge.finished.wait(60)
    bridge.stop()
    packets = [
        f.payload for f in Deframer().feed(bridge.read()) if f.protocol == Protocol.PACKET_NO_ACK
    ]
    maxima = {
        r["epoch"]: _agg_value(r["d"]) for r in _results(packets, 1, AggOp.MAX) if r["qrType"] == 3
    }
    epochs = [e for e in sorted(maxima) if e in STEADY]
    assert epochs == list(STEADY)
    # the true maximum each epoch is node 24's sample of that epoch: 900 + read index
    assert len({maxima[e] - e for e in epochs}) == 1
    assert all(900 <= maxima[e] < 1100 for e in epochs)


def test_lossy_medium_degrades_but_keeps_running() -> None:
    lossless = _net(sensors={"light": Constant(value=7)})
    lossy = Network(NetworkConfig(nodes=N, seed=3, lossless=False, spacing=12.0, asymmetry=0.5))
    lossy.run_for(WARMUP_MS)
    delivered = []
    for net in (lossless, lossy):
        bridge = SerialBridge(net, capture=True, until_ms=net.now_ms + 20_000)
        for frame in query_frames("SELECT nodeid, light SAMPLE PERIOD 1s"):
            bridge.write(frame)
        bridge.start()
        bridge.finished.wait(60)
        bridge.stop()
        frames = Deframer().feed(bridge.read())
        delivered.append(len(_results([f.payload for f in frames], 2)))
    counters = lossy.counters()
    assert counters["lost"].sum() + counters["collided"].sum() > 0
    assert 0 < delivered[1] < delivered[0]
