"""`pip install .` installs one importable name, motebase (plus pyspark_motebase, the module
PySpark 4 discovers the source by, and the `mote` script), and installs without a C
compiler, then without the emulator.

Wheels are built from a copy of the checkout (a build writes build/ and an egg-info into
the tree it builds) with the test environment's setuptools and cffi, offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from motebase.emu.native import missing_message
from motebase.gateway.protocol.framing import frame_packet
from motebase.gateway.protocol.result import QrType, WireType, build_query_result
from motebase.gateway.protocol.tos import (
    DEFAULT_GROUP,
    UART_ADDR,
    AmType,
    build_mhop,
    build_tos_packet,
)

REPO = Path(__file__).resolve().parents[1]
LAYERS = {"gateway": "motebase/gateway", "emu": "motebase/emu", "spark": "motebase/spark"}
DATA = [
    "motebase/gateway/data/catalog.json",
    "motebase/emu/data/intel-lab-mote-locs.txt",
    "motebase/spark/log4j2.properties",
]
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv*", ".tox", "build", "out", "*.egg-info", "__pycache__", "*.so", ".*_cache",
    ".hypothesis", "_motesim.c",
)  # fmt: skip


def build_wheel(tmp: Path, env: dict[str, str]) -> Path:
    tree = tmp / "src"
    shutil.copytree(REPO, tree, symlinks=True, ignore=NOT_SOURCES)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
         "--no-index", "--wheel-dir", str(tmp / "dist"), str(tree)],
        capture_output=True, text=True, timeout=600, check=False, env=env, cwd=tmp,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (tmp / "build.log").write_text(result.stdout + result.stderr)
    (wheel,) = (tmp / "dist").glob("motebase-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"), dict(os.environ))


@pytest.fixture(scope="module")
def wheel_without_compiler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # CC is the compiler setuptools runs: `false` fails as a missing compiler does.
    return build_wheel(tmp_path_factory.mktemp("nocc"), {**os.environ, "CC": "false"})


def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_has_one_top_level_package(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in names(wheel)}
    assert tops == {"motebase", "pyspark_motebase.py", "motebase-0.1.0.dist-info"}


def test_every_source_module_and_data_file_is_installed_under_motebase(wheel: Path) -> None:
    # A subpackage missing from pyproject.toml's `packages` list would be missing here.
    expected = {
        f"{target}/{path.relative_to(REPO / layer).as_posix()}"
        for layer, target in LAYERS.items()
        for path in (REPO / layer).rglob("*.py")
        if path.name != "_motesim.py"
    }
    assert expected - set(names(wheel)) == set()
    assert set(DATA) - set(names(wheel)) == set()
    assert "motebase/__init__.py" in names(wheel)


def test_the_emulator_extension_is_built_into_motebase_emu(wheel: Path) -> None:
    built = [name for name in names(wheel) if "_motesim" in name]
    assert len(built) == 1
    assert built[0].startswith("motebase/emu/_motesim.") and built[0].endswith(".so")


def test_the_emulator_is_built_from_the_profile_of_its_training_run(wheel: Path) -> None:
    log = (wheel.parent.parent / "build.log").read_text()
    assert "without profile-guided optimization" not in log
    generate = [line for line in log.splitlines() if "-fprofile-generate=" in line]
    use = [line for line in log.splitlines() if "-fprofile-use=" in line]
    assert generate and len(use) == len(generate)  # every file, built twice


def test_the_decoders_c_walk_is_built_into_the_protocol_package(wheel: Path) -> None:
    built = [name for name in names(wheel) if "_fastlane" in name]
    assert len(built) == 1
    assert built[0].startswith("motebase/gateway/protocol/_fastlane.")
    assert built[0].endswith(".so")


def test_the_entry_points_name_motebase_modules(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read("motebase-0.1.0.dist-info/entry_points.txt").decode()
    entries = [line.split(" = ") for line in text.splitlines() if " = " in line]
    targets = [target for _, target in entries]
    assert "motebase.gateway.cli.main:main" in targets
    assert len(targets) == 20  # the script and one entry per command (gateway/cli/main.py)
    assert all(target.startswith("motebase.") for target in targets)


def test_without_a_compiler_the_wheel_builds_without_the_emulator(
    wheel_without_compiler: Path,
) -> None:
    assert [name for name in names(wheel_without_compiler) if "_motesim" in name] == []
    assert [name for name in names(wheel_without_compiler) if "_fastlane" in name] == []


TUPLE_FRAMES = [
    frame_packet(
        build_tos_packet(
            UART_ADDR,
            AmType.QUERY_RESULT,
            DEFAULT_GROUP,
            build_mhop(
                0,
                origin,
                1,
                1,
                build_query_result(
                    {
                        "qid": 1,
                        "epoch": 1,
                        "qrType": QrType.NOT_AGG,
                        "d": {"values": [origin, 500]},
                    },
                    (WireType.UINTTWO, WireType.UINTTWO),
                ),
            ),
        )
    )
    for origin in range(3)
]


# The old top-level names refused, as in a clean environment: the development venv's
# editable install, or a checkout on the path, would otherwise answer a leftover reference.
NO_OLD_NAMES = """
import sys


