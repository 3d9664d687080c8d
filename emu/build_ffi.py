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

Speed (issue 14): the firmware is many small functions spread over files and called
through the HAL's function pointers, so the build optimizes across files: link-time
optimization with hidden symbols (only ``PyInit__motesim`` is exported, so calls inside
the extension are direct and inlinable). Both builds add profile-guided optimization
(GCC): an instrumented build runs a short training emulation (``PGO_TRAINING``), then the
real build uses its profile (hot paths laid out together, the HAL's indirect calls
promoted to direct ones). Here ``--no-pgo`` skips it; ``pip install`` does the same
through emu/_buildsys.py (``MOTE_PGO=0`` skips it there). Neither changes a result: no
fast-math, no FMA contraction (ISO C99 mode), the same code, only compiled differently
(checked bit-identical per seed).
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
# Whole-extension optimization; BUILD_EXT retries without these where a compiler refuses them.
OPT_CFLAGS = ["-flto=auto", "-fvisibility=hidden", "-fno-semantic-interposition"]
OPT_LDFLAGS = ["-O2", "-flto=auto", "-fvisibility=hidden"]
# The start of a script (python -c SCRIPT LIBRARY) that runs with the extension built at
# LIBRARY loaded in place of the installed one (tests/test_memory_profile.py uses it too).
WITH_BUILT_EXTENSION = """
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.ExtensionFileLoader("motebase.emu._motesim", sys.argv[1])
spec = importlib.util.spec_from_loader("motebase.emu._motesim", loader)
module = importlib.util.module_from_spec(spec)
loader.exec_module(module)
sys.modules["motebase.emu._motesim"] = module
"""
# A short emulation that exercises the hot paths of both radio models and both query kinds,
# run by an instrumented build.
PGO_TRAINING = (
    WITH_BUILT_EXTENSION
    + """
from motebase.emu.network import Network, NetworkConfig
from motebase.emu.queries import query_frames
for model, nodes, sql in (
    ("logistic", 400, "SELECT MAX(light) SAMPLE PERIOD 1s"),
    ("logistic", 400, "SELECT nodeid, light, temp SAMPLE PERIOD 1s"),
    ("sinr", 225, "SELECT nodeid, light, temp SAMPLE PERIOD 1s"),
):
    net = Network(NetworkConfig(nodes=nodes, seed=1, link_model=model))
    net.run_for(30_000.0)
    for frame in query_frames(sql):
        net.uart_write(frame)
        net.run_for(1000.0)
    net.run_for(60_000.0)
    net.uart_read()
    net.close()
"""
)
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


def make_ffibuilder(
    absolute: bool = False,
    profile: str = "host",
    opt_cflags: list[str] | None = None,
    opt_ldflags: list[str] | None = None,
) -> FFI:
    """``opt_cflags``/``opt_ldflags``: the optimization flags (default OPT_CFLAGS/OPT_LDFLAGS)."""
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
        extra_compile_args=CFLAGS + (OPT_CFLAGS if opt_cflags is None else opt_cflags),
        extra_link_args=OPT_LDFLAGS if opt_ldflags is None else opt_ldflags,
    )
    return builder


ffibuilder = make_ffibuilder(profile=profile_from_env())


def _compile(profile: str, tmpdir: str, extra: list[str]) -> str:
    builder = make_ffibuilder(
        absolute=True,
        profile=profile,
        opt_cflags=OPT_CFLAGS + extra,
        opt_ldflags=OPT_LDFLAGS + extra,
    )
    return builder.compile(tmpdir=tmpdir, verbose=False)


def pgo_generate_flags(data: Path) -> list[str]:
    """Flags of the instrumented build, which writes its profile under ``data``."""
    return [f"-fprofile-generate={data}"]


def pgo_use_flags(data: Path) -> list[str]:
    """Flags of the build from that profile (files the training never ran have none)."""
    return [f"-fprofile-use={data}", "-fprofile-partial-training", "-Wno-missing-profile"]


def build_pgo(profile: str) -> str:
    """Instrumented build, training run, optimized build; returns the optimized library."""
    import shutil
    import subprocess
    import sys

    data = ROOT / "build" / f"pgo-{profile}"
    shutil.rmtree(data, ignore_errors=True)
    gen = _compile(profile, f"build/pgo-gen-{profile}", pgo_generate_flags(data))
    # the same object paths in both builds: the profile files are named after them
    subprocess.run([sys.executable, "-c", PGO_TRAINING, gen], cwd=ROOT, check=True)
    return _compile(profile, f"build/pgo-gen-{profile}", pgo_use_flags(data))


if __name__ == "__main__":
    import argparse
    import shutil

    parser = argparse.ArgumentParser(description="build motebase.emu._motesim in place")
    parser.add_argument("--profile", choices=sorted(PROFILES), default=profile_from_env())
    parser.add_argument(
        "--no-pgo", action="store_true", help="skip profile-guided optimization (GCC only)"
    )
    args = parser.parse_args()
    os.chdir(ROOT)
    if args.no_pgo:
        built = _compile(args.profile, f"build/inplace-{args.profile}", [])
    else:
        built = build_pgo(args.profile)
    # Copy then rename: overwriting a mapped .so in place kills running users with SIGBUS.
    target = ROOT / "emu" / Path(built).name
    staging = target.with_suffix(".so.new")
    shutil.copy2(built, staging)
    os.replace(staging, target)
