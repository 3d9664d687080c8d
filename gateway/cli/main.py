"""`mote`: the single entry point.

The host knows no layer: every package registers its click commands under the
``motebase.commands`` entry-point group (pyproject.toml), one entry point per command,
named as the command. The host lists the names and imports a command's module only to
run it (or to show its help): `mote decode` does not pay for numpy, the emulator or
Spark, and the gateway never imports the emulator, while the user still has one
command. A command of motebase's own is looked up in its installed entry_points.txt
first: importlib.metadata (email, socket, calendar...) would be a third of `mote
decode`'s start; any other name, the command list and --version go through it.

A closed stdout (``mote listen | head``) ends any command quietly, without a message and
with exit status 0: the reader has all it wanted, which is not an error (as `mote log cat`
has it). It is handled here, once, for every command, including the writes rich and click
catch themselves to exit 1.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import select
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

GROUP = "motebase.commands"
_OBJECT_REF = re.compile(r"^([\w.]+):([\w.]+)$")


class _MoteGroup(click.Group):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._own = own_entry_points()
        self._all: dict[str, str] | None = None

    def _entry_points(self) -> dict[str, str]:
        if self._all is None:
            from importlib.metadata import entry_points

            self._all = {ep.name: ep.value for ep in entry_points(group=GROUP)}
        return self._all

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self._entry_points()) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            ref = self._own.get(cmd_name) or self._entry_points().get(cmd_name)
            if ref is not None:
                command = load(ref)
                if command.name != cmd_name:  # a packaging slip, not the user's mistake
                    raise RuntimeError(f"entry point {cmd_name!r} loads command {command.name!r}")
                self.add_command(command)
        return self.commands.get(cmd_name)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _closed_stdout_ends_quietly():  # `mote --help | head` writes here
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _closed_stdout_ends_quietly():
            return super().invoke(ctx)


def own_entry_points(site: Path | None = None) -> dict[str, str]:
    """The ``motebase.commands`` of the motebase installed beside this package (name ->
    ``module:attr``), read from its dist-info; empty where there is no single one to read
    (a checkout on PYTHONPATH, a damaged install): the caller asks importlib.metadata."""
    site = Path(__file__).parents[3] if site is None else site  # site/motebase/gateway/cli
    found = list(site.glob("motebase-*.dist-info/entry_points.txt"))
    if len(found) != 1:
        return {}
    try:
        lines = found[0].read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    refs: dict[str, str] = {}
    section = None
    for line in map(str.strip, lines):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif section == GROUP and "=" in line:
            name, _, ref = (part.strip() for part in line.partition("="))
            if _OBJECT_REF.match(ref) is None:  # extras or another form: leave it to importlib
                return {}
            refs[name] = ref
    return refs


def load(ref: str) -> Any:
    """What an entry point's ``module:attr.attr`` names (EntryPoint.load's rule)."""
    module, _, attrs = ref.partition(":")
    return functools.reduce(getattr, attrs.split("."), importlib.import_module(module))


@contextlib.contextmanager
def _closed_stdout_ends_quietly() -> Iterator[None]:
    stdout = _fileno(sys.stdout)
    was_devnull = stdout is not None and _is_devnull(stdout)
    try:
        yield
        # Surface a closed pipe here rather than in the interpreter's final flush, which
        # would print "Exception ignored ... BrokenPipeError" and exit 120.
        sys.stdout.flush()
    except BrokenPipeError as exc:
        if stdout is None or not _reader_gone(stdout):
            # A socket or a child process, not our reader: a real error.
            raise click.ClickException(f"broken pipe: {exc}") from exc
        _discard(stdout)
        raise click.exceptions.Exit(0) from None
    except SystemExit as exc:
        # rich's Console.on_broken_pipe points stdout at /dev/null and exits 1.
        if exc.code == 1 and stdout is not None and not was_devnull and _is_devnull(stdout):
            raise click.exceptions.Exit(0) from None
        raise


def _fileno(stream: object) -> int | None:
    try:
        return int(stream.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None  # not a file: CliRunner's capture, a StringIO


def _reader_gone(fd: int) -> bool:
    """Whether ``fd`` is a pipe or socket whose reading end is closed (POLLERR/POLLHUP)."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _is_devnull(fd: int) -> bool:
    here, devnull = os.fstat(fd), os.stat(os.devnull)
    return (here.st_dev, here.st_ino) == (devnull.st_dev, devnull.st_ino)


def _discard(fd: int) -> None:
    """Point ``fd`` at /dev/null, so what is still buffered flushes without an error at
    exit (the idiom of the Python docs' note on SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def build_cli() -> click.Group:
    @click.group(cls=_MoteGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="motebase")
    def mote() -> None:
        """motebase: TinyDB queries over Mica/Mica2 networks, real or emulated, into Spark."""

    return mote


def main() -> None:
    build_cli()(prog_name="mote")
