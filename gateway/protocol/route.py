"""MintRoute beacon (AM 250): multihop header, then RoutePacket, wire format §4.1.

Only neighbours with ``receiveEst > 100`` are listed, as many as fit the packet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import construct as cs

from gateway.protocol.codec import build, parse

RouteEntry = cs.Struct("id" / cs.Int16ul, "receiveEst" / cs.Int8ul)

RoutePacket = cs.Struct(
    "parent" / cs.Int16ul,
    "cost" / cs.Int16ul,
    "estEntries" / cs.Int8ul,
    "entries" / cs.Array(cs.this.estEntries, RouteEntry),
)


def build_route_packet(msg: Mapping[str, Any]) -> bytes:
    """``estEntries`` defaults to ``len(entries)``."""
    full = dict(msg)
    full.setdefault("estEntries", len(full.get("entries", [])))
    return build("RoutePacket", RoutePacket, full)


def parse_route_packet(data: bytes) -> dict[str, Any]:
    return parse("RoutePacket", RoutePacket, data)
