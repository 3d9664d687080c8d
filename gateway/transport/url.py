"""``open_endpoint``: one place that turns a port description into an endpoint.

Accepted forms:

* ``sf://host:port`` (or Java's ``sf@host:port``): a SerialForwarder.
* any pyserial URL: ``socket://host:port``, ``loop://``, ``rfc2217://host:port``, ...
* a device or pty path (``/dev/ttyUSB0``, ``/dev/pts/3``; Java's ``serial@PATH:BAUD`` too).

The baud rate comes from the platform (wire format §1) unless given.
"""

from __future__ import annotations

from collections.abc import Callable

import serial

from motebase.gateway.transport.base import Endpoint
from motebase.gateway.transport.reconnect import ReconnectingEndpoint
from motebase.gateway.transport.serial_link import SerialEndpoint
from motebase.gateway.transport.sf_link import SFEndpoint

PLATFORM_BAUD = {"mica2": 57600, "micaz": 57600, "mica": 19200, "mica2dot": 19200}


def platform_baud(platform: str) -> int:
    try:
        return PLATFORM_BAUD[platform.lower()]
    except KeyError:
        known = ", ".join(sorted(PLATFORM_BAUD))
        raise ValueError(f"unknown platform {platform!r} (known: {known})") from None


def _host_port(spec: str, url: str) -> tuple[str, int]:
    host, sep, port = spec.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"expected host:port in {url!r}")
    return host, int(port)


def is_sf_url(url: str) -> bool:
    """Whether ``url`` names a SerialForwarder, which carries packets, not serial bytes."""
    return url.startswith(("sf://", "sf@"))


def open_link(
    url: str,
    platform: str = "mica2",
    baud: int | None = None,
    tap: Callable[[bytes], None] | None = None,
) -> Endpoint:
    """Open ``url`` once; errors (no such device, connection refused) propagate as OSError.
    ``tap`` sees every byte read from a serial port (ValueError for a SerialForwarder)."""
    rate = baud if baud is not None else platform_baud(platform)
    if is_sf_url(url):
        if tap is not None:
            raise ValueError("a SerialForwarder carries packets, not the serial line's bytes")
        return SFEndpoint(*_host_port(url[5:] if url.startswith("sf://") else url[3:], url))
    if url.startswith("serial@"):
        path, sep, explicit = url[len("serial@") :].rpartition(":")
        if sep and explicit.isdigit():
            return SerialEndpoint(serial.Serial(path, int(explicit)), name=url, tap=tap)
        return SerialEndpoint(serial.Serial(url[len("serial@") :], rate), name=url, tap=tap)
    if "://" in url:
        return SerialEndpoint(serial.serial_for_url(url, baudrate=rate), name=url, tap=tap)
    return SerialEndpoint(serial.Serial(url, rate), name=url, tap=tap)


def open_endpoint(
    url: str,
    platform: str = "mica2",
    baud: int | None = None,
    *,
    reconnect: bool = False,
    on_drop: Callable[[BaseException], None] | None = None,
    tap: Callable[[bytes], None] | None = None,
) -> Endpoint:
    """Open ``url``; with ``reconnect`` the endpoint reopens it after every failure."""
    platform_baud(platform)  # reject an unknown platform before touching the port
    if not reconnect:
        return open_link(url, platform, baud, tap)
    return ReconnectingEndpoint(lambda: open_link(url, platform, baud, tap), on_drop=on_drop)
