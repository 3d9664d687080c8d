"""EventMsg (AM 105; only in builds with ``kSUPPORTS_EVENTS``) and the debug UartMsg (AM 1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, cstring, parse

EventMsg = cs.Struct(
    "nodeid" / cs.Int16sl,
    "fromBase" / cs.Int8ul,
    "data" / cs.GreedyBytes,  # event name and parameters, as raised
)

#: AM 1: up to 30 characters of debug text, NUL-terminated when shorter.
UartMsg = cs.Struct("text" / cstring())


def build_event(msg: Mapping[str, Any]) -> bytes:
    return build("EventMsg", EventMsg, {"data": b"", **msg})


def parse_event(data: bytes) -> dict[str, Any]:
    return parse("EventMsg", EventMsg, data)


def parse_uart_msg(data: bytes) -> dict[str, Any]:
    # The text fills all 30 bytes when it is that long: no terminator then.
    text = data.split(b"\0", 1)[0]
    return parse("UartMsg", UartMsg, text + b"\0")
