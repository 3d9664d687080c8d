"""The docs a newcomer follows stay true (issue 13 §5): every link inside the repository
resolves, every `mote` command of the tutorial and the hardware guide exists with the
options it is given, the tutorial's non-Spark commands run against a real emulator, the
"did not acknowledge" error points at a section that exists, and `mote emulate` shows how
far the routing tree has formed."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from docs_text import DOCS, REPO, anchors, code_blocks, mote_commands, relative_links
from emulated import mote_emulate_pty
from scripted_mote import ScriptedMote, TinyDBRoot

from motebase.emu.cli import RoutingProgress
from motebase.emu.network import Network, NetworkConfig
from motebase.gateway.cli.main import build_cli
from motebase.gateway.session import NO_ACK_HELP

MOTE = str(Path(sys.executable).with_name("mote"))
PAGES = [*sorted(DOCS.glob("*.md")), REPO / "README.md"]
TUTORIAL = DOCS / "tutorial.md"


def run_mote(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOTE, *args], capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    for link in relative_links(page):
        target, _, fragment = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.is_relative_to(REPO), f"{page.name}: {link} leaves the repository"
        assert path.exists(), f"{page.name}: {link} does not exist"
        if fragment and path.suffix == ".md":
            assert fragment in anchors(path), f"{page.name}: {link}: no such heading"


def test_no_page_points_at_the_spec_outside_the_repository() -> None:
    for page in PAGES:
        assert "shared/spec" not in page.read_text(), page.name


def _command(argv: list[str]) -> tuple[str, click.Command, list[str]]:
    """The (sub)command an argv names and the arguments left for it."""
    command: click.Command = build_cli()
    name = "mote"
    args = list(argv)
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        sub = command.get_command(click.Context(command), args[0])
        assert sub is not None, f"mote has no command {' '.join([name, args[0]])}"
        name, command, args = f"{name} {args[0]}", sub, args[1:]
    return name, command, args


@pytest.mark.parametrize("page", ["tutorial.md", "hardware.md", "protocol.md"])
def test_every_mote_command_of_a_guide_exists_with_its_options(page: str) -> None:
    commands = mote_commands(DOCS / page)
    assert commands, f"{page} has no mote commands"
    for argv in commands:
        name, command, args = _command(argv)
        known = {opt for param in command.params for opt in param.opts + param.secondary_opts}
        known |= {"--help", "-h"}
        for arg in args:
            option = arg.split("=", 1)[0]
            if option.startswith("--"):
                assert option in known, f"{name} has no option {option}"
        # click parses it as the user would type it (choices, durations, counts)
        command.make_context(name, list(args), resilient_parsing=True)


def test_the_tutorial_names_the_commands_of_its_three_parts() -> None:
    names = [_command(argv)[0] for argv in mote_commands(TUTORIAL)]
    for expected in ("mote emulate", "mote query", "mote log cat", "mote spark", "mote run"):
        assert expected in names
    assert code_blocks(TUTORIAL, "python"), "the notebook part shows Python"


def _tutorial_command(subcommand: str) -> list[str]:
    (argv,) = [a for a in mote_commands(TUTORIAL) if _command(a)[0] == f"mote {subcommand}"]
    return argv


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[str]:
    """The tutorial's terminal 1, in the background; yields the pty path it printed."""
    argv = _tutorial_command("emulate")[1:]  # after "emulate"
    yield from mote_emulate_pty([*argv, "--duration", "2m"], tmp_path)


@pytest.mark.slow  # real time, end to end: py311 only (tox.ini)
def test_the_tutorials_gateway_commands_run_against_the_emulator(
    emulator: str, tmp_path: Path
) -> None:
    time.sleep(8)  # every node of the grid has a parent after about 4 s of virtual time
    query = [a.replace("PTY", emulator) for a in _tutorial_command("query")]
    query[query.index("--duration") + 1] = "12s"  # long enough for a few epochs of 2 s
    done = run_mote(*query, "--no-table", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "query 1 started" in done.stderr
    assert "query 1 stopped" in done.stderr
    cat = run_mote(*_tutorial_command("log cat"), cwd=tmp_path)
    assert cat.returncode == 0, cat.stderr
    kinds = [re.search(r'"kind": "(\w+)"', line).group(1) for line in cat.stdout.splitlines()]
    tuples = int(re.search(r"^(\d+) tuples", done.stderr, re.MULTILINE).group(1))
    # the query record, then one reading per tuple the gateway counted
    assert kinds == ["query"] + ["reading"] * tuples
    assert tuples > 0
    verify = run_mote(*_tutorial_command("log verify"), cwd=tmp_path)
    assert verify.returncode == 0, verify.stdout + verify.stderr


@pytest.mark.slow  # real time, end to end: py311 only (tox.ini)
def test_no_acknowledgement_points_at_the_hardware_troubleshooting(tmp_path: Path) -> None:
    silent = ScriptedMote(tmp_path, TinyDBRoot(), ack=False)
    try:
        done = run_mote("queries", "--port", str(silent.path), cwd=tmp_path)
    finally:
        silent.close()
    assert done.returncode == 1
    assert done.stderr == (
        "Error: basestation did not acknowledge AM 106 after 3 attempts "
        "(see docs/hardware.md#the-basestation-does-not-acknowledge)\n"
    )
    page, _, section = NO_ACK_HELP.partition("#")
    assert section in anchors(REPO / page)
    assert "did not acknowledge AM 106" in (REPO / page).read_text()


def test_routing_progress_counts_the_nodes_with_a_parent() -> None:
    with Network(NetworkConfig(nodes=25, lossless=True)) as net:
        progress = RoutingProgress()
        # At boot no node has heard a beacon yet.
        assert progress.update(net) == (
            "routing: 0/24 nodes have a parent (queries wait for the tree)"
        )
        net.run_until(10_000)
        # The 5x5 grid at 10 m spacing and 15 m range: 4 hops from the corner root to
        # the far corner. The parents came since the last look, at 0 s.
        assert progress.update(net) == (
            "routing: all 24 nodes have a parent, tree depth 4, parents unchanged for 0.0 s"
        )
        net.run_until(20_000)
        # A lossless radio changes no parent once it is chosen.
        assert progress.update(net) == (
            "routing: all 24 nodes have a parent, tree depth 4, parents unchanged for 10.0 s"
        )
