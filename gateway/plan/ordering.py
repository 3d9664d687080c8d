"""Ordering of sampling and predicates (TODS 2005 §4.2.2).

Each attribute the WHERE clause reads is a sampling job with a cost (its energy per
sample, from the catalog) and selectivity 1; each predicate is a free job with a
selectivity, estimated by assuming values uniform over the catalog range; a predicate can
only run after its attribute was sampled. Motes sample lazily in expression order, so a
failed predicate saves the sampling of every attribute that only later expressions need.
The expected cost of an order is therefore

    sum over jobs j of  cost(j) * product of the selectivities of the predicates before j

and attributes that only the select list or the aggregates need are paid for when every
predicate passed.

Because predicates cost nothing once their attribute is sampled, an optimal order runs
all predicates of an attribute right after sampling it. Sampling an attribute together
with its predicates then is one job of cost c and pass probability s (the product of its
predicates' selectivities), the jobs are independent, and ordering them by ascending
rank c / (1 - s) minimises the expected cost (the classic result for independent
filters; a job that never filters, s = 1, goes last). That order honours the precedence
constraints by construction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from motebase.gateway.catalog import Attribute
from motebase.gateway.plan.model import FieldArith, PlanSelection


def selectivity(attribute: Attribute, arith: FieldArith, op: str, value: int) -> float:
    """Fraction of readings passing ``(attribute arith) op value``, values uniform."""
    lo, hi = _transformed_range(attribute.min_value, attribute.max_value, arith)
    count = hi - lo + 1
    if op == "=":
        passing = 1 if lo <= value <= hi else 0
    elif op == "<>":
        passing = count - (1 if lo <= value <= hi else 0)
    elif op == ">":
        passing = hi - max(value, lo - 1)
    elif op == ">=":
        passing = hi - max(value - 1, lo - 1)
    elif op == "<":
        passing = min(value - 1, hi) - lo + 1
    else:  # "<="
        passing = min(value, hi) - lo + 1
    return min(1.0, max(0.0, passing / count))


def _transformed_range(lo: int, hi: int, arith: FieldArith) -> tuple[int, int]:
    """Range of ``x op const`` for x in [lo, hi] (every op is monotone except %)."""
    op, c = arith.op, arith.const
    if op == "%" and c != 0:
        return (0, abs(c) - 1) if lo >= 0 else (-(abs(c) - 1), abs(c) - 1)
    apply = {
        "": lambda x: x,
        "+": lambda x: x + c,
        "-": lambda x: x - c,
        "*": lambda x: x * c,
        "/": lambda x: int(x / c) if c else x,
        ">>": lambda x: x >> c if c >= 0 else x,
        "%": lambda x: x,
    }[op]
    a, b = apply(lo), apply(hi)
    return (min(a, b), max(a, b))


@dataclass(frozen=True)
class Acquisition:
    """Sampling one attribute, then running its predicates (indices into the selections)."""

    attribute: str
    energy_uj: float
    time_ms: float
    predicates: tuple[int, ...]
    pass_probability: float
    reach_probability: float
    """Probability that evaluation gets this far (all earlier predicates passed)."""

    @property
    def rank(self) -> float:
        return _rank(self.energy_uj, self.pass_probability)


@dataclass(frozen=True)
class OrderCost:
    """One evaluation order with its expected cost per epoch and per node."""

    label: str
    selection_order: tuple[int, ...]
    steps: tuple[Acquisition, ...]
    energy_uj: float
    time_ms: float


def estimate(
    label: str,
    selections: Sequence[PlanSelection],
    order: Sequence[int],
    attributes: Mapping[str, Attribute],
    needed: Sequence[str],
) -> OrderCost:
    """Expected cost of evaluating ``selections`` in ``order``, then sampling ``needed``."""
    steps: list[Acquisition] = []
    reach = 1.0
    for index in order:
        selection = selections[index]
        if steps and steps[-1].attribute == selection.attribute:
            last = steps[-1]
            steps[-1] = Acquisition(
                last.attribute,
                last.energy_uj,
                last.time_ms,
                (*last.predicates, index),
                last.pass_probability * selection.selectivity,
                last.reach_probability,
            )
        else:
            resampled = any(s.attribute == selection.attribute for s in steps)
            attribute = attributes[selection.attribute]
            steps.append(
                Acquisition(
                    selection.attribute,
                    0.0 if resampled else _energy(attribute),
                    0.0 if resampled else attribute.time_ms,
                    (index,),
                    selection.selectivity,
                    reach,
                )
            )
        reach *= selection.selectivity
    sampled = {s.attribute for s in steps}
    for name in needed:
        if name not in sampled:
            sampled.add(name)
            steps.append(
                Acquisition(
                    name, _energy(attributes[name]), attributes[name].time_ms, (), 1.0, reach
                )
            )
    return OrderCost(
        label,
        tuple(order),
        tuple(steps),
        sum(s.energy_uj * s.reach_probability for s in steps),
        sum(s.time_ms * s.reach_probability for s in steps),
    )


def cheapest_order(
    selections: Sequence[PlanSelection], attributes: Mapping[str, Attribute]
) -> tuple[int, ...]:
    """Selection indices in the order of least expected sampling cost (module docstring).

    Ties keep the order given, so an order that is already optimal is left alone.
    """
    groups: dict[str, list[int]] = {}
    for index, selection in enumerate(selections):
        groups.setdefault(selection.attribute, []).append(index)

    def group_rank(name: str) -> float:
        passing = math.prod(selections[i].selectivity for i in groups[name])
        return _rank(_energy(attributes[name]), passing)

    order: list[int] = []
    for name in sorted(groups, key=group_rank):
        order.extend(sorted(groups[name], key=lambda i: selections[i].selectivity))
    return tuple(order)


def _energy(attribute: Attribute) -> float:
    return 0.0 if attribute.constant else attribute.energy_uj


def _rank(cost: float, passing: float) -> float:
    if cost == 0.0:
        return 0.0
    if passing >= 1.0:
        return math.inf
    return cost / (1.0 - passing)
