"""MintRoute beacon (AM 250): multihop header, then RoutePacket, wire format §4.1.

Only neighbours with ``receiveEst > 100`` are listed, as many as fit the packet. A motebase
mote adds a trailer after the entries, where MintRoute reads nothing: ``'m' 'b'``,
``deepest``, the deepest routing depth in its subtree (firmware/net/routing.h), from which
the root learns how deep the tree is, ``all_listed``: the entries are every neighbour
the sender hears, so a neighbour left out knows it is not heard, and ``generation``: the
root's beacon count as the sender's path told it, by which a node that lost its parent
tells a neighbour with news of the root from one that may still route through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, parse

RouteEntry = cs.Struct("id" / cs.Int16ul, "receiveEst" / cs.Int8ul)

RoutePacket = cs.Struct(
    "parent" / cs.Int16ul,
    "cost" / cs.Int16ul,
    "estEntries" / cs.Int8ul,
    "entries" / cs.Array(cs.this.estEntries, RouteEntry),
    "motebase"
    / cs.Optional(
        cs.Struct(
            "magic" / cs.Const(b"mb"),
            "deepest" / cs.Int8ul,
            "all_listed" / cs.Flag,
            "generation" / cs.Int16ul,
        )
    ),
)


def build_route_packet(msg: Mapping[str, Any]) -> bytes:
    """``estEntries`` defaults to ``len(entries)``."""
    full = dict(msg)
    full.setdefault("estEntries", len(full.get("entries", [])))
    full.setdefault("motebase", None)
    return build("RoutePacket", RoutePacket, full)


def parse_route_packet(data: bytes) -> dict[str, Any]:
    return parse("RoutePacket", RoutePacket, data)
