"""SIGTERM handling shared by the long-running `mote` commands.

A service manager or `kill` ends a command with SIGTERM; by default that kills the process
where it stands (exit 143) and skips the cleanup Ctrl-C gets: a result log left unflushed, a
query left running on the motes, a pty or port not released. Inside :func:`sigterm_calls`
SIGTERM instead asks the command to finish, and the command exits 0 as after Ctrl-C.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType


@contextlib.contextmanager
def sigterm_calls(action: Callable[[], None]) -> Iterator[None]:
    """Inside the block SIGTERM calls ``action`` (which must only set a flag or raise);
    the previous handler is restored after it. Outside the main thread, where handlers
    cannot be set, the embedding program's signal handling is left as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        action()

    previous = signal.signal(signal.SIGTERM, handle)
    try:
        yield
    finally:
        # None: a handler set outside Python, which cannot be reinstalled.
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def interrupt() -> None:
    """A SIGTERM action for commands that already end cleanly on Ctrl-C."""
    raise KeyboardInterrupt
