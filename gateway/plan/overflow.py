"""Where TinyDB's 16-bit arithmetic and partial states overflow: notes for ``mote explain``.

An unmodified TinyDB mote evaluates ``attribute fieldOp fieldConst`` in int16 (wire format
§8) and keeps SUM, COUNT, AVG and the windows' partial states in 16 bits (§9.3): a SUM over
N nodes of values up to ``hi`` wraps once ``N * hi`` passes 32,767 (measured: 100 nodes of
light 200-800 sum to -31,997). motebase motes use 32-bit arithmetic and states (the wide
layout, ``QueryPlan.wide_states``); for the TinyDB layout the planner says, from the
catalog's value ranges, how large a network still fits:

- one reading: the exact range of ``attribute fieldOp fieldConst`` over the attribute's
  catalog range must lie in int16 (``light * 100`` reaches 102,300);
- SUM and AVG's sum: ``N * max(|lo|, |hi|)`` of one reading (times ``w`` epochs per node
  for WINSUM and WINAVG) within int16; AVG's count ``N`` (``N * w``) within uint16;
- COUNT: ``N`` (``N * w`` for WINCNT) within 32,767;
- MIN, MAX, their windows and EXPAVG keep one reading's range: no node limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from motebase.gateway.catalog import Attribute
from motebase.gateway.plan.model import FieldArith, PlanAggregate, PlanExpression
from motebase.gateway.protocol.aggregates import WINDOWED, AggOp

INT16_MIN, INT16_MAX = -0x8000, 0x7FFF
UINT16_MAX = 0xFFFF

_SUMS = frozenset({AggOp.SUM, AggOp.WINSUM, AggOp.AVG, AggOp.WINAVG})
_AVERAGES = frozenset({AggOp.AVG, AggOp.WINAVG})
_COUNTS = frozenset({AggOp.CNT, AggOp.WINCNT})


@dataclass(frozen=True)
class NarrowLimit:
    """How far one aggregate goes in TinyDB's 16-bit layout."""

    aggregate: PlanAggregate
    reading: tuple[int, int]
    """Range of one reading after the field arithmetic, exactly (not wrapped)."""
    max_nodes: int | None
    """Largest number of nodes (per group) whose partial state still fits; None: any."""

    @property
    def reading_overflows(self) -> bool:
        return not fits_int16(self.reading)


def fits_int16(span: tuple[int, int]) -> bool:
    return span[0] >= INT16_MIN and span[1] <= INT16_MAX


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def arith_range(low: int, high: int, arith: FieldArith) -> tuple[int, int]:
    """Exact range of ``value fieldOp fieldConst`` for ``low <= value <= high`` (C's
    truncating division, arithmetic shift; a zero divisor leaves the value as it is)."""
    op, c = arith.op, arith.const
    if op == "%":
        if c == 0:
            return low, high
        m = abs(c) - 1  # C's remainder has the dividend's sign and |r| < |c|
        return (0 if low >= 0 else max(low, -m)), (0 if high <= 0 else min(high, m))
    if op == "*":
        ends = (low * c, high * c)
    elif op == "+":
        ends = (low + c, high + c)
    elif op == "-":
        ends = (low - c, high - c)
    elif op == "/" and c != 0:
        ends = (_c_div(low, c), _c_div(high, c))
    elif op == ">>" and c >= 0:
        ends = (low >> c, high >> c)
    else:  # no operator, / 0, >> negative
        ends = (low, high)
    return min(ends), max(ends)  # every other operator is monotonic in the value


def reading_range(attribute: Attribute, arith: FieldArith) -> tuple[int, int]:
    return arith_range(attribute.min_value, attribute.max_value, arith)


def max_nodes(op_id: int, args: Sequence[int], reading: tuple[int, int]) -> int | None:
    """Largest N (nodes contributing to one group) whose narrow state of aggregate ``op_id``
    holds N readings in ``reading`` without wrapping; None if no N overflows it."""
    try:
        op = AggOp(op_id)
    except ValueError:
        return None
    per_node = max(1, args[0]) if op in WINDOWED and args else 1  # w epochs each
    limits: list[int] = []
    if op in _SUMS:
        low, high = reading
        if high > 0:
            limits.append(INT16_MAX // (high * per_node))
        if low < 0:
            limits.append(-INT16_MIN // (-low * per_node))
    if op in _AVERAGES:
        limits.append(UINT16_MAX // per_node)
    if op in _COUNTS:
        limits.append(INT16_MAX // per_node)
    return min(limits) if limits else None


def narrow_limits(
    aggregates: Sequence[PlanAggregate], attributes: Mapping[str, Attribute]
) -> list[NarrowLimit]:
    out = []
    for agg in aggregates:
        attribute = attributes.get(agg.attribute)
        if attribute is None:
            continue
        reading = reading_range(attribute, agg.arith)
        out.append(NarrowLimit(agg, reading, max_nodes(agg.op_id, agg.args, reading)))
    return out


def overflow_notes(
    expressions: Sequence[PlanExpression], attributes: Mapping[str, Attribute]
) -> tuple[str, ...]:
    """The explain notes: per-reading arithmetic that leaves int16, then every aggregate
    whose TinyDB state overflows past some number of nodes."""
    notes: list[str] = []
    arithmetic: list[tuple[str, FieldArith]] = []
    for expr in expressions:
        arithmetic.append((expr.attribute, expr.arith))
        if isinstance(expr, PlanAggregate) and expr.group is not None:
            arithmetic.append((expr.group.attribute, expr.group.arith))
    seen: set[str] = set()
    for name, arith in arithmetic:
        attribute = attributes.get(name)
        text = arith.render(name)
        if attribute is None or text in seen:
            continue
        seen.add(text)
        low, high = reading_range(attribute, arith)
        if not fits_int16((low, high)):
            notes.append(
                f"{text} ranges over {low:,}..{high:,}, outside TinyDB's 16-bit arithmetic "
                f"({INT16_MIN:,}..{INT16_MAX:,}): unmodified motes wrap it; motebase motes "
                "compute in 32 bits"
            )
    aggregates = [e for e in expressions if isinstance(e, PlanAggregate)]
    for limit in narrow_limits(aggregates, attributes):
        if limit.max_nodes is None:
            continue
        agg = limit.aggregate
        label = (
            f"{agg.name}({''.join(f'{a}, ' for a in agg.args)}{agg.arith.render(agg.attribute)})"
        )
        where = " in one group" if agg.group is not None else ""
        extent = (
            "even for one node"
            if limit.max_nodes < 1
            else f"beyond {limit.max_nodes:,} nodes{where}"
        )
        notes.append(
            f"{label} overflows the 16-bit TinyDB state {extent}; motebase motes use 32-bit states"
        )
    return tuple(notes)
