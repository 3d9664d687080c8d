"""The rich console every command prints its tables and progress with."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console

#: Width of a console that is not a terminal. rich assumes 80 columns there and cuts or
#: wraps every wider table; a file or a pipe has no width, so nothing is cut. Tables
#: still take only the width they need.
UNBOUNDED_WIDTH = 100_000


def make_console(*, stderr: bool = False, **kwargs: Any) -> Console:
    """A console on stdout (or stderr): the terminal's width on a terminal, otherwise
    unbounded, with text lines never wrapped."""
    stream = sys.stderr if stderr else sys.stdout
    if _isatty(stream):
        return Console(stderr=stderr, **kwargs)
    kwargs.setdefault("soft_wrap", True)
    return Console(stderr=stderr, width=UNBOUNDED_WIDTH, **kwargs)


def end_live(console: Console) -> None:
    """End the line a stopped rich ``Live`` left open. On a terminal it ends its display
    with a newline; elsewhere it prints its last frame without one, and what follows
    would be glued to it."""
    if not console.is_terminal:
        console.line()


def throttled(
    update: Callable[[str], None],
    every_s: float = 0.1,
    clock: Callable[[], float] = time.monotonic,
) -> Callable[[str], None]:
    """``update`` (a status line's) called at most once per ``every_s`` of ``clock``: a
    caller that reports at every step of its loop -- `mote emulate`'s every 50 ms of
    virtual time -- had rich parse each message's markup, 13,000 of them in a 1,000-node
    run, for a line the terminal redraws 12 times a second."""
    shown_at = -float("inf")

    def show(message: str) -> None:
        nonlocal shown_at
        now = clock()
        if now - shown_at >= every_s:
            shown_at = now
            update(message)

    return show


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False  # closed, or not a file
