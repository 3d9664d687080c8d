"""A compiled query: what goes on the wire and what the gateway does with the results.

``QueryPlan`` is the contract between the planner and everything after it: the encoder
turns it into QueryMessages, the session decodes result tuples with ``fields`` (names and
wire types in field order), finalises and labels aggregate records with ``aggregates``
(by expression index), and applies ``project`` / ``having_matches`` to rows.

Rows given to ``project`` and ``having_matches`` map
- for tuple queries: field names (``PlanField.name``) to values;
- for aggregate queries: ``PlanAggregate.column`` to the finalised value (AVG = sum/count)
  and, with GROUP BY, ``group_by`` to the group number.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from motebase.gateway.plan.rowexpr import Row, RowCondition, RowRef, RowValue, Value

if TYPE_CHECKING:
    from motebase.gateway.plan.explain import Explain

SELECTION_OPS: Mapping[str, int] = {"=": 0, "<>": 1, ">": 2, ">=": 3, "<": 4, "<=": 5}
ARITH_OPS: Mapping[str, int] = {"": 0, "*": 1, "/": 2, "+": 3, "-": 4, "%": 5, ">>": 6}
#: ``epochDuration`` of a ONCE query.
EPOCH_ONCE_UNITS = 0x7FFF
#: Java's units of ``epochDuration``.
MS_PER_EPOCH_UNIT = 10
#: Java's default epoch when a query names none.
DEFAULT_EPOCH_MS = 1024


@dataclass(frozen=True)
class PlanField:
    """One FIELD part: an attribute sampled by the query, in field-index order."""

    name: str
    wire_type: int
    index: int


@dataclass(frozen=True)
class FieldArith:
    """``attribute op constant`` as the wire carries it (``fieldOp``/``fieldConst``)."""

    op: str = ""
    const: int = 0

    @property
    def op_code(self) -> int:
        return ARITH_OPS[self.op]

    def render(self, attribute: str) -> str:
        return f"{attribute} {self.op} {self.const}" if self.op else attribute


@dataclass(frozen=True)
class PlanSelection:
    """A WHERE predicate: ``(attribute fieldOp fieldConst) op value``."""

    expr_idx: int
    attribute: str
    field_index: int
    op: str
    value: int
    arith: FieldArith
    selectivity: float

    @property
    def op_code(self) -> int:
        return SELECTION_OPS[self.op]

    def describe(self) -> str:
        return f"{self.arith.render(self.attribute)} {self.op} {self.value}"


@dataclass(frozen=True)
class GroupBy:
    """The GROUP BY attribute and the arithmetic that maps its value to a group number."""

    attribute: str
    field_index: int
    arith: FieldArith


@dataclass(frozen=True)
class PlanAggregate:
    """An aggregate expression. ``column`` keys its finalised value in result rows;
    ``hidden`` aggregates are only needed by HAVING and are not output columns."""

    expr_idx: int
    name: str
    op_id: int
    attribute: str
    field_index: int
    args: tuple[int, ...]
    temporal: bool
    arith: FieldArith
    group: GroupBy | None
    column: str
    hidden: bool = False

    def describe(self) -> str:
        args = "".join(f"{a}, " for a in self.args)
        grouped = f" GROUP BY {self.group.arith.render(self.group.attribute)}" if self.group else ""
        return f"{self.name}({args}{self.arith.render(self.attribute)}){grouped}"


PlanExpression = PlanSelection | PlanAggregate


@dataclass(frozen=True)
class OutputAction:
    """``OUTPUT ACTION command(param)``: a BUFFER part with bufferType COMMAND."""

    command: str
    param: int | None


@dataclass(frozen=True)
class OutputColumn:
    name: str
    value: RowValue


@dataclass(frozen=True)
class QueryPlan:
    sql: str
    fields: tuple[PlanField, ...]
    expressions: tuple[PlanExpression, ...]
    group_by: str | None
    epoch_ms: int | None
    """Epoch the motes are told, ``epoch_units`` x 10 ms; None for ONCE."""
    epoch_units: int
    num_epochs: int | None
    no_interleave: bool
    output_action: OutputAction | None
    outputs: tuple[OutputColumn, ...]
    having: RowCondition | None
    optimized: bool
    explanation: Explain
    wide_states: bool = False
    """Aggregate records in motebase's wide 32-bit layout (gateway/protocol/aggregates.py),
    not TinyDB's 16-bit one: only when every mote of the network is a motebase mote."""

    @property
    def aggregates(self) -> tuple[PlanAggregate, ...]:
        return tuple(e for e in self.expressions if isinstance(e, PlanAggregate))

    @property
    def selections(self) -> tuple[PlanSelection, ...]:
        return tuple(e for e in self.expressions if isinstance(e, PlanSelection))

    @property
    def is_aggregate(self) -> bool:
        return bool(self.aggregates)

    @property
    def output_columns(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.outputs)

    def column_references(self) -> dict[str, str]:
        """The output columns that only name a value of the row (an attribute, an
        aggregate's column, the GROUP BY key), each with the key it names; a computed
        column (``light * 2``) is not among them."""
        return {
            column.name: column.value.key
            for column in self.outputs
            if isinstance(column.value, RowRef)
        }

    def field(self, name: str) -> PlanField | None:
        return next((f for f in self.fields if f.name == name), None)

    def project(self, row: Row) -> dict[str, Value]:
        """Output columns of one result row, select-list arithmetic applied."""
        if self._copied_columns is not None and tuple(row) == self._copied_columns:
            return dict(row)  # 1 us a row, where evaluating each column took 10-14
        return {column.name: column.value.evaluate(row) for column in self.outputs}

    @functools.cached_property
    def _copied_columns(self) -> tuple[str, ...] | None:
        """The select list, where each column is a row value named as it: a row with
        exactly these keys, in this order, projects to a copy of itself."""
        names = tuple(column.name for column in self.outputs)
        plain = all(isinstance(c.value, RowRef) and c.value.key == c.name for c in self.outputs)
        return names if plain else None

    def having_matches(self, row: Row) -> bool:
        """Whether a finalised aggregate row passes HAVING (always true without HAVING)."""
        return self.having is None or self.having.holds(row)
