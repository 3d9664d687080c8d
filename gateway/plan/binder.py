"""Semantic analysis: a parsed SELECT bound to the catalog, in the Java tools' shapes.

Binding resolves attribute and aggregate names, assigns field indices the way the TinyDB
tools do (select-list attributes first, then attributes only WHERE / GROUP BY / HAVING
use, each in order of first appearance), turns WHERE into a list of wire-expressible
predicates (``attribute [op const] cmp const``, conjunctive only) and keeps the parts the
gateway evaluates itself (select-list arithmetic, HAVING) as row expressions. It applies
the tools' validity rules with their reasons ("Can't group by aggregate field.").
Durations in temporal aggregates stay unresolved: they need the sample period, which the
compiler settles after binding (a LIFETIME period depends on the bound attributes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from motebase.gateway.catalog import AggregateDef, Attribute, Catalog
from motebase.gateway.plan.model import FieldArith, GroupBy, OutputColumn, PlanField, PlanSelection
from motebase.gateway.plan.rowexpr import (
    RowArith,
    RowBool,
    RowCompare,
    RowCondition,
    RowConst,
    RowRef,
    RowValue,
)
from motebase.gateway.tinysql import ast
from motebase.gateway.tinysql.errors import TinySQLError

MAX_FIELDS = 16  # the motes track query parts in 16-bit masks
MAX_EXPRESSIONS = 16
INT16 = (-32768, 32767)
_FLIPPED = {"=": "=", "<>": "<>", ">": "<", ">=": "<=", "<": ">", "<=": ">="}
_COMMUTATIVE = frozenset("+*")


@dataclass(frozen=True)
class PendingAggregate:
    """An aggregate whose constant arguments may still be durations (``8s``)."""

    definition: AggregateDef
    attribute: str
    field_index: int
    arith: FieldArith
    raw_args: tuple[ast.Number, ...]
    column: str
    hidden: bool
    pos: ast.Pos

    def key(self) -> tuple[object, ...]:
        return (
            self.definition.op_id,
            self.attribute,
            self.arith,
            tuple((a.value, a.unit) for a in self.raw_args),
        )


@dataclass
class BoundQuery:
    query: ast.SelectQuery
    fields: list[PlanField] = field(default_factory=list)
    attributes: dict[str, Attribute] = field(default_factory=dict)
    selections: list[PlanSelection] = field(default_factory=list)
    aggregates: list[PendingAggregate] = field(default_factory=list)
    group: GroupBy | None = None
    outputs: list[OutputColumn] = field(default_factory=list)
    having: RowCondition | None = None

    @property
    def is_aggregate(self) -> bool:
        return bool(self.aggregates)


def bind(query: ast.SelectQuery, catalog: Catalog) -> BoundQuery:
    return _Binder(query, catalog).bind()


class _Binder:
    def __init__(self, query: ast.SelectQuery, catalog: Catalog) -> None:
        self.catalog = catalog
        self.bound = BoundQuery(query)

    def bind(self) -> BoundQuery:
        query = self.bound.query
        for item in query.items:
            self._register_names(item.expr)
        aggregate_query = any(_contains_aggregate(item.expr) for item in query.items)
        if query.where is not None:
            self._register_names(query.where)
            predicates = _conjuncts(query.where)
            if len(predicates) > MAX_EXPRESSIONS:
                raise _error(
                    f"too many predicates: the query message carries at most {MAX_EXPRESSIONS} "
                    f"expressions (WHERE predicates and aggregates), this WHERE has "
                    f"{len(predicates)}",
                    predicates[MAX_EXPRESSIONS],
                )
            self.bound.selections = [self._selection(c) for c in predicates]
        if query.group_by is not None:
            self._register_names(query.group_by)
            self.bound.group = self._group_by(query.group_by, aggregate_query)
        self.bound.outputs = self._outputs(query.items, aggregate_query)
        if query.having is not None:
            if not aggregate_query:
                raise _error("HAVING needs an aggregate query", query.having)
            self.bound.having = self._condition(query.having)
        if not self.bound.fields:
            # Nothing to sample is nothing to send: the query would run without a message.
            raise TinySQLError(
                "the query reads no attribute, so there is no query message to send; "
                "select an attribute or an aggregate",
                query.items[0].pos.line,
                query.items[0].pos.column,
                "an attribute or an aggregate",
            )
        self._check_limits()
        return self.bound

    # --- fields -----------------------------------------------------------------------

    def _register_names(self, node: ast.Expr | ast.Condition) -> None:
        for name in _names_in(node):
            self._field(name)

    def _field(self, name: ast.Name) -> PlanField:
        existing = next((f for f in self.bound.fields if f.name == name.name), None)
        if existing is not None:
            return existing
        attribute = self.catalog.attribute(name.name)
        if attribute is None:
            known = ", ".join(sorted(self.catalog.attributes))
            raise TinySQLError(
                f"unknown attribute '{name.name}'",
                name.pos.line,
                name.pos.column,
                f"an attribute of the catalog ({known})",
            )
        new = PlanField(attribute.name, attribute.type_code, len(self.bound.fields))
        self.bound.fields.append(new)
        self.bound.attributes[attribute.name] = attribute
        return new

    # --- WHERE ------------------------------------------------------------------------

    def _selection(self, comparison: ast.Comparison) -> PlanSelection:
        left, right, op = comparison.left, comparison.right, comparison.op
        if isinstance(left, ast.Number) and not isinstance(right, ast.Number):
            left, right, op = right, left, _FLIPPED[op]
        if _contains_aggregate(left) or _contains_aggregate(right):
            raise _error("aggregates cannot appear in WHERE; use HAVING", comparison)
        if not isinstance(right, ast.Number):
            raise _error(
                "a WHERE predicate compares one attribute with a constant: the wire "
                "format carries 'attribute [op constant] cmp constant' only",
                comparison,
                "a numeric constant",
            )
        name, arith = self._field_arith(left, "a predicate")
        return PlanSelection(
            -1,
            name.name,
            self._field(name).index,
            op,
            _int16(right, "predicate constant"),
            arith,
            1.0,
        )

    def _field_arith(self, expr: ast.Expr, where: str) -> tuple[ast.Name, FieldArith]:
        """``attribute`` or ``attribute op constant`` (also ``constant + attribute``)."""
        if isinstance(expr, ast.Name):
            return expr, FieldArith()
        if isinstance(expr, ast.BinaryOp):
            left, right = expr.left, expr.right
            if isinstance(left, ast.Number) and expr.op in _COMMUTATIVE:
                left, right = right, left
            if isinstance(left, ast.Name) and isinstance(right, ast.Number):
                return left, FieldArith(expr.op, _int16(right, "arithmetic constant"))
        raise _error(
            f"{where} can apply one arithmetic operator with a constant to one "
            "attribute (the wire's fieldOp/fieldConst), e.g. light / 10",
            expr,
            "attribute [op constant]",
        )

    # --- GROUP BY -----------------------------------------------------------------------

    def _group_by(self, expr: ast.Expr, aggregate_query: bool) -> GroupBy:
        if not aggregate_query:
            raise _error("GROUP BY needs an aggregate in the select list", expr)
        name, arith = self._field_arith(expr, "GROUP BY")
        # COUNT(*) counts readings through nodeid but aggregates no attribute's values.
        aggregated = {
            n.name
            for item in self.bound.query.items
            for call in _calls_in(item.expr)
            if not any(isinstance(a, ast.Star) for a in call.args)
            for n in _names_in(call)
        }
        if name.name in aggregated:
            raise _error("Can't group by aggregate field.", name)
        return GroupBy(name.name, self._field(name).index, arith)

    # --- select list --------------------------------------------------------------------

    def _outputs(
        self, items: tuple[ast.SelectItem, ...], aggregate_query: bool
    ) -> list[OutputColumn]:
        outputs: list[OutputColumn] = []
        for item in items:
            if any(o.name == item.column for o in outputs):
                raise TinySQLError(
                    f"duplicate output column '{item.column}'; name one with AS",
                    item.pos.line,
                    item.pos.column,
                )
            outputs.append(
                OutputColumn(item.column, self._row_value(item.expr, aggregate_query, False))
            )
        return outputs

    def _row_value(self, expr: ast.Expr, aggregate_query: bool, hidden: bool) -> RowValue:
        if isinstance(expr, ast.Number):
            if expr.unit is not None:
                raise _error("a duration is only meaningful as a temporal aggregate argument", expr)
            return RowConst(expr.value)
        group = self.bound.group
        if aggregate_query and group is not None and self._is_group_expr(expr, group):
            # The row carries the group number, the GROUP BY arithmetic already applied:
            # `nodeid / 4` (and, as in the TinyDB tools, plain `nodeid`) names it.
            return RowRef(group.attribute)
        if isinstance(expr, ast.Name):
            if aggregate_query:
                raise _error("Can't SELECT non-aggregate fields in aggregate query.", expr)
            return RowRef(expr.name)
        if isinstance(expr, ast.Negate):
            return RowArith(
                "*", RowConst(-1), self._row_value(expr.operand, aggregate_query, hidden)
            )
        if isinstance(expr, ast.BinaryOp):
            return RowArith(
                expr.op,
                self._row_value(expr.left, aggregate_query, hidden),
                self._row_value(expr.right, aggregate_query, hidden),
            )
        if isinstance(expr, ast.AggCall):
            return RowRef(self._aggregate(expr, hidden).column)
        raise _error("'*' is only allowed as COUNT(*)", expr)

    def _is_group_expr(self, expr: ast.Expr, group: GroupBy) -> bool:
        """Whether ``expr`` is the GROUP BY expression itself (``nodeid / 4``)."""
        if not isinstance(expr, (ast.Name, ast.BinaryOp)) or _contains_aggregate(expr):
            return False
        try:
            name, arith = self._field_arith(expr, "GROUP BY")
        except TinySQLError:
            return False
        return name.name == group.attribute and (arith == group.arith or not arith.op)

    def _aggregate(self, call: ast.AggCall, hidden: bool) -> PendingAggregate:
        definition = self.catalog.aggregate(call.name)
        if definition is None or definition.op_id == 0:
            known = ", ".join(sorted(self.catalog.aggregates))
            raise _error(f"unknown aggregate '{call.name}'", call, f"one of {known}")
        operand, raw_args = self._aggregate_arguments(call, definition)
        for arg in call.args:
            if _contains_aggregate(arg):
                raise _error("aggregates cannot be nested", arg)
        if isinstance(operand, ast.Star):
            # COUNT(*) counts tuples; nodeid is free to sample and always present.
            name, arith = ast.Name("nodeid", operand.pos), FieldArith()
        else:
            name, arith = self._field_arith(operand, "an aggregate")
        pending = PendingAggregate(
            definition,
            name.name,
            self._field(name).index,
            arith,
            raw_args,
            call.text,
            hidden,
            call.pos,
        )
        for existing in self.bound.aggregates:
            if existing.key() == pending.key():
                return existing
        self.bound.aggregates.append(pending)
        return pending

    def _aggregate_arguments(
        self, call: ast.AggCall, definition: AggregateDef
    ) -> tuple[ast.Expr, tuple[ast.Number, ...]]:
        """Split the arguments into the operand and the constants.

        The tools write constants first, in epochs (``winavg(8, 4, light)``); the paper
        writes the operand first and durations after it (``WINAVG(light, 8s, 4s)``).
        """
        args = call.args
        expected = definition.arg_count + 1
        if len(args) != expected:
            raise _error(
                f"aggregate {call.name} expects {definition.arg_count} constant "
                f"argument(s) and an attribute, given {len(args)} argument(s)",
                call,
                f"{expected} argument(s)",
            )
        constants_first = definition.arg_count > 0 and isinstance(args[0], ast.Number)
        operand, constants = (args[-1], args[:-1]) if constants_first else (args[0], args[1:])
        numbers = []
        for constant in constants:
            if not isinstance(constant, ast.Number):
                raise _error(
                    f"aggregate {call.name} takes constant arguments",
                    constant,
                    "a number or a duration",
                )
            numbers.append(constant)
        if isinstance(operand, ast.Star) and definition.name != "CNT":
            raise _error("'*' is only allowed as COUNT(*)", operand)
        return operand, tuple(numbers)

    # --- HAVING -------------------------------------------------------------------------

    def _condition(self, condition: ast.Condition) -> RowCondition:
        if isinstance(condition, ast.Comparison):
            return RowCompare(
                condition.op,
                self._row_value(condition.left, True, True),
                self._row_value(condition.right, True, True),
            )
        if isinstance(condition, ast.BoolOp):
            return RowBool(
                condition.op, self._condition(condition.left), self._condition(condition.right)
            )
        return RowBool("NOT", self._condition(condition.operand))

    def _check_limits(self) -> None:
        query = self.bound.query
        if len(self.bound.fields) > MAX_FIELDS:
            raise TinySQLError(
                f"a query has at most {MAX_FIELDS} fields, this one needs {len(self.bound.fields)}",
                1,
                1,
            )
        expressions = len(self.bound.selections) + len(self.bound.aggregates)
        if expressions > MAX_EXPRESSIONS:
            # The selections fit (bind checked them), so an aggregate is the first that does not.
            first_extra = self.bound.aggregates[MAX_EXPRESSIONS - len(self.bound.selections)]
            raise TinySQLError(
                f"a query has at most {MAX_EXPRESSIONS} expressions (WHERE predicates and "
                f"aggregates), this one needs {expressions}",
                first_extra.pos.line,
                first_extra.pos.column,
            )
        if query.having is not None and not self.bound.aggregates:
            raise _error("HAVING needs an aggregate query", query.having)


def _conjuncts(condition: ast.Condition) -> list[ast.Comparison]:
    """The predicates of a conjunction, in source order; OR and NOT are refused."""
    if isinstance(condition, ast.Comparison):
        return [condition]
    if isinstance(condition, ast.BoolOp):
        if condition.op == "OR":
            raise TinySQLError(
                "OR is not supported in WHERE: TinyDB query messages carry a conjunction "
                "(every predicate is a selection expression that must hold; the original "
                "tools silently read OR as AND). Rewrite with AND or run one query per "
                "alternative",
                condition.pos.line,
                condition.pos.column,
                "AND",
            )
        return _conjuncts(condition.left) + _conjuncts(condition.right)
    raise TinySQLError(
        "NOT is not supported in WHERE; negate the comparison instead "
        "(e.g. light <= 10 for NOT light > 10)",
        condition.pos.line,
        condition.pos.column,
        "a comparison",
    )


def _names_in(node: ast.Expr | ast.Condition) -> list[ast.Name]:
    if isinstance(node, ast.Name):
        return [node]
    if isinstance(node, ast.Negate | ast.Not):
        return _names_in(node.operand)
    if isinstance(node, ast.BinaryOp | ast.Comparison | ast.BoolOp):
        return _names_in(node.left) + _names_in(node.right)
    if isinstance(node, ast.AggCall):
        if any(isinstance(a, ast.Star) for a in node.args):
            return [ast.Name("nodeid", node.pos)]
        return [n for arg in node.args for n in _names_in(arg)]
    return []


def _calls_in(node: ast.Expr | ast.Condition) -> list[ast.AggCall]:
    if isinstance(node, ast.AggCall):
        return [node]
    if isinstance(node, ast.Negate | ast.Not):
        return _calls_in(node.operand)
    if isinstance(node, ast.BinaryOp | ast.Comparison | ast.BoolOp):
        return _calls_in(node.left) + _calls_in(node.right)
    return []


def _contains_aggregate(node: ast.Expr | ast.Condition) -> bool:
    return bool(_calls_in(node))


def _int16(number: ast.Number, what: str) -> int:
    if isinstance(number.value, float) or number.unit is not None:
        raise _error(
            f"the {what} must be a whole number (the wire carries 16-bit integers)",
            number,
            "an integer",
        )
    if not INT16[0] <= number.value <= INT16[1]:
        raise _error(
            f"the {what} {number.value} does not fit 16 bits",
            number,
            "an integer between -32768 and 32767",
        )
    return number.value


def _error(message: str, node: ast.Expr | ast.Condition, expected: str = "") -> TinySQLError:
    pos = _position(node)
    return TinySQLError(message, pos.line, pos.column, expected)


def _position(node: ast.Expr | ast.Condition) -> ast.Pos:
    """The leftmost position of a node (an operator node's own pos is its operator)."""
    if isinstance(node, ast.BinaryOp | ast.Comparison | ast.BoolOp):
        return _position(node.left)
    return node.pos
