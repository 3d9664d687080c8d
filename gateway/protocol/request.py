"""QueryRequestMessage (AM 104, 9 bytes): query sharing, wire format §6.5.

``qmsgMask`` bit i (< numFields) = field i held; bit numFields+j = expression j held;
bit numFields+numExprs = buffer part held.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, parse

QueryRequestMessage = cs.Struct(
    "qid" / cs.Int8ul,
    "qmsgMask" / cs.Int32ul,
    "reqNode" / cs.Int16ul,
    "fromNode" / cs.Int16ul,
)
QUERY_REQUEST_LEN = QueryRequestMessage.sizeof()


def build_query_request(msg: Mapping[str, Any]) -> bytes:
    return build("QueryRequestMessage", QueryRequestMessage, msg)


def parse_query_request(data: bytes) -> dict[str, Any]:
    return parse("QueryRequestMessage", QueryRequestMessage, data)
