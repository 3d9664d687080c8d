"""Expressions the gateway evaluates on result rows: select-list arithmetic and HAVING.

The wire format carries neither (a query message has no place for ``light + 10`` in the
select list, nor for HAVING), so the plan keeps them as small trees evaluated against a
row that maps field names (tuples) or aggregate columns and the group attribute
(aggregate results) to values. A missing or NULL value makes arithmetic NULL and
comparisons false, as in SQL.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Value = int | float | None
Row = Mapping[str, Value]


def _divide(a: float, b: float) -> float | None:
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        # The motes' 16-bit C arithmetic truncates towards zero; keep results comparable.
        quotient = abs(a) // abs(b)
        return quotient if (a >= 0) == (b >= 0) else -quotient
    return a / b


def _modulo(a: float, b: float) -> float | None:
    if b == 0:
        return None
    if isinstance(a, int) and isinstance(b, int):
        remainder = abs(a) % abs(b)
        return remainder if a >= 0 else -remainder
    return a % b


def _shift(a: float, b: float) -> float | None:
    return int(a) >> int(b) if b >= 0 else None


ARITHMETIC: Mapping[str, Callable[[float, float], float | None]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _divide,
    "%": _modulo,
    ">>": _shift,
}
COMPARISONS: Mapping[str, Callable[[float, float], bool]] = {
    "=": operator.eq,
    "<>": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


@dataclass(frozen=True)
class RowRef:
    """A column of the row: a field name or an aggregate's column."""

    key: str

    def evaluate(self, row: Row) -> Value:
        return row.get(self.key)


@dataclass(frozen=True)
class RowConst:
    value: int | float

    def evaluate(self, row: Row) -> Value:
        return self.value


@dataclass(frozen=True)
class RowArith:
    op: str
    left: RowValue
    right: RowValue

    def evaluate(self, row: Row) -> Value:
        a, b = self.left.evaluate(row), self.right.evaluate(row)
        if a is None or b is None:
            return None
        return ARITHMETIC[self.op](a, b)


RowValue = RowRef | RowConst | RowArith


@dataclass(frozen=True)
class RowCompare:
    op: str
    left: RowValue
    right: RowValue

    def holds(self, row: Row) -> bool:
        a, b = self.left.evaluate(row), self.right.evaluate(row)
        return a is not None and b is not None and COMPARISONS[self.op](a, b)


@dataclass(frozen=True)
class RowBool:
    """``AND`` / ``OR`` over two conditions, or ``NOT`` of ``left`` (``right`` None)."""

    op: str
    left: RowCondition
    right: RowCondition | None = None

    def holds(self, row: Row) -> bool:
        if self.op == "NOT":
            return not self.left.holds(row)
        assert self.right is not None
        if self.op == "AND":
            return self.left.holds(row) and self.right.holds(row)
        return self.left.holds(row) or self.right.holds(row)


RowCondition = RowCompare | RowBool
