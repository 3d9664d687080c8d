"""firmware/core reads as a one-way stack, as firmware/net does: each module includes and
calls only the modules below it, so a reader can take the core bottom up and a change to
one module cannot reach back into those it serves (docs/architecture.md). The order:
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "firmware" / "core"

#: Bottom up. A module is a .c file and its .h; each may use only those before it.
STACK = (
    "schedule",  # time arithmetic of epochs, intervals and waves
    "clock",  # logical time
    "sampling",
    "running",  # what the running queries mean to the rest: read only
    "txpath",  # results and control out, acks, backpressure
    "stops",
    "sharing",  # AM 104, query sharing
    "processing",  # selection, expressions, TAG
    "runs",  # the epoch driver: phases, slots, the down wave
    "timesync",
    "querymsg",  # AM 101 in, DEL, RATE
    "results",  # AM 240/250 in
    "commands",  # AM 103/106
    "mote",  # dispatch, power, the platform's entry points
)
#: Headers every module may include: the node's state (its fields, for the .c files; the
#: opaque type its headers declare their functions on) and counters, compiler attributes,
#: the observer hook. mote_state.h puts together the slices the modules' headers declare.
SHARED = {"mote_state", "mote_type", "mote_stats", "compiler", "observe"}

INCLUDE = re.compile(r'^#include "([a-z_]+)\.h"', re.MULTILINE)


def below(module: str) -> set[str]:
    return set(STACK[: STACK.index(module)])


def test_every_core_module_has_its_place_in_the_stack() -> None:
    modules = {p.stem for p in CORE.glob("*.c")}
    assert modules == set(STACK)


@pytest.mark.parametrize("module", STACK)
def test_a_module_includes_only_what_is_below_it(module: str) -> None:
    allowed = below(module) | SHARED | {module}
    for source in (CORE / f"{module}.c", CORE / f"{module}.h"):
        if module == "mote" and source.suffix == ".h":
            continue  # mote.h is the platforms' API, which mote_state.h is typed by
        included = set(INCLUDE.findall(source.read_text()))
        assert included <= allowed, (
            f"{source.name} includes {sorted(included - allowed)}, not below it"
        )


def defined_and_needed(obj: Path) -> tuple[set[str], set[str]]:
    def symbols(*flags: str) -> set[str]:
        out = subprocess.run(["nm", *flags, str(obj)], capture_output=True, text=True, check=True)
        return {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}

    return symbols("--defined-only", "-g"), symbols("-u")


def test_a_module_calls_only_what_is_below_it(tmp_path: Path) -> None:
    # What the includes cannot show: a call declared by a shared header (mote.h's API).
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc and shutil.which("nm"), "the layering check compiles the core: it needs cc and nm"
    owner: dict[str, str] = {}
    needs: dict[str, set[str]] = {}
    for module in STACK:
        obj = tmp_path / f"{module}.o"
        subprocess.run(
            [cc, "-std=c99", "-c", str(CORE / f"{module}.c"), "-o", str(obj)], check=True
        )
        defined, needs[module] = defined_and_needed(obj)
        owner.update(dict.fromkeys(defined, module))
    for module in STACK:
        upward = {
            f"{symbol} ({owner[symbol]})"
            for symbol in needs[module]
            if symbol in owner and owner[symbol] not in below(module)
        }
        assert not upward, f"{module}.c calls up the stack: {sorted(upward)}"


@pytest.mark.parametrize("module", [m for m in STACK if m != "mote"])
def test_a_module_header_sees_the_state_only_as_a_type(module: str) -> None:
    # The fields are the .c files' business: a header that included mote_state.h would
    # hand every module above it the whole node again, the slices of the ones above too.
    included = set(INCLUDE.findall((CORE / f"{module}.h").read_text()))
    assert "mote_state" not in included, f"{module}.h includes mote_state.h"
