"""Exemplary-aggregate pushdown (TODS 2005 §4.2.1).

For ``SELECT WINMAX(light, 8s, 8s) WHERE mag_x > x``, instead of sampling the expensive
``mag_x`` first and ``light`` for the tuples that pass, a node can sample the cheap
``light`` first and compare it with the running maximum: only a reading that would become
the new maximum needs ``mag_x`` and its predicate. That pays when a new maximum is rare.

Expected cost per epoch, with E_w the expected cost of the WHERE clause in the chosen
order, s its pass probability and c_a the aggregated attribute's cost:

    predicates first:  E_w + s * c_a
    aggregate first:   c_a + p * E_w

p is the probability that a reading improves the aggregate. With readings uniform and
independent, the k-th of the window's readings improves on the k-1 before it of which
s(k-1) passed the predicates with probability 1 / (1 + s(k-1)); p averages that over a
window of w epochs. A plain MIN/MAX starts afresh every epoch (w = 1, p = 1), so pushdown
never pays for it.

The decision is reported, not encoded: a TinyDB query message orders selections before
aggregates and has no "sample the aggregate first" operator, so motes cannot be told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from motebase.gateway.catalog import Attribute
from motebase.gateway.plan.model import PlanAggregate
from motebase.gateway.plan.ordering import OrderCost


@dataclass(frozen=True)
class PushdownDecision:
    aggregate: str
    attribute: str
    window: int
    improve_probability: float
    predicates_first_uj: float
    aggregate_first_uj: float

    @property
    def push_down(self) -> bool:
        return self.aggregate_first_uj < self.predicates_first_uj

    def describe(self) -> list[str]:
        verdict = (
            "sample the aggregate attribute first"
            if self.push_down
            else "evaluate the predicates first"
        )
        return [
            f"{self.aggregate} over {self.attribute}, window {self.window} epoch(s): "
            f"P(reading improves the aggregate) = {self.improve_probability:.3f}",
            f"predicates first: {self.predicates_first_uj:,.3f} µJ/epoch; "
            f"{self.attribute} first: {self.aggregate_first_uj:,.3f} µJ/epoch -> {verdict}",
            "(reported only: the query message cannot ask motes to sample an aggregate "
            "before the selections)",
        ]


def improve_probability(window: int, passing: float) -> float:
    window = max(1, window)
    return sum(1.0 / (1.0 + passing * (k - 1)) for k in range(1, window + 1)) / window


def decide_pushdown(
    aggregates: tuple[PlanAggregate, ...],
    where: OrderCost,
    passing: float,
    attributes: Mapping[str, Attribute],
) -> PushdownDecision | None:
    """The §4.2.1 decision, or None when the query has no such choice."""
    exemplary = {"MIN", "MAX", "WINMIN", "WINMAX"}
    if not aggregates or not where.selection_order:
        return None
    if any(a.name not in exemplary or a.group is not None for a in aggregates):
        return None
    if len({a.attribute for a in aggregates}) != 1:
        return None
    first = aggregates[0]
    if any(step.attribute == first.attribute for step in where.steps if step.predicates):
        return None  # the predicates sample the aggregate's attribute anyway
    attribute = attributes[first.attribute]
    cost = 0.0 if attribute.constant else attribute.energy_uj
    window = first.args[0] if first.temporal and first.args else 1
    p = improve_probability(window, passing)
    where_uj = sum(s.energy_uj * s.reach_probability for s in where.steps if s.predicates)
    return PushdownDecision(
        first.name, first.attribute, window, p, where_uj + passing * cost, cost + p * where_uj
    )
