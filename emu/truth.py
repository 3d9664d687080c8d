"""Ground truth: the rows a perfect network would have delivered, from what each node read.

The firmware reports through ``hal.observe`` (firmware/hal/hal.h) the attribute values each
evaluation of a query read, node by node and epoch by epoch. From those alone this module
computes, with its own implementation of the query's semantics, the rows the gateway
would produce if every node that ran the query in an epoch had delivered its tuple or its
partial state over a lossless network. They are built by the gateway's own row functions
(:func:`motebase.gateway.assembly.reading_row`, :func:`motebase.gateway.assembly.aggregate_row`),
so truth and results share one schema and compare row by row.

Semantics (what "right" means; docs/accuracy.md):
- arithmetic is exact integer arithmetic as C does it on ints (division and modulo
  truncate toward zero, >> is arithmetic; a zero divisor leaves the value unchanged, as
  on the mote); group numbers are the int16 the wire carries;
- a reading counts for an epoch when every selection holds;
- SUM, COUNT, MIN, MAX exact; AVG = sum / count;
- WINxxx(w, s) reports at every epoch e with e % s == 0 over the readings of epochs
  e - w + 1 .. e, if there are any;
- EXPAVG(b) smooths each group's per-epoch average: v = v + (avg - v) / 2^(16 - b),
  starting at 0, reported at the epochs that have readings.
A row exists for (epoch, group) when at least one aggregate has a value there.

Disagreements between the firmware and this reference that the observations alone show
(a selection verdict that differs, a field that should have been read and was not, one
node evaluating one epoch twice) are counted in :class:`Anomalies`.
"""

from __future__ import annotations

import functools
import struct
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import construct as cs
import numpy as np

from motebase.gateway.assembly import (
    AggregateRow,
    Reading,
    RegisteredQuery,
    aggregate_row,
    reading_row,
)
from motebase.gateway.finalize import AggregateValue
from motebase.gateway.plan.model import FieldArith, PlanAggregate, PlanSelection, QueryPlan
from motebase.gateway.protocol.aggregates import WINDOWED, AggOp
from motebase.gateway.protocol.result import FIELD_VALUE

#: Firmware observation kinds (firmware/hal/hal.h ``enum mote_obs_kind``).
OBS_SAMPLED = 1
OBS_QUERY = 2
#: Query status codes in OBS_QUERY reports (firmware/query/query.h).
QUERY_FREE, QUERY_RUNNING, QUERY_DRAINING = 0, 2, 3

_COMPARE = {
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
}


@dataclass(frozen=True)
class Sample:
    """One node's evaluation of a query in one epoch: what it read and its verdict."""

    node: int
    epoch: int
    t_us: int
    passed: bool
    values: Mapping[int, int]  # field index -> value read; unread fields absent


@dataclass
class Anomalies:
    """Where the firmware's own evaluation disagrees with the reference."""

    verdicts: int = 0  # the selections' outcome differs
    unread: int = 0  # a field the evaluation needed was not read
    repeated: int = 0  # a node evaluated the same epoch twice
    #: epochs a node let pass without evaluating the query, between its first and last: a
    #: schedule that cannot keep up samples less often than asked, and the rows delivered
    #: look complete against a truth that has no reading to miss
    skipped: int = 0

    @property
    def total(self) -> int:
        return self.verdicts + self.unread + self.repeated + self.skipped


@dataclass
class Truth:
    """The truth of one query: its rows and where the firmware disagreed."""

    query: RegisteredQuery
    rows: list[Reading | AggregateRow] = field(default_factory=list)
    anomalies: Anomalies = field(default_factory=Anomalies)
    #: epoch -> nodes that evaluated the query in it (every node that ran it)
    ran: dict[int, set[int]] = field(default_factory=dict)
    #: (epoch, group) rows that had readings but HAVING rejected: a lossy network may
    #: deliver them (a partial SUM passes where the whole does not) without inventing data
    having_rejected: list[tuple[int, int]] = field(default_factory=list)


# --- arithmetic -----------------------------------------------------------------------------


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def apply_arith(arith: FieldArith, value: int) -> int:
    """``value fieldOp fieldConst`` exactly, with C's integer division and shifts."""
    op, c = arith.op, arith.const
    if not op:
        return value
    if op == "*":
        return value * c
    if op == "+":
        return value + c
    if op == "-":
        return value - c
    if op in ("/", "%"):
        if c == 0:
            return value  # the mote leaves the value unchanged (firmware/ops/arith.h)
        return _c_div(value, c) if op == "/" else _c_mod(value, c)
    if op == ">>":
        return value >> c if c >= 0 else value
    raise ValueError(f"unknown arithmetic operator {op!r}")


def wrap16(value: int) -> int:
    value &= 0xFFFF
    return value - 0x10000 if value >= 0x8000 else value


