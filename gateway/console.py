"""The rich console every command prints its tables and progress with."""

from __future__ import annotations

import sys
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


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False  # closed, or not a file
