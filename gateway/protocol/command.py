"""CommandMsg (AM 103), wire format §15: named commands with typed parameters.

Layout: ``nodeid`` i16 (target; -1 = 0xFFFF = every node), ``seqNo`` u32 (a mote treats
a command as new when the low byte is greater than the last one seen or differs by more
than 8), the NUL-terminated command name, then the parameters in order: integers
little-endian, strings NUL-terminated. Java builds 30-byte messages; bytes after the
last parameter are padding.

motebase's extensions ride on this message (design.md §1: an unmodified TinyDB mote
ignores unknown commands). The firmware implements exactly these commands, and executes
them only with the values below (firmware/core/commands.c); ``KNOWN_COMMANDS`` holds the
same table and :func:`check_command` enforces it:

================  ===========================================  ==================================
command           parameters                                   effect
================  ===========================================  ==================================
``qpolicy``       ``policy``: string, naive | winavg | delta   radio queue policy
``qlen``          ``length``: uint8, 1..8                      radio queue length (paper: 5)
``nointerleave``  ``enabled``: uint8, 0 | 1                    sample every attribute at epoch
                                                               start
``snoop``         ``enabled``: uint8, 0 | 1                    MIN/MAX suppression by overheard
                                                               siblings (paper §6.3.2; on at
                                                               boot and after ``reset``)
``slots``         ``enabled``: uint8, 0 | 1                    the slot schedule (paper §6.1.1;
                                                               on at boot and after ``reset``);
                                                               0: every depth sends at once,
                                                               records climb a level an epoch
``reset``         (none)                                       drop all queries, back to boot
``setrate``       ``qid``: uint8, 0..254; ``epochDuration``:   set query ``qid``'s epoch, units
                  int16, 1..32766                              of 10 ms
================  ===========================================  ==================================

Unknown commands decode with their parameters as ``{"raw": bytes}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import construct as cs

from motebase.gateway.protocol.codec import build, cstring, parse
from motebase.gateway.protocol.query import EPOCH_ONCE

#: Size of the messages the Java CommandMsgs tool builds.
JAVA_COMMAND_LEN = 30
ALL_NODES = -1


class ParamType(Enum):
    STRING = "string"
    UINT8 = "uint8"
    INT16 = "int16"
    UINT16 = "uint16"
    INT32 = "int32"


PARAM_LAYOUT: dict[ParamType, cs.Construct] = {
    ParamType.STRING: cstring(),
    ParamType.UINT8: cs.Int8ul,
    ParamType.INT16: cs.Int16sl,
    ParamType.UINT16: cs.Int16ul,
    ParamType.INT32: cs.Int32sl,
}


#: What each integer layout can carry at all; a parameter's own range narrows it.
INT_RANGE: dict[ParamType, tuple[int, int]] = {
    ParamType.UINT8: (0, 0xFF),
    ParamType.INT16: (-0x8000, 0x7FFF),
    ParamType.UINT16: (0, 0xFFFF),
    ParamType.INT32: (-(2**31), 2**31 - 1),
}


class CommandParamError(ValueError):
    """Parameters a mote would refuse (it counts them in ``commands_unknown`` and does
    nothing), caught before anything is sent. ``param`` names the offending parameter
    (None: the command itself, or a parameter missing or unexpected)."""

    def __init__(self, command: str, reason: str, param: str | None = None) -> None:
        self.command = command
        self.param = param
        self.reason = reason
        super().__init__(f"{command} {param}: {reason}" if param else f"{command}: {reason}")


@dataclass(frozen=True)
class Param:
    """One parameter of a named command and the values the firmware executes it with.

    ``choices`` lists every accepted value; otherwise an integer must lie in
    ``low..high`` (each defaulting to what ``type`` can carry).
    """

    name: str
    type: ParamType
    choices: tuple[str | int, ...] = ()
    low: int | None = None
    high: int | None = None

    @property
    def bounds(self) -> tuple[int, int]:
        type_low, type_high = INT_RANGE[self.type]
        return (
            type_low if self.low is None else self.low,
            type_high if self.high is None else self.high,
        )

    def allowed(self) -> str:
        """The accepted values as a person reads them: ``naive|winavg|delta``, ``1..8``."""
        if self.choices:
            return "|".join(str(choice) for choice in self.choices)
        if self.type is ParamType.STRING:
            return "a string"
        low, high = self.bounds
        return f"{low}..{high}"

    def check(self, command: str, value: object) -> None:
        """Raise :class:`CommandParamError` unless ``value`` is one the firmware accepts."""
        if self.type is ParamType.STRING:
            valid = isinstance(value, str)
            expected = "a string"
        else:
            low, high = self.bounds
            valid = isinstance(value, int) and low <= value <= high
            expected = f"an integer in {low}..{high}"
        if self.choices:
            valid = valid and value in self.choices
            expected = f"one of {self.allowed()}"
        if not valid:
            raise CommandParamError(command, f"must be {expected}, not {value!r}", self.name)


@dataclass(frozen=True)
class CommandSpec:
    name: str
    parameters: tuple[Param, ...] = ()

    @property
    def params(self) -> tuple[tuple[str, ParamType], ...]:
        """``(name, type)`` of each parameter, in wire order."""
        return tuple((p.name, p.type) for p in self.parameters)

    def usage(self) -> str:
        """``length=<1..8>``: how the command is written on the command line."""
        return " ".join(f"{p.name}=<{p.allowed()}>" for p in self.parameters) or "(no parameters)"

    def check(self, params: Mapping[str, object]) -> None:
        """Raise :class:`CommandParamError` unless ``params`` are exactly this command's
        parameters, each with a value the firmware executes."""
        expected = {p.name for p in self.parameters}
        for name in params:
            if name not in expected:
                raise CommandParamError(
                    self.name, f"unexpected parameter {name!r}; takes {self.usage()}"
                )
        for param in self.parameters:
            if param.name not in params:
                raise CommandParamError(self.name, f"missing; takes {self.usage()}", param.name)
            param.check(self.name, params[param.name])


QUEUE_POLICIES = ("naive", "winavg", "delta")
#: firmware/net/radioq.h RADIOQ_MAX_LEN: the queue's fixed pool; radioq_set_len refuses more.
MAX_QUEUE_LEN = 8
#: 0xFF is "no query" on the motes (and in StatusMessage), so it never names one.
MAX_QUERY_ID = 0xFE
#: commands.c takes any positive int16, but 0x7FFF units means ONCE (runs.c): the query
#: would end after its current epoch instead of running at the new rate.
MAX_EPOCH_UNITS = EPOCH_ONCE - 1

KNOWN_COMMANDS: dict[str, CommandSpec] = {
    spec.name: spec
    for spec in (
        CommandSpec("qpolicy", (Param("policy", ParamType.STRING, choices=QUEUE_POLICIES),)),
        CommandSpec("qlen", (Param("length", ParamType.UINT8, low=1, high=MAX_QUEUE_LEN),)),
        CommandSpec("nointerleave", (Param("enabled", ParamType.UINT8, choices=(0, 1)),)),
        CommandSpec("snoop", (Param("enabled", ParamType.UINT8, choices=(0, 1)),)),
        CommandSpec("slots", (Param("enabled", ParamType.UINT8, choices=(0, 1)),)),
        CommandSpec("reset"),
        CommandSpec(
            "setrate",
            (
                Param("qid", ParamType.UINT8, high=MAX_QUERY_ID),
                Param("epochDuration", ParamType.INT16, low=1, high=MAX_EPOCH_UNITS),
            ),
        ),
    )
}


def check_command(name: str, params: Mapping[str, object]) -> None:
    """Raise :class:`CommandParamError` (a ValueError) unless ``name`` is a command the
    firmware implements and ``params`` are values it executes it with."""
    spec = KNOWN_COMMANDS.get(name)
    if spec is None:
        known = ", ".join(sorted(KNOWN_COMMANDS))
        raise CommandParamError(name, f"unknown command (known: {known})")
    spec.check(params)


def _params_struct(spec: CommandSpec) -> cs.Construct:
    return cs.Struct(*(name / PARAM_LAYOUT[ptype] for name, ptype in spec.params))


CommandMsg = cs.Struct(
    "nodeid" / cs.Int16sl,
    "seqNo" / cs.Int32ul,
    "name" / cstring(),
    "params"
    / cs.Switch(
        cs.this.name,
        {name: _params_struct(spec) for name, spec in KNOWN_COMMANDS.items()},
        default=cs.Struct("raw" / cs.GreedyBytes),
    ),
)


def build_command(msg: Mapping[str, Any]) -> bytes:
    """``{"nodeid", "seqNo", "name", "params": {...}}``; ``nodeid`` defaults to every node,
    ``params`` to none."""
    full = {"nodeid": ALL_NODES, "params": {}, **msg}
    return build("CommandMsg", CommandMsg, full)


def parse_command(data: bytes) -> dict[str, Any]:
    return parse("CommandMsg", CommandMsg, data)
