"""CommandMsg (AM 103), wire format §15: named commands with typed parameters.

Layout: ``nodeid`` i16 (target; -1 = 0xFFFF = every node), ``seqNo`` u32 (a mote treats
a command as new when the low byte is greater than the last one seen or differs by more
than 8), the NUL-terminated command name, then the parameters in order: integers
little-endian, strings NUL-terminated. Java builds 30-byte messages; bytes after the
last parameter are padding.

motebase's extensions ride on this message (design.md §1: an unmodified TinyDB mote
ignores unknown commands). The firmware implements exactly these commands:

==============  =====================================  ==========================================
command         parameters                             effect
==============  =====================================  ==========================================
``qpolicy``     ``policy``: string                     radio queue policy: naive | winavg | delta
``qlen``        ``length``: uint8                      radio queue length (paper experiments: 5)
``nointerleave````enabled``: uint8 (0/1)               sample every attribute at epoch start
``reset``       (none)                                 drop all queries, back to the boot state
``setrate``     ``qid``: uint8, ``epochDuration``:     set query ``qid``'s epoch, units of 10 ms
                int16
==============  =====================================  ==========================================

Unknown commands decode with their parameters as ``{"raw": bytes}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

import construct as cs

from gateway.protocol.codec import build, cstring, parse

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


@dataclass(frozen=True)
class CommandSpec:
    name: str
    params: tuple[tuple[str, ParamType], ...]


QUEUE_POLICIES = ("naive", "winavg", "delta")

KNOWN_COMMANDS: dict[str, CommandSpec] = {
    spec.name: spec
    for spec in (
        CommandSpec("qpolicy", (("policy", ParamType.STRING),)),
        CommandSpec("qlen", (("length", ParamType.UINT8),)),
        CommandSpec("nointerleave", (("enabled", ParamType.UINT8),)),
        CommandSpec("reset", ()),
        CommandSpec("setrate", (("qid", ParamType.UINT8), ("epochDuration", ParamType.INT16))),
    )
}


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
