"""Command-line values shared by every layer's subcommands: one grammar for durations,
AM groups, platforms and SQL errors, so that `mote query`, `mote emulate`, `mote spark`,
`mote run` and `mote listen` spell the same thing the same way."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from motebase.gateway.protocol.tos import DEFAULT_GROUP

if TYPE_CHECKING:  # the parser costs `mote decode` and `mote listen` a third of their start
    from motebase.gateway.tinysql import TinySQLError

_F = TypeVar("_F", bound=Callable[..., Any])

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h|d)?\s*$")
_SECONDS_PER_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
#: What every duration error says is expected.
DURATION_FORMAT = "seconds (90, 1.5) or a number with a unit: 500ms, 30s, 2m, 1h, 1d"

#: The platforms every command offers: the ones the gateway decodes (TinyOS 1.x TOS_Msg
#: of the CC1000/TR1000 radios) and the emulator runs. The micaz's CC2420 TOS_Msg has
#: another header, which the gateway does not read.
PLATFORMS = ("mica", "mica2", "mica2dot")


def parse_duration(text: str) -> float:
    """Seconds from ``90``, ``1.5``, ``90s``, ``500ms``, ``2m``, ``1.5h`` or ``1d``."""
    match = _DURATION.match(text)
    if match is None:
        raise click.BadParameter(f"{text!r} is not a duration: give {DURATION_FORMAT}")
    return float(match.group(1)) * _SECONDS_PER_UNIT[match.group(2)]


class Duration(click.ParamType):
    """A duration option's value, in seconds (a float). ``positive`` refuses zero, for
    the options where zero would mean "never wait" rather than a length of time."""

    name = "duration"

    def __init__(self, *, positive: bool = False) -> None:
        self.positive = positive

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, (int, float)):  # a default given in seconds
            seconds = float(value)
        else:
            try:
                seconds = parse_duration(str(value))
            except click.BadParameter as exc:
                self.fail(exc.message, param, ctx)
        if self.positive and seconds <= 0:
            self.fail(f"{value!r} is not longer than zero", param, ctx)
        return seconds


class AmGroup(click.ParamType):
    """An AM group id, 0..255, in decimal or hex (0x7d): groups are usually written in hex,
    as TinyOS's DEFAULT_LOCAL_GROUP is."""

    name = "group"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        if isinstance(value, int):
            group = value
        else:
            try:
                group = int(str(value), 0)
            except ValueError:
                self.fail(f"{value!r} is not a number (decimal, or hex as 0x7d)", param, ctx)
        if not 0 <= group <= 0xFF:
            self.fail(f"{value!r} is not a group: 0..255 (0x00..0xff)", param, ctx)
        return group


def group_option(help_text: str) -> Callable[[_F], _F]:
    """``--group``, the AM group of the packets a command sends, default 0x7d."""
    return click.option(
        "--group",
        type=AmGroup(),
        default=DEFAULT_GROUP,
        show_default="0x7d",
        help=help_text,
    )


def platform_option(help_text: str, *, required: bool = False) -> Callable[[_F], _F]:
    """``--platform``, one choice list for every command."""
    if required:
        return click.option(
            "--platform", type=click.Choice(PLATFORMS), required=True, help=help_text
        )
    return click.option(
        "--platform",
        type=click.Choice(PLATFORMS),
        default="mica2",
        show_default=True,
        help=help_text,
    )


def sql_error(sql: str, error: TinySQLError) -> click.ClickException:
    """A refused query as every command reports it: the message, then the offending line
    with a caret under the column."""
    # Lines as the lexer counts them: only '\n' ends one (splitlines would also split at
    # '\r', '\x0b', '\u2028'..., and the caret would land on another line).
    lines = sql.split("\n")
    source = lines[min(error.line, len(lines)) - 1]
    return click.ClickException(f"{error}\n  {source}\n  {' ' * (error.column - 1)}^")
