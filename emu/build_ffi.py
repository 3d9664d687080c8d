"""cffi (API mode) build of the firmware core plus the emulation HAL.

One extension, ``motebase.emu._motesim``, compiled from the same C sources CMake builds:
every ``firmware/**/*.c`` except unit tests and the AVR platform, plus
``emu/csrc/*.c``. The Python-visible declarations are kept next to the C they
describe (``firmware/core/mote_api.cdef``, ``emu/csrc/emu_api.cdef``) so each
layer owns its own binding surface.

Run directly (``python emu/build_ffi.py``) to build in place during development;
``pip install .`` builds it through ``emu/_buildsys.py``.

Memory profiles: ``host`` (default) sizes each mote's state for a PC, ``avr`` compiles the
core with ``-DMOTE_PROFILE_AVR``, the smaller limits of the ATmega128 images
(docs/architecture.md, "memory profiles"), so an emulated network behaves as flashed motes
would. Choose it with ``python emu/build_ffi.py --profile avr`` or ``MOTE_PROFILE=avr pip
install .``; ``motebase.emu.network.memory_profile()`` says which one is loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

from cffi import FFI

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
CSRC = ROOT / "emu" / "csrc"
CDEF_FILES = (FIRMWARE / "core" / "mote_api.cdef", CSRC / "emu_api.cdef")
EXCLUDED_DIRS = {"tests", "avr"}
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]
PROFILES = {"host": [], "avr": [("MOTE_PROFILE_AVR", None)]}


def c_sources(absolute: bool = False) -> list[str]:
    """Firmware sources (minus tests and the AVR platform) and the emulator's C.

    setuptools insists on paths relative to the project; cffi's own compile()
    changes directory, so the in-place developer build needs absolute ones.
    """
    firmware = [
        p
        for p in sorted(FIRMWARE.rglob("*.c"))
        if not EXCLUDED_DIRS.intersection(p.relative_to(FIRMWARE).parts)
    ]
    paths = [*firmware, *sorted(CSRC.glob("*.c"))]
    return [str(p if absolute else p.relative_to(ROOT)) for p in paths]


def profile_from_env() -> str:
    profile = os.environ.get("MOTE_PROFILE", "host")
    if profile not in PROFILES:
        raise SystemExit(f"MOTE_PROFILE={profile!r}: choose one of {', '.join(PROFILES)}")
    return profile


def make_ffibuilder(absolute: bool = False, profile: str = "host") -> FFI:
    builder = FFI()
    builder.cdef("\n".join(p.read_text() for p in CDEF_FILES if p.exists()))
    includes = "\n".join(
        f'#include "{h.relative_to(ROOT)}"'
        for h in (FIRMWARE / "core" / "mote.h", CSRC / "emu.h")
        if h.exists()
    )
    builder.set_source(
        "motebase.emu._motesim",
        includes,
        sources=c_sources(absolute),
        include_dirs=[str(ROOT)],
        define_macros=PROFILES[profile],
        extra_compile_args=CFLAGS,
    )
    return builder


ffibuilder = make_ffibuilder(profile=profile_from_env())

if __name__ == "__main__":
    import argparse
    import shutil

    parser = argparse.ArgumentParser(description="build motebase.emu._motesim in place")
    parser.add_argument("--profile", choices=sorted(PROFILES), default=profile_from_env())
    args = parser.parse_args()
    os.chdir(ROOT)
    built = make_ffibuilder(absolute=True, profile=args.profile).compile(
        tmpdir=f"build/inplace-{args.profile}", verbose=False
    )
    # Copy then rename: overwriting a mapped .so in place kills running users with SIGBUS.
    target = ROOT / "emu" / Path(built).name
    staging = target.with_suffix(".so.new")
    shutil.copy2(built, staging)
    os.replace(staging, target)
