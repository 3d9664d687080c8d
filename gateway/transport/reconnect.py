"""An endpoint that survives its link: on failure it reports the drop and reopens.

Packets the failed link had already decoded are handed out first (the inner endpoint
only raises once its queue is empty); reopening is retried with exponential backoff,
bounded by ``max_backoff``, during later reads, so a caller polling ``read_packets``
never blocks longer than its timeout. Writes while the link is down return False.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from motebase.gateway.transport.base import Endpoint, LinkStats

log = logging.getLogger(__name__)


class ReconnectingEndpoint:
    def __init__(
        self,
        open_link: Callable[[], Endpoint],
        *,
        on_drop: Callable[[BaseException], None] | None = None,
        on_reconnect: Callable[[], None] | None = None,
        min_backoff: float = 0.1,
        max_backoff: float = 5.0,
        connect_now: bool = True,
    ) -> None:
        self._open_link = open_link
        self._on_drop = on_drop
        self._on_reconnect = on_reconnect
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        self._backoff = min_backoff
        self._next_attempt = 0.0
        self._lock = threading.RLock()
        self._closed = False
        self._finished = LinkStats()  # counters of links already dropped
        self._inner: Endpoint | None = open_link() if connect_now else None

    @property
    def connected(self) -> bool:
        return self._inner is not None

    @property
    def stats(self) -> LinkStats:
        total = LinkStats()
        total.add(self._finished)
        inner = self._inner
        if inner is not None:
            total.add(inner.stats)
        return total

    def read_packets(self, timeout: float) -> list[bytes]:
        deadline = time.monotonic() + timeout
        inner = self._inner or self._reopen(deadline)
        if inner is None:
            return []
        try:
            return inner.read_packets(max(0.0, deadline - time.monotonic()))
        except OSError as exc:
            self._drop(inner, exc)
            return []

    def write_packet(self, packet: bytes, *, ack: bool = True) -> bool:
        inner = self._inner or self._reopen(time.monotonic())
        if inner is None:
            return False
        try:
            return inner.write_packet(packet, ack=ack)
        except OSError as exc:
            self._drop(inner, exc)
            return False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            inner, self._inner = self._inner, None
        if inner is not None:
            inner.close()

    def __enter__(self) -> ReconnectingEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drop(self, inner: Endpoint, exc: BaseException) -> None:
        with self._lock:
            if self._inner is not inner:
                return  # another thread already handled this drop
            self._inner = None
            self._finished.add(inner.stats)
            self._backoff = self._min_backoff
            self._next_attempt = 0.0
        inner.close()
        log.warning("link dropped: %s; reconnecting", exc)
        if self._on_drop is not None:
            self._on_drop(exc)

    def _reopen(self, deadline: float) -> Endpoint | None:
        """Try to reopen until ``deadline`` (at least once if an attempt is due)."""
        while True:
            with self._lock:
                if self._closed:
                    return None
                if self._inner is not None:
                    return self._inner
                now = time.monotonic()
                if now >= self._next_attempt:
                    try:
                        self._inner = self._open_link()
                    except OSError as exc:
                        log.info("reconnect failed: %s (next try in %.1f s)", exc, self._backoff)
                        self._next_attempt = now + self._backoff
                        self._backoff = min(2 * self._backoff, self._max_backoff)
                    else:
                        self._finished.reconnects += 1
                        log.warning("link reconnected")
                        if self._on_reconnect is not None:
                            self._on_reconnect()
                        return self._inner
                wait = min(self._next_attempt, deadline) - now
            if wait <= 0 and time.monotonic() >= deadline:
                return None
            time.sleep(max(0.0, wait))