def wire_value(wire_type: int, value: int) -> int | bytes | str:
    """A sampled value as it reads back from a tuple field of ``wire_type``."""
    return _wire_reader(wire_type)(value)


@functools.cache
def _wire_reader(wire_type: int) -> Callable[[int], int | bytes | str]:
    """``wire_value`` for one type: a number type's value is its low bytes read back
    with the construct field's own struct format (one call per value of the truth,
    which holds one per reading); strings and bytes are parsed by the construct."""
    construct = FIELD_VALUE[wire_type]
    size = construct.sizeof()
    mask = (1 << (8 * size)) - 1
    if isinstance(construct, cs.FormatField):
        code = construct.fmtstr[-1]
        # An integer format reads back the low bytes as two's complement or unsigned: the
        # arithmetic gives what unpacking the bytes gives (tests/test_truth_wire_value.py
        # holds it to the construct), at a third of the cost.
        if code in "BHLIQ":
            return lambda value: value & mask
        if code in "bhliq":
            sign = 1 << (8 * size - 1)
            return lambda value: ((value & mask) ^ sign) - sign
        unpack = struct.Struct(construct.fmtstr).unpack
        return lambda value: unpack((value & mask).to_bytes(size, "little"))[0]
    return lambda value: construct.parse((value & mask).to_bytes(size, "little"))


# --- samples --------------------------------------------------------------------------------


def sampled(observations: np.ndarray, qid: int, since_us: int = 0) -> np.ndarray:
    """The SAMPLED observations of query ``qid`` made at or after ``since_us``."""
    return observations[
        (observations["kind"] == OBS_SAMPLED)
        & (observations["qid"] == qid)
        & (observations["t_us"] >= since_us)
    ]


def samples_from(observations: np.ndarray, qid: int, since_us: int = 0) -> list[Sample]:
    """The SAMPLED reports of query ``qid`` made at or after ``since_us``."""
    return samples_of(sampled(observations, qid, since_us))


def samples_of(picked: np.ndarray) -> list[Sample]:
    """SAMPLED observations (:func:`sampled`) as samples, in their order."""
    # Whole columns to Python ints at once, not a numpy scalar per field of every sample
    # (issue 14: a 1,000-node run's truth holds ~480,000 samples).
    columns = (picked[name].tolist() for name in ("node", "epoch", "t_us", "status", "have"))
    width = int(picked["n_fields"].max(initial=0))  # the values past it are never read
    return [
        Sample(
            node,
            epoch,
            t_us,
            bool(status),
            {i: value for i, value in enumerate(values[:n]) if have >> i & 1},
        )
        for node, epoch, t_us, status, have, n, values in zip(
            *columns, picked["n_fields"].tolist(), picked["values"][:, :width].tolist(), strict=True
        )
    ]


# --- the reference evaluation ---------------------------------------------------------------


