"""Command-line values shared by every layer's subcommands."""

from __future__ import annotations

import re

import click

from gateway.tinysql import TinySQLError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_SECONDS_PER_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``500ms``, ``2m``, ``1.5h`` or ``1d`` (bare = seconds)."""
    match = _DURATION.match(text)
    if match is None:
        raise click.BadParameter(f"{text!r} is not a duration such as 30s, 500ms, 2m, 1h")
    return float(match.group(1)) * _SECONDS_PER_UNIT[match.group(2)]


def sql_error(sql: str, error: TinySQLError) -> click.ClickException:
    """A refused query as every command reports it: the message, then the offending line
    with a caret under the column."""
    # Lines as the lexer counts them: only '\n' ends one (splitlines would also split at
    # '\r', '\x0b', '\u2028'..., and the caret would land on another line).
    lines = sql.split("\n")
    source = lines[min(error.line, len(lines)) - 1]
    return click.ClickException(f"{error}\n  {source}\n  {' ' * (error.column - 1)}^")
