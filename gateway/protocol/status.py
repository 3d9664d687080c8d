"""StatusMessage (AM 106, 10 bytes), wire format §15.

The PC sends ``fromBase`` != 0; a node answers with ``fromBase`` = 0 and up to 8 running
query ids in ``queries`` (``numQueries`` of them valid).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, parse

MAX_STATUS_QUERIES = 8

StatusMessage = cs.Struct(
    "fromBase" / cs.Int8ul,
    "numQueries" / cs.Int8ul,
    "queries" / cs.Array(MAX_STATUS_QUERIES, cs.Int8ul),
)
STATUS_LEN = StatusMessage.sizeof()


def build_status(msg: Mapping[str, Any]) -> bytes:
    """``queries`` may be shorter than 8; it is zero-padded."""
    queries = list(msg.get("queries", []))
    full = {**msg, "queries": queries + [0] * (MAX_STATUS_QUERIES - len(queries))}
    full.setdefault("numQueries", len(queries))
    return build("StatusMessage", StatusMessage, full)


def parse_status(data: bytes) -> dict[str, Any]:
    return parse("StatusMessage", StatusMessage, data)
