"""Programming a mote on a Crossbow MIB510 with avrdude.

avrdude (7.x) knows the MIB510 as programmer ``mib510``: an STK500 version 1 protocol
preceded by the board's own handshake, which makes the board's ISP processor take the
serial line from the mote. avrdude opens STK500-type programmers at 115,200 baud unless
``-b`` says otherwise, the rate the MIB510's ISP speaks (uisp's ``-dprog=mib510`` used the
same), so the line carries no ``-b``. ``-p m128`` is the ATmega128(L) of the mica2 and the
mica2dot alike; by default avrdude erases the chip, writes, then reads the flash back
and verifies it.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

from motebase.gateway.flash.errors import FlashError

PROGRAMMER = "mib510"
PART = "m128"


def avrdude_argv(port: str, hex_path: Path, avrdude: str = "avrdude") -> list[str]:
    return [avrdude, "-c", PROGRAMMER, "-P", port, "-p", PART, "-U", f"flash:w:{hex_path}:i"]


def command_line(argv: list[str]) -> str:
    """The argv as one line a POSIX shell runs unchanged."""
    return shlex.join(argv)


def find_avrdude() -> str:
    found = shutil.which("avrdude")
    if found is None:
        raise FlashError(
            "avrdude is not installed (not on PATH): install it (Debian/Ubuntu: "
            "`sudo apt-get install avrdude`), or use --dry-run to see the command"
        )
    return found


def check_port(port: str) -> None:
    path = Path(port)
    if not path.exists():
        raise FlashError(
            f"port {port} does not exist: is the MIB510's serial cable plugged in? "
            "(`ls /dev/ttyUSB* /dev/ttyS*` lists the candidates)"
        )
    if path.is_dir() or path.is_file():
        raise FlashError(f"port {port} is not a serial device")


def run(argv: list[str]) -> int:
    """Run avrdude with its output going straight to ours (its progress bars and
    verification report as it prints them); its exit status."""
    try:
        return subprocess.run(argv, check=False).returncode
    except OSError as exc:
        raise FlashError(f"cannot run {argv[0]}: {exc.strerror}") from None
