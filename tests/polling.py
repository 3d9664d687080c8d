"""Waiting on a query session in tests: poll until what the test sent has been seen,
with a generous deadline instead of fixed sleeps (the suite runs on loaded machines)."""

from __future__ import annotations

import time
from collections.abc import Callable

from motebase.gateway.assembly import Row
from motebase.gateway.session import QuerySession


def poll_while(
    session: QuerySession, waiting: Callable[[list[Row]], bool], timeout: float = 10.0
) -> list[Row]:
    """Poll until ``waiting(rows so far)`` turns false or ``timeout`` passes."""
    rows: list[Row] = []
    deadline = time.monotonic() + timeout
    while waiting(rows) and time.monotonic() < deadline:
        rows += session.poll(0.05)
    return rows


def poll_until(session: QuerySession, count: int, timeout: float = 5.0) -> list[Row]:
    """Poll until ``count`` rows arrived or ``timeout`` passes."""
    return poll_while(session, lambda rows: len(rows) < count, timeout)