class NoOldNames:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("gateway", "emu", "spark"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoOldNames())
"""


def install(wheel: Path, target: Path) -> dict[str, str]:
    """``wheel`` installed into ``target``; the environment that runs it there."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
         "--target", str(target), str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    # The install comes first on the path (its entry points too); the dependencies are ours.
    return {**os.environ, "PYTHONPATH": str(target)}


def run(code: str, *args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", NO_OLD_NAMES + code, *args],
        capture_output=True, text=True, timeout=180, check=False, env=env, cwd=cwd,
    )  # fmt: skip


MOTE = "from motebase.gateway.cli.main import main; main()"
SQL = "SELECT nodeid, light FROM sensors EPOCH DURATION 2048"


def test_the_install_runs_the_emulator_and_the_gateway_under_its_own_name(
    wheel: Path, tmp_path: Path
) -> None:
    env = install(wheel, tmp_path / "site")
    where = run("import motebase.emu.network as n; print(n.__file__)", env=env, cwd=tmp_path)
    assert where.stdout == f"{tmp_path / 'site' / 'motebase' / 'emu' / 'network.py'}\n"
    count = "SELECT COUNT(*) FROM sensors SAMPLE PERIOD 1s"
    args = ["--nodes", "4", "--lossless", "--query", count, "--epochs", "2"]
    outputs = ["--out", "rows.jsonl", "--truth", "truth.jsonl"]
    emulate = run(MOTE, "emulate", *args, *outputs, env=env, cwd=tmp_path)
    assert emulate.returncode == 0, emulate.stderr
    lines = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [(line["epoch"], line["value"]) for line in lines[:2]] == [(1, 4), (2, 4)]
    accuracy = run(MOTE, "accuracy", "rows.jsonl", "truth.jsonl", "--check", env=env, cwd=tmp_path)
    assert accuracy.returncode == 0, accuracy.stdout + accuracy.stderr


def test_an_install_without_the_emulator_runs_the_gateway_and_names_what_to_install(
    wheel_without_compiler: Path, tmp_path: Path
) -> None:
    env = install(wheel_without_compiler, tmp_path / "site")
    where = run("import motebase.gateway as g; print(g.__file__)", env=env, cwd=tmp_path)
    assert where.stdout == f"{tmp_path / 'site' / 'motebase' / 'gateway' / '__init__.py'}\n"
    emulate = run(MOTE, "emulate", "--nodes", "4", env=env, cwd=tmp_path)
    assert (emulate.returncode, emulate.stdout) == (1, "")
    assert emulate.stderr == f"Error: {missing_message('mote emulate')}\n"
    for args in (["explain", SQL], ["encode-query", SQL], ["catalog"]):
        done = run(MOTE, *args, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout != ""
    # Without the C walk, `mote decode --raw` decodes with its Python lanes.
    (tmp_path / "frames.bin").write_bytes(b"".join(TUPLE_FRAMES))
    decoded = run(MOTE, "decode", "--raw", "frames.bin", env=env, cwd=tmp_path)
    assert decoded.returncode == 0, decoded.stderr
    assert [json.loads(line)["body"]["d"]["values"] for line in decoded.stdout.splitlines()] == [
        [origin, 500] for origin in range(3)
    ]
