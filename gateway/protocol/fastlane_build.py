"""cffi (API mode) build of ``motebase.gateway.protocol._fastlane`` from ``csrc/fastlane.c``.

Run directly (``python gateway/protocol/fastlane_build.py``) to build in place during
development; ``pip install .`` builds it through ``emu/_buildsys.py``, optionally: without a
C compiler the gateway decodes with its Python lanes (protocol/fastlane.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CSRC = HERE / "csrc"
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]


def make_ffibuilder(absolute: bool = False) -> FFI:
    builder = FFI()
    builder.cdef((CSRC / "fastlane.cdef").read_text())
    source = CSRC / "fastlane.c"
    builder.set_source(
        "motebase.gateway.protocol._fastlane",
        '#include "fastlane.h"',
        sources=[str(source if absolute else source.relative_to(ROOT))],
        include_dirs=[str(CSRC if absolute else CSRC.relative_to(ROOT))],
        extra_compile_args=CFLAGS,
    )
    return builder


ffibuilder = make_ffibuilder()

if __name__ == "__main__":
    os.chdir(ROOT)
    built = make_ffibuilder(absolute=True).compile(tmpdir="build/inplace-fastlane", verbose=False)
    # Copy then rename: overwriting a mapped .so in place kills running users with SIGBUS.
    target = HERE / Path(built).name
    staging = target.with_suffix(".so.new")
    shutil.copy2(built, staging)
    os.replace(staging, target)
