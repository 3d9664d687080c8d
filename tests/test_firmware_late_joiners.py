"""Nodes that join the routing tree after the query reached them, and epoch numbering.

A query injected right after boot reaches every node (the root broadcasts its parts while
nobody sleeps) before any node has a route. Such a node used to run its slot schedule at
the deepest slot and sleep through the root's interval, where the beacons that would give
it a route are sent: a 3x3 grid counted 4 of 9 nodes forever (the root and its three
neighbours, whose routeless broadcasts the root accepts).
"""

from __future__ import annotations

import collections

from motebase.emu import Network, NetworkConfig
from motebase.emu.queries import query_frames
from motebase.gateway.protocol import Deframer, decode_packet

COUNT = "SELECT COUNT(light) FROM sensors SAMPLE PERIOD 1s"
NO_PARENT = 0xFFFF


def counts_by_epoch(net: Network) -> dict[int, int]:
    counts: dict[int, int] = collections.defaultdict(int)
    for frame in Deframer().feed(net.uart_read()):
        packet = decode_packet(frame.payload)
        if packet.am == 240 and "state" in packet.body["d"]:
            counts[packet.body["epoch"]] += int.from_bytes(
                bytes(packet.body["d"]["state"])[:2], "little"
            )
    return dict(counts)


def test_count_injected_before_the_tree_forms_reaches_every_node() -> None:
    net = Network(NetworkConfig(nodes=9, topology="grid", seed=1, lossless=True))
    for frame in query_frames(COUNT, 1):  # no warm-up: nobody has a route yet
        net.uart_write(frame)
        net.run_for(100)
    net.run_for(25_000)
    assert NO_PARENT not in [int(p) for p in net.routing().parent[1:]]
    counts = counts_by_epoch(net)
    late = [counts.get(e) for e in range(10, max(counts))]
    assert late == [9] * len(late), counts
