"""Subcommands registered with the `mote` host (see pyproject.toml, group motebase.commands)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
