"""Query planning: TinySQL -> QueryPlan (field/expression layout, selection order, epoch)."""

from gateway.plan.compile import compile_query
from gateway.plan.lifetime import BatteryState
from gateway.plan.model import (
    FieldArith,
    GroupBy,
    OutputAction,
    PlanAggregate,
    PlanExpression,
    PlanField,
    PlanSelection,
    QueryPlan,
)
from gateway.tinysql import StopQuery, TinySQLError, parse_statement

__all__ = [
    "BatteryState",
    "FieldArith",
    "GroupBy",
    "OutputAction",
    "PlanAggregate",
    "PlanExpression",
    "PlanField",
    "PlanSelection",
    "QueryPlan",
    "StopQuery",
    "TinySQLError",
    "compile_query",
    "parse_statement",
]
