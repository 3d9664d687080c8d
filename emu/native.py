"""The emulator's C extension (``motebase.emu._motesim``), or one message saying why not.

The extension is optional at install (emu/_buildsys.py): where no C compiler works, ``pip
install`` leaves it out, and a user with real motes loses nothing, since the gateway never
needs it. Everything that runs the emulator loads it through :func:`load`, so a missing
build is always the same :class:`EmulatorMissing` with the same message, whichever entry
point (``mote emulate``, ``mote run``, ``import motebase.emu.network``) met it first.
"""

from __future__ import annotations

import importlib
from typing import Any

EXTENSION = "motebase.emu._motesim"
REINSTALL = "pip install --force-reinstall --no-deps ."


def missing_message(what: str) -> str:
    """What to tell the user when ``what`` (a command, a module) needs the missing build."""
    return (
        f"{what} needs the emulator, motebase's C extension {EXTENSION}, which is not "
        "built here: no C compiler worked when motebase was installed (pip install -v shows "
        "why). Install one with Python's headers (Debian/Ubuntu: apt install gcc "
        f"python3-dev), then reinstall motebase from its checkout:\n  {REINSTALL}\n"
        "Real motes need no emulator: mote query, listen, decode, explain and spark work "
        "without it."
    )


class EmulatorMissing(ImportError):
    """The emulator's C extension is not installed (an ImportError, as it would have been)."""

    def __init__(self, what: str = "motebase.emu.network") -> None:
        super().__init__(missing_message(what), name=EXTENSION)


def load() -> tuple[Any, Any]:
    """The extension's ``ffi`` and ``lib``."""
    try:
        module = importlib.import_module(EXTENSION)
    except ModuleNotFoundError as exc:
        # Only the extension itself: a dependency missing from inside it is another problem.
        if exc.name != EXTENSION:
            raise
        raise EmulatorMissing() from None
    return module.ffi, module.lib
