"""setuptools hook: compile ``motebase.emu._motesim`` with cffi when the package is built.

pyproject.toml declares the extension by name only; this ``build_ext`` swaps in
the real Extension that cffi generates (C source emitted from the cdef, plus the
firmware and emulator sources), so ``pip install .`` needs no manual step and no
top-level setup.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools.command.build_ext import build_ext

_BUILD_SCRIPT = Path(__file__).resolve().parent / "build_ffi.py"


def _load_ffibuilder():  # -> cffi.FFI, loaded from the build script at build time
    spec = importlib.util.spec_from_file_location("_motesim_build", _BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ffibuilder


class CffiBuildExt(build_ext):
    def finalize_options(self) -> None:
        # Swap before setuptools finalizes, so it annotates the real Extension.
        ext = _load_ffibuilder().distutils_extension(tmpdir="build/cffi", verbose=False)
        # Optional: without a working C compiler the install goes on without the emulator,
        # so a user with real motes needs none (emu/native.py says what to install to get
        # it; README, docs/hardware.md).
        ext.optional = True
        self.distribution.ext_modules = [ext]
        super().finalize_options()
