"""Query planning: TinySQL -> QueryPlan (field/expression layout, selection order, epoch)."""

from motebase.gateway.plan.compile import compile_query
from motebase.gateway.plan.lifetime import BatteryState
from motebase.gateway.plan.model import (
    FieldArith,
    GroupBy,
    OutputAction,
    PlanAggregate,
    PlanExpression,
    PlanField,
    PlanSelection,
    QueryPlan,
)
from motebase.gateway.tinysql import StopQuery, TinySQLError, parse_statement

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
