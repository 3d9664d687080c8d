"""The emulator built with the AVR images' limits (emu/build_ffi.py --profile avr).

The build goes to a temporary directory and is loaded in a subprocess in place of
``motebase.emu._motesim``, so the installed host build stays untouched; the network it runs must
answer exactly as the host build does, within the smaller limits.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from motebase.emu.network import memory_profile

# The checkout's build script: it compiles the checkout's firmware/ (an installed wheel
# carries the built extension, not the C sources).
_SPEC = importlib.util.spec_from_file_location(
    "motebase_build_ffi", Path(__file__).resolve().parents[1] / "emu" / "build_ffi.py"
)
assert _SPEC is not None and _SPEC.loader is not None
build_ffi = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(build_ffi)

RUN_WITH_BUILD = (
    build_ffi.WITH_BUILT_EXTENSION
    + """
import json
from motebase.emu.experiment import QueryRun, run_experiment
from motebase.emu.network import Network, NetworkConfig, memory_profile
COUNT = "SELECT COUNT(*) FROM sensors EPOCH DURATION 2048"
with Network(NetworkConfig(nodes=9, lossless=True, seed=1)) as net:
    ex = run_experiment(net, [QueryRun(COUNT)], epochs=4)
print(json.dumps({
    "profile": memory_profile(),
    "state": int(module.lib.mote_state_size()),
    "counts": [row.columns["COUNT(*)"] for row in ex.outcomes[0].rows],
}))
"""
)


def test_the_installed_emulator_is_the_host_profile() -> None:
    assert memory_profile() == "host"


def test_an_avr_profile_build_runs_a_network_within_the_avr_limits(tmp_path: Path) -> None:
    # Built apart from the cwd: the build leaves a motebase/ folder, which as the cwd's
    # namespace package would hide an editable install's motebase (its finder comes last).
    built = build_ffi.make_ffibuilder(absolute=True, profile="avr").compile(
        tmpdir=str(tmp_path / "build"), verbose=False
    )
    out = subprocess.run(
        [sys.executable, "-c", RUN_WITH_BUILD, built],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["profile"] == "avr"
    assert result["state"] <= 2048  # MOTE_STATE_MAX under MOTE_PROFILE_AVR (firmware/core/mote.h)
    assert result["counts"] and set(result["counts"]) == {9}


def test_an_unknown_profile_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOTE_PROFILE", "pc")
    with pytest.raises(SystemExit, match="choose one of host, avr"):
        build_ffi.profile_from_env()
