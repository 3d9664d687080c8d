"""An emulated network as a :class:`~motebase.gateway.plot.topology.TopologyView` (`mote emulate
--plot`): its positions, its links' reception probabilities and the routing tree the
nodes' firmware holds now. Absent nodes (ids a positions file skips) are left out."""

from __future__ import annotations

from motebase.emu.network import NO_DEPTH, NO_PARENT, UART_ADDR, Network
from motebase.gateway.plot.topology import LinkView, NodeView, TopologyView


def topology_view(net: Network) -> TopologyView:
    absent = set(net.absent.tolist())
    alive = net.alive
    parent, depth = net.routing()
    nodes = [
        NodeView(
            net.mote_id(i),
            float(net.positions[i, 0]),
            float(net.positions[i, 1]),
            None if parent[i] in (NO_PARENT, UART_ADDR) else int(parent[i]),
            None if depth[i] == NO_DEPTH else int(depth[i]),
            silent=not alive[i],
        )
        for i in range(net.n)
        if i not in absent
    ]
    row, dst, prob = net.links.row, net.links.dst, net.links.prob
    links = [
        LinkView(net.mote_id(src), net.mote_id(int(dst[k])), float(prob[k]))
        for src in range(net.n)
        if src not in absent
        for k in range(int(row[src]), int(row[src + 1]))
        if int(dst[k]) not in absent
    ]
    c = net.config
    radio = (
        "lossless"
        if c.lossless
        else "link table"
        if c.link_table is not None
        else f"{c.link_model} links"
    )
    title = (
        f"{net.present} {c.platform} nodes, {radio}, seed {c.seed}: routing tree after "
        f"{net.now_ms / 1000:.0f} s"
    )
    return TopologyView(nodes, links, title)
