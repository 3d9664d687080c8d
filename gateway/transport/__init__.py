"""Serial transports: ports, ptys, pyserial URLs and SerialForwarder TCP, behind one
:class:`Endpoint` interface that moves TOS packets."""

from __future__ import annotations

from motebase.gateway.transport.base import Endpoint, LinkDown, LinkStats
from motebase.gateway.transport.reconnect import ReconnectingEndpoint
from motebase.gateway.transport.serial_link import SerialEndpoint
from motebase.gateway.transport.sf_link import SFEndpoint
from motebase.gateway.transport.url import PLATFORM_BAUD, open_endpoint, open_link, platform_baud

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
