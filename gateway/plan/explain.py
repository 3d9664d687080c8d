"""What the planner decided and why, as ``mote explain`` prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from motebase.gateway.plan.lifetime import LifetimeEstimate
from motebase.gateway.plan.model import PlanExpression, PlanField, PlanSelection, QueryPlan
from motebase.gateway.plan.ordering import OrderCost
from motebase.gateway.plan.pushdown import PushdownDecision

if TYPE_CHECKING:
    from collections.abc import Sequence

TICK_MS = 256  # TinyDB 1.x clock tick


def explain(plan: QueryPlan) -> str:
    """What ``mote explain`` prints for a compiled plan."""
    return plan.explanation.render()


@dataclass(frozen=True)
class Explain:
    sql: str
    fields: tuple[PlanField, ...]
    expressions: tuple[PlanExpression, ...]
    requested_epoch_ms: float | None
    epoch_units: int
    num_epochs: int | None
    chosen: OrderCost
    naive: OrderCost
    sample_all: OrderCost
    selections_in_source_order: tuple[PlanSelection, ...]
    optimized: bool
    pushdown: PushdownDecision | None
    lifetime: LifetimeEstimate | None
    notes: tuple[str, ...]

    @property
    def reordered(self) -> bool:
        return self.chosen.selection_order != self.naive.selection_order

    def render(self) -> str:
        lines = [f"query: {self.sql}", *self._epoch_lines(), "fields:"]
        lines += [f"  {f.index}: {f.name} (type {f.wire_type})" for f in self.fields]
        lines.append("expressions (wire order):")
        lines += [f"  {e.expr_idx}: {_expression(e)}" for e in self.expressions] or ["  none"]
        lines += self._ordering_lines()
        if self.pushdown is not None:
            lines.append("exemplary-aggregate pushdown (§4.2.1):")
            lines += [f"  {line}" for line in self.pushdown.describe()]
        if self.lifetime is not None:
            lines.append("lifetime (§3.6):")
            lines += [f"  {line}" for line in self.lifetime.arithmetic()]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def _epoch_lines(self) -> list[str]:
        if self.requested_epoch_ms is None:
            return ["epoch: ONCE (epochDuration 0x7fff)"]
        sent = self.epoch_units * 10
        ticks = self.epoch_units * 10 // TICK_MS
        legacy = (
            f"rounds down to {ticks} x {TICK_MS} ms = {ticks * TICK_MS} ms"
            if ticks
            else f"cannot run an epoch shorter than its {TICK_MS}-ms tick"
        )
        source = "from LIFETIME" if self.lifetime else "requested"
        line = (
            f"epoch: {self.requested_epoch_ms:g} ms {source} -> epochDuration "
            f"{self.epoch_units} x 10 ms = {sent} ms (an unmodified TinyDB 1.x mote "
            f"{legacy})"
        )
        runs = "until stopped" if self.num_epochs is None else f"for {self.num_epochs} epochs"
        return [line, f"runs {runs}"]

    def _ordering_lines(self) -> list[str]:
        if not self.selections_in_source_order:
            return [
                f"sampling cost per epoch: {self.sample_all.energy_uj:,.3f} µJ, "
                f"{self.sample_all.time_ms:,.2f} ms (no predicates to order)"
            ]
        lines = ["selection order (§4.2.2), expected cost per epoch and node:"]
        costs = [self.chosen] + [c for c in (self.naive, self.sample_all) if c is not self.chosen]
        for cost in costs:
            tag = " <- chosen" if cost is self.chosen else ""
            lines.append(
                f"  {cost.label}: {_order(cost, self.selections_in_source_order)} = "
                f"{cost.energy_uj:,.3f} µJ, {cost.time_ms:,.2f} ms{tag}"
            )
        lines.append(f"  why: {self._reason()}")
        lines.append("  ranks (cost / (1 - P(pass)), lower first):")
        lines += [
            f"    {step.attribute}: {step.energy_uj:g} µJ, P(pass) "
            f"{step.pass_probability:.4f}, rank {_rank(step.rank)}"
            for step in self.chosen.steps
            if step.predicates
        ]
        return lines

    def _reason(self) -> str:
        if not self.optimized:
            return "optimisation off: the TinyDB tools' order (WHERE predicates reversed)"
        if not self.reordered:
            return "the tools' order is already the cheapest, kept for byte compatibility"
        saved = self.naive.energy_uj - self.chosen.energy_uj
        first = self.chosen.steps[0]
        return (
            f"sampling {first.attribute} first and skipping later sensors when its "
            f"predicates fail saves {saved:,.3f} µJ per epoch "
            f"({_percent(saved, self.naive.energy_uj)} of the tools' order)"
        )


def _expression(expr: PlanExpression) -> str:
    kind = "selection" if isinstance(expr, PlanSelection) else "aggregate"
    extra = f" (P(pass) {expr.selectivity:.4f})" if isinstance(expr, PlanSelection) else ""
    return f"{kind} {expr.describe()}{extra}"


def _order(cost: OrderCost, selections: Sequence[PlanSelection]) -> str:
    parts = []
    for step in cost.steps:
        predicates = [selections[i].describe() for i in step.predicates]
        parts.append(f"sample {step.attribute}" + "".join(f", [{p}]" for p in predicates))
    return " -> ".join(parts) if parts else "nothing to sample"


def _rank(value: float) -> str:
    return "inf (never filters)" if value == float("inf") else f"{value:,.3f}"


def _percent(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "0%"
