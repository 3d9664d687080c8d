"""`mote`: the single entry point.

The host knows no layer: every package registers a list of click commands under
the ``motebase.commands`` entry-point group (pyproject.toml) and the host adds
them. That keeps the gateway from importing the emulator while still giving the
user one command.
"""

from __future__ import annotations

from importlib.metadata import entry_points

import click


def build_cli() -> click.Group:
    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(package_name="motebase")
    def mote() -> None:
        """motebase: TinyDB queries over Mica/Mica2 networks, real or emulated, into Spark."""

    for ep in sorted(entry_points(group="motebase.commands"), key=lambda e: e.name):
        for command in ep.load():
            mote.add_command(command)
    return mote


def main() -> None:
    build_cli()(prog_name="mote")
