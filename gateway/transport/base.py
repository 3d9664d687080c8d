"""The endpoint interface and the reader-thread machinery the concrete endpoints share.

An endpoint moves serial packets (TOS_Msg header + data, no framing) to and from a
basestation. A daemon thread per endpoint reads the link all the time, so packets that
arrive while nobody asks are queued rather than lost, acknowledgements are answered and
collected while a writer waits, and several threads may read and write at once.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from motebase.gateway.protocol.framing import FramingStats

log = logging.getLogger(__name__)

#: How long the reader thread blocks per read; bounds close() latency.
POLL_INTERVAL = 0.1


class LinkDown(ConnectionError):
    """The link failed (port error, EOF, peer gone) or the endpoint was closed."""


@dataclass
class LinkStats:
    """Counters of one endpoint (or, for a reconnecting endpoint, of all its links)."""

    framing: FramingStats = field(default_factory=FramingStats)
    packets_in: int = 0
    packets_out: int = 0
    acks_sent: int = 0
    ack_timeouts: int = 0
    reconnects: int = 0

    def add(self, other: LinkStats) -> None:
        self.framing.add(other.framing)
        self.packets_in += other.packets_in
        self.packets_out += other.packets_out
        self.acks_sent += other.acks_sent
        self.ack_timeouts += other.ack_timeouts
        self.reconnects += other.reconnects


@runtime_checkable
class Endpoint(Protocol):
    def read_packets(self, timeout: float) -> list[bytes]:
        """Packets received so far, waiting up to ``timeout`` s for the first one.
        Raises :class:`LinkDown` once the link has failed and nothing is left queued."""
        ...

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        """Send a packet; with ``ack``, True only once the other side acknowledged it."""
        ...

    def close(self) -> None: ...

    @property
    def stats(self) -> LinkStats: ...


class ThreadedEndpoint:
    """Queue, error and shutdown handling around a subclass's :meth:`_receive`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._stats = LinkStats()
        self._cond = threading.Condition()
        self._packets: deque[bytes] = deque()
        self._error: BaseException | None = None
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"endpoint-{name}", daemon=True)

    @property
    def stats(self) -> LinkStats:
        return self._stats

    def _start(self) -> None:
        self._thread.start()

    def _receive(self) -> list[bytes]:
        """Block up to :data:`POLL_INTERVAL` for input; return the packets it completed."""
        raise NotImplementedError

    def _close_link(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._closed.is_set():
            try:
                packets = self._receive()
            except (OSError, EOFError) as exc:
                if not self._closed.is_set():
                    log.warning("link %s failed: %s", self.name, exc)
                    self._fail(exc)
                return
            if packets:
                with self._cond:
                    self._packets.extend(packets)
                    self._stats.packets_in += len(packets)
                    self._cond.notify_all()

    def _fail(self, exc: BaseException) -> None:
        with self._cond:
            self._error = exc
            self._cond.notify_all()

    def _check_link(self) -> None:
        if self._closed.is_set():
            raise LinkDown(f"{self.name} is closed")
        if self._error is not None:
            raise LinkDown(f"{self.name}: {self._error}") from self._error

    def read_packets(self, timeout: float) -> list[bytes]:
        with self._cond:
            self._cond.wait_for(
                lambda: self._packets or self._error is not None or self._closed.is_set(), timeout
            )
            if self._packets:
                packets = list(self._packets)
                self._packets.clear()
                return packets
        self._check_link()
        return []

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * POLL_INTERVAL + 1.0)
        self._close_link()

    def __enter__(self) -> ThreadedEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
