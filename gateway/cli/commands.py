"""The gateway's subcommands, registered with the `mote` host."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
