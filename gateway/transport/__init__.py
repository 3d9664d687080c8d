"""Serial transports: ports, ptys, pyserial URLs and SerialForwarder TCP, behind one
:class:`Endpoint` interface that moves TOS packets."""

from __future__ import annotations

from gateway.transport.base import Endpoint, LinkDown, LinkStats
from gateway.transport.reconnect import ReconnectingEndpoint
from gateway.transport.serial_link import SerialEndpoint
from gateway.transport.sf_link import SFEndpoint
from gateway.transport.url import PLATFORM_BAUD, open_endpoint, open_link, platform_baud

__all__ = [
    "PLATFORM_BAUD",
    "Endpoint",
    "LinkDown",
    "LinkStats",
    "ReconnectingEndpoint",
    "SFEndpoint",
    "SerialEndpoint",
    "open_endpoint",
    "open_link",
    "platform_baud",
]
