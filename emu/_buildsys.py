"""setuptools hook: compile the package's cffi extensions when it is built.

``motebase.emu._motesim`` (the firmware core and the emulator, emu/build_ffi.py) and
``motebase.gateway.protocol._fastlane`` (the C walk of ``mote decode``,
gateway/protocol/fastlane_build.py). pyproject.toml declares them by name only; this
``build_ext`` swaps in the real Extensions that cffi generates, so ``pip install .`` needs
no manual step and no top-level setup.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, LinkError

_HERE = Path(__file__).resolve().parent
_BUILD_SCRIPTS = {
    "_motesim_build": _HERE / "build_ffi.py",
    "_fastlane_build": _HERE.parent / "gateway" / "protocol" / "fastlane_build.py",
}


_OPT_FLAGS = {"-flto=auto", "-fvisibility=hidden", "-fno-semantic-interposition"}


def _load_ffibuilder(name: str):  # -> cffi.FFI, loaded from the build script at build time
    spec = importlib.util.spec_from_file_location(name, _BUILD_SCRIPTS[name])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ffibuilder


class CffiBuildExt(build_ext):
    def finalize_options(self) -> None:
        # Swap before setuptools finalizes, so it annotates the real Extensions.
        exts = [
            _load_ffibuilder(name).distutils_extension(tmpdir="build/cffi", verbose=False)
            for name in _BUILD_SCRIPTS
        ]
        # Optional: without a working C compiler the install goes on without the emulator,
        # so a user with real motes needs none (emu/native.py says what to install to get
        # it; README, docs/hardware.md), and `mote decode` uses its Python lanes.
        for ext in exts:
            ext.optional = True
        self.distribution.ext_modules = exts
        super().finalize_options()

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except (CCompilerError, CompileError, LinkError):
            # A compiler that refuses the whole-extension optimization flags (emu/build_ffi.py,
            # OPT_CFLAGS) still builds the extension, only slower.
            plain = [f for f in ext.extra_compile_args if f not in _OPT_FLAGS]
            if plain == ext.extra_compile_args and not ext.extra_link_args:
                raise
            ext.extra_compile_args = plain
            ext.extra_link_args = []
            super().build_extension(ext)
