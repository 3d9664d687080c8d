"""setuptools hook: compile the package's cffi extensions when it is built.

``motebase.emu._motesim`` (the firmware core and the emulator, emu/build_ffi.py) and
``motebase.gateway.protocol._fastlane`` (the C walk of ``mote decode``,
gateway/protocol/fastlane_build.py). pyproject.toml declares them by name only; this
``build_ext`` swaps in the real Extensions that cffi generates, so ``pip install .`` needs
no manual step and no top-level setup.py.

The emulator is built with profile-guided optimization where the compiler is GCC, as the
in-place build does (emu/build_ffi.py): an instrumented build runs the short training
emulation, then the extension is rebuilt from its profile. It makes every emulation
~10 % faster and changes no result. ``MOTE_PGO=0`` skips it; a compiler other than GCC,
or a training run that fails, gives the plain build (with a warning for the latter).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, CompileError, LinkError

_HERE = Path(__file__).resolve().parent
_BUILD_SCRIPTS = {
    "_motesim_build": _HERE / "build_ffi.py",
    "_fastlane_build": _HERE.parent / "gateway" / "protocol" / "fastlane_build.py",
}


_OPT_FLAGS = {"-flto=auto", "-fvisibility=hidden", "-fno-semantic-interposition"}


@functools.cache  # the options and the PGO build read the same script: run it once
def _load_script(name: str):  # -> the build script's module, loaded at build time
    spec = importlib.util.spec_from_file_location(name, _BUILD_SCRIPTS[name])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compiler_is_gcc() -> bool:
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    try:
        out = subprocess.run([*cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "Free Software Foundation" in out.stdout


class CffiBuildExt(build_ext):
    def finalize_options(self) -> None:
        # Swap before setuptools finalizes, so it annotates the real Extensions.
        exts = [
            _load_script(name).ffibuilder.distutils_extension(tmpdir="build/cffi", verbose=False)
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
        profiled = ext.name.endswith("._motesim") and os.environ.get("MOTE_PGO", "1") != "0"
        if not (profiled and _compiler_is_gcc() and self._build_with_profile(ext)):
            self._build_plain(ext)

    def _build_with_profile(self, ext) -> bool:
        """Instrumented build, training emulation, build from the profile; False: none made."""
        build_ffi = _load_script("_motesim_build")
        data = (Path(self.build_temp) / "pgo").resolve()
        shutil.rmtree(data, ignore_errors=True)
        compile_args, link_args = list(ext.extra_compile_args), list(ext.extra_link_args)
        self.force = True  # the same object paths in both builds: the profile is named after them
        try:
            self._build_flagged(ext, compile_args, link_args, build_ffi.pgo_generate_flags(data))
            library = str(Path(self.get_ext_fullpath(ext.name)).resolve())
            training = [sys.executable, "-c", build_ffi.PGO_TRAINING, library]
            run = subprocess.run(
                training, cwd=build_ffi.ROOT, capture_output=True, text=True, timeout=900
            )
            if run.returncode != 0:
                raise OSError(f"the training run failed: {run.stderr.strip()[-2000:]}")
            self._build_flagged(ext, compile_args, link_args, build_ffi.pgo_use_flags(data))
            return True
        except (
            CCompilerError,
            CompileError,
            LinkError,
            OSError,
            subprocess.SubprocessError,
        ) as err:
            print(f"motebase: building the emulator without profile-guided optimization ({err})")
            return False
        finally:
            ext.extra_compile_args, ext.extra_link_args = compile_args, link_args

    def _build_flagged(
        self, ext, compile_args: list[str], link_args: list[str], flags: list[str]
    ) -> None:
        ext.extra_compile_args = compile_args + flags
        ext.extra_link_args = link_args + flags
        super().build_extension(ext)

    def _build_plain(self, ext) -> None:
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