class _Evaluator:
    def __init__(self, query: RegisteredQuery) -> None:
        self.query = query
        self.plan: QueryPlan = query.plan
        self.truth = Truth(query)

    def run(self, samples: Iterable[Sample]) -> Truth:
        by_epoch: dict[int, dict[int, Sample]] = defaultdict(dict)
        for sample in sorted(samples, key=lambda s: (s.epoch, s.t_us)):
            if sample.node in by_epoch[sample.epoch]:
                self.truth.anomalies.repeated += 1
                continue
            by_epoch[sample.epoch][sample.node] = sample
        self.truth.ran = {e: set(nodes) for e, nodes in by_epoch.items()}
        self.truth.anomalies.skipped = _skipped_epochs(self.truth.ran)
        passing = {
            e: [s for s in by_node.values() if self._passes(s)] for e, by_node in by_epoch.items()
        }
        if self.plan.is_aggregate:
            self._aggregate(passing)
        else:
            self._tuples(passing)
        return self.truth

    def _passes(self, sample: Sample) -> bool:
        verdict = True
        for selection in self.plan.selections:
            value = sample.values.get(selection.field_index)
            if value is None:
                self.truth.anomalies.unread += 1
                verdict = False
                break
            if not _holds(selection, value):
                verdict = False
                break
        if verdict != sample.passed:
            self.truth.anomalies.verdicts += 1
        return verdict

    def _tuples(self, passing: Mapping[int, list[Sample]]) -> None:
        readers = [(f.name, f.index, _wire_reader(f.wire_type)) for f in self.plan.fields]
        for epoch in sorted(passing):
            for sample in sorted(passing[epoch], key=lambda s: s.node):
                read = sample.values
                values = {
                    name: reader(read[index]) if index in read else None
                    for name, index, reader in readers
                }
                self.truth.rows.append(
                    reading_row(self.query, epoch, sample.node, values, sample.t_us / 1e6)  # type: ignore[arg-type]
                )

    def _aggregate(self, passing: Mapping[int, list[Sample]]) -> None:
        # inputs[expr_idx][group][epoch] = values of the readings
        inputs: dict[int, dict[int, dict[int, list[int]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        last_t: dict[int, float] = {}
        for epoch, samples in passing.items():
            for sample in samples:
                last_t[epoch] = max(last_t.get(epoch, 0.0), sample.t_us / 1e6)
                for agg in self.plan.aggregates:
                    reading = self._reading(agg, sample)
                    if reading is not None:
                        group, value = reading
                        inputs[agg.expr_idx][group][epoch].append(value)
        values: dict[tuple[int, int], dict[int, float | int]] = defaultdict(dict)
        last_epoch = max(self.truth.ran, default=0)
        for agg in self.plan.aggregates:
            for group, series in inputs[agg.expr_idx].items():
                for epoch, value in _aggregate_series(agg, series, last_epoch).items():
                    values[(epoch, group)][agg.expr_idx] = value
        for epoch, group in sorted(values):
            present = values[(epoch, group)]
            finalized = [
                AggregateValue(
                    a.name, a.column, a.attribute, a.expr_idx, present.get(a.expr_idx), None
                )
                for a in self.plan.aggregates
            ]
            row = aggregate_row(self.query, epoch, group, finalized, last_t.get(epoch, 0.0))
            if row is not None:
                self.truth.rows.append(row)
            elif any(v.value is not None for v in finalized):
                self.truth.having_rejected.append((epoch, group))

    def _reading(self, agg: PlanAggregate, sample: Sample) -> tuple[int, int] | None:
        value = sample.values.get(agg.field_index)
        if value is None:
            self.truth.anomalies.unread += 1
            return None
        group = 0
        if agg.group is not None:
            key = sample.values.get(agg.group.field_index)
            if key is None:
                self.truth.anomalies.unread += 1
                return None
            group = wrap16(apply_arith(agg.group.arith, key))
        return group, apply_arith(agg.arith, value)


def _skipped_epochs(ran: Mapping[int, set[int]]) -> int:
    epochs: dict[int, list[int]] = defaultdict(list)
    for epoch, nodes in ran.items():
        for node in nodes:
            epochs[node].append(epoch)
    return sum(max(es) - min(es) + 1 - len(es) for es in epochs.values())


def _holds(selection: PlanSelection, value: int) -> bool:
    return bool(_COMPARE[selection.op](apply_arith(selection.arith, value), selection.value))


def _aggregate_series(
    agg: PlanAggregate, series: Mapping[int, list[int]], last_epoch: int
) -> dict[int, float | int]:
    """The value of one aggregate of one group at each epoch where it reports."""
    op = AggOp(agg.op_id)
    if op in WINDOWED:
        return _windowed(op, agg.args, series, last_epoch)
    if op == AggOp.EXPAVG:
        return _expavg(agg.args, series)
    return {epoch: _plain(op, values) for epoch, values in series.items() if values}


def _plain(op: AggOp, values: Sequence[int]) -> float | int:
    if op in (AggOp.SUM, AggOp.WINSUM):
        return sum(values)
    if op in (AggOp.CNT, AggOp.WINCNT):
        return len(values)
    if op in (AggOp.MIN, AggOp.WINMIN):
        return min(values)
    if op in (AggOp.MAX, AggOp.WINMAX):
        return max(values)
    if op in (AggOp.AVG, AggOp.WINAVG):
        return sum(values) / len(values)
    raise ValueError(f"no reference semantics for aggregate {op.name}")


def _windowed(
    op: AggOp, args: Sequence[int], series: Mapping[int, list[int]], last_epoch: int
) -> dict[int, float | int]:
    window, slide = args[0], max(1, args[1])
    out: dict[int, float | int] = {}
    for end in range(slide, last_epoch + 1, slide):
        values = [v for e in range(end - window + 1, end + 1) for v in series.get(e, ())]
        if values:
            out[end] = _plain(op, values)
    return out


def _expavg(args: Sequence[int], series: Mapping[int, list[int]]) -> dict[int, float | int]:
    # the gateway's own smoothing of wide EXPAVG records, so the two cannot drift apart
    from motebase.gateway.finalize import expavg_step

    out: dict[int, float | int] = {}
    smoothed = 0.0
    for epoch in sorted(series):
        values = series[epoch]
        if values:
            smoothed = expavg_step(smoothed, sum(values) / len(values), args[0])
            out[epoch] = smoothed
    return out


def ground_truth(query: RegisteredQuery, samples: Iterable[Sample]) -> Truth:
    """The truth of ``query`` from its nodes' samples (see the module docstring)."""
    return _Evaluator(query).run(samples)
