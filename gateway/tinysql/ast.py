"""Syntax tree of a TinySQL statement, exactly as written (nothing resolved yet).

Names are not checked against a catalog and durations are not converted to epochs here:
that is the planner's job, so the tree can say precisely what the user wrote and every
node keeps its source position for error messages.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pos:
    line: int
    column: int


# --- value expressions ------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """An attribute reference (``light`` or ``sensors.light``); ``name`` is lower case."""

    name: str
    pos: Pos


@dataclass(frozen=True)
class Number:
    """A numeric constant, optionally with a time unit written right after it (``8s``)."""

    value: int | float
    pos: Pos
    unit: str | None = None


@dataclass(frozen=True)
class Star:
    """``*``, only meaningful as the argument of COUNT."""

    pos: Pos


@dataclass(frozen=True)
class Negate:
    operand: Expr
    pos: Pos


@dataclass(frozen=True)
class BinaryOp:
    """Arithmetic: ``op`` is one of ``+ - * / % >>``."""

    op: str
    left: Expr
    right: Expr
    pos: Pos


@dataclass(frozen=True)
class AggCall:
    """``name(args)``; ``name`` is upper case, ``text`` the call as written."""

    name: str
    args: tuple[Expr, ...]
    pos: Pos
    text: str


Expr = Name | Number | Star | Negate | BinaryOp | AggCall


# --- conditions (WHERE, HAVING) ---------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with ``op`` one of ``= <> > >= < <=`` (``!=`` is read as ``<>``)."""

    op: str
    left: Expr
    right: Expr
    pos: Pos


@dataclass(frozen=True)
class BoolOp:
    """``AND`` / ``OR`` of two conditions; ``pos`` is the position of the operator."""

    op: str
    left: Condition
    right: Condition
    pos: Pos


@dataclass(frozen=True)
class Not:
    operand: Condition
    pos: Pos


Condition = Comparison | BoolOp | Not


# --- clauses ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectItem:
    expr: Expr
    text: str
    alias: str | None
    pos: Pos

    @property
    def column(self) -> str:
        return self.alias or self.text


@dataclass(frozen=True)
class TimeValue:
    """A number with an optional unit, e.g. ``1024`` (``unit`` None), ``500ms``, ``30 days``."""

    value: int | float
    unit: str | None
    pos: Pos


@dataclass(frozen=True)
class EpochDuration:
    """The TinyDB tools' ``EPOCH DURATION n`` (milliseconds unless a unit is given)."""

    period: TimeValue
    pos: Pos


@dataclass(frozen=True)
class SamplePeriod:
    """The paper's ``SAMPLE PERIOD t``."""

    period: TimeValue
    pos: Pos


@dataclass(frozen=True)
class Once:
    pos: Pos


@dataclass(frozen=True)
class Lifetime:
    """``LIFETIME t [MIN SAMPLE RATE r]``: the planner derives the sample period (§3.6)."""

    duration: TimeValue
    min_sample_rate: TimeValue | None
    pos: Pos


Timing = EpochDuration | SamplePeriod | Once | Lifetime


@dataclass(frozen=True)
class ForClause:
    """``FOR k`` (k epochs) or ``FOR 10s`` (a duration, converted with the sample period)."""

    count: TimeValue
    pos: Pos


@dataclass(frozen=True)
class OutputAction:
    """``OUTPUT ACTION cmd(arg)``: run a named command on the mote for every result."""

    command: str
    argument: int | None
    pos: Pos


@dataclass(frozen=True)
class SelectQuery:
    items: tuple[SelectItem, ...]
    where: Condition | None = None
    group_by: Expr | None = None
    having: Condition | None = None
    timing: Timing | None = None
    for_clause: ForClause | None = None
    output_action: OutputAction | None = None
    no_interleave: bool = False
    source: str = ""


@dataclass(frozen=True)
class StopQuery:
    qid: int
    pos: Pos


Statement = SelectQuery | StopQuery
