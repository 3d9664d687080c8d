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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

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


@dataclass(frozen=True)
class SampleColumns:
    """Samples as columns, one entry per evaluation: a 1,000-node run's truth holds
    ~480,000 of them, which as :class:`Sample` objects took ~1 KB each and most of the
    truth's time (issue 14)."""

    node: np.ndarray  # int64
    epoch: np.ndarray  # int64
    t_us: np.ndarray  # int64
    passed: np.ndarray  # bool
    values: np.ndarray  # int64, (samples, fields)
    have: np.ndarray  # bool, (samples, fields): the field was read

    def __len__(self) -> int:
        return len(self.node)

    def take(self, index: np.ndarray) -> SampleColumns:
        """The samples at ``index`` (positions or a mask), in its order."""
        return SampleColumns(
            self.node[index],
            self.epoch[index],
            self.t_us[index],
            self.passed[index],
            self.values[index],
            self.have[index],
        )

    def field(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Field ``index``'s values and whether each sample read it."""
        if index >= self.values.shape[1]:
            return np.zeros(len(self), np.int64), np.zeros(len(self), bool)
        return self.values[:, index], self.have[:, index]

    @classmethod
    def of(cls, samples: Iterable[Sample]) -> SampleColumns:
        """Columns of :class:`Sample` objects (tests write samples by hand)."""
        listed = list(samples)
        width = max((i + 1 for s in listed for i in s.values), default=0)
        values = np.zeros((len(listed), width), np.int64)
        have = np.zeros((len(listed), width), bool)
        for row, sample in enumerate(listed):
            for i, value in sample.values.items():
                values[row, i], have[row, i] = value, True
        return cls(
            np.array([s.node for s in listed], np.int64),
            np.array([s.epoch for s in listed], np.int64),
            np.array([s.t_us for s in listed], np.int64),
            np.array([s.passed for s in listed], bool),
            values,
            have,
        )


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
    #: a tuple query's readings are made as they are read (:class:`TruthReadings`)
    rows: Sequence[Reading | AggregateRow] = field(default_factory=list)
    anomalies: Anomalies = field(default_factory=Anomalies)
    #: (epoch, group) rows that had readings but HAVING rejected: a lossy network may
    #: deliver them (a partial SUM passes where the whole does not) without inventing data
    having_rejected: list[tuple[int, int]] = field(default_factory=list)


# --- arithmetic -----------------------------------------------------------------------------


def apply_arith(arith: FieldArith, value: np.ndarray) -> np.ndarray:
    """``value fieldOp fieldConst`` exactly, with C's integer division and shifts, on
    int64 columns (a mote's values and constants are at most 32 bits: no overflow)."""
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
        if op == "/":  # truncated toward zero
            quotient = np.abs(value) // abs(c)
            return np.where((value >= 0) == (c >= 0), quotient, -quotient)
        remainder = np.abs(value) % abs(c)  # the dividend's sign
        return np.where(value >= 0, remainder, -remainder)
    if op == ">>":
        return value >> min(c, 63) if c >= 0 else value
    raise ValueError(f"unknown arithmetic operator {op!r}")


def wrap16(value: np.ndarray) -> np.ndarray:
    """The int16 a group number is on the wire."""
    return ((value & 0xFFFF) ^ 0x8000) - 0x8000


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


def sample_columns(picked: np.ndarray) -> SampleColumns:
    """SAMPLED observations (:func:`sampled`) as sample columns, in their order."""
    width = int(picked["n_fields"].max(initial=0))  # the values past it are never read
    fields = np.arange(width)
    have = (picked["have"][:, None].astype(np.int64) >> fields & 1).astype(bool)
    return SampleColumns(
        picked["node"].astype(np.int64),
        picked["epoch"].astype(np.int64),
        picked["t_us"].astype(np.int64),
        picked["status"] != 0,
        picked["values"][:, :width].astype(np.int64),
        have & (fields < picked["n_fields"][:, None]),
    )


def extremes(
    keys: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct keys (sorted), each entry's place among them, and the least and the
    greatest value of each key's entries."""
    distinct, at = np.unique(keys, return_inverse=True)
    least = np.full(len(distinct), np.iinfo(np.int64).max)
    greatest = np.full(len(distinct), np.iinfo(np.int64).min)
    np.minimum.at(least, at, values)
    np.maximum.at(greatest, at, values)
    return distinct, at, least, greatest


# --- the readings of a tuple query ----------------------------------------------------------


class TruthReadings(Sequence[Reading]):
    """A tuple query's truth: one reading per passing sample, ordered by epoch and node,
    made when it is read. Held as columns, the truth of 1,000 nodes x 600 epochs takes
    about 25 MB; as rows it took most of the run's 1 GB, and most runs only count it."""

    def __init__(self, query: RegisteredQuery, samples: SampleColumns) -> None:
        self.query = query
        self.samples = samples
        self._readers = [(f.name, f.index, _wire_reader(f.wire_type)) for f in query.plan.fields]

    def __len__(self) -> int:
        return len(self.samples)

    @overload
    def __getitem__(self, index: int) -> Reading: ...

    @overload
    def __getitem__(self, index: slice) -> list[Reading]: ...

    def __getitem__(self, index: int | slice) -> Reading | list[Reading]:
        if isinstance(index, slice):
            return list(self._rows(np.arange(len(self))[index]))
        return next(self._rows(np.array([range(len(self))[index]])))

    def __iter__(self) -> Iterator[Reading]:
        return self._rows(np.arange(len(self)))

    def _rows(self, positions: np.ndarray, chunk: int = 4096) -> Iterator[Reading]:
        for start in range(0, len(positions), chunk):
            yield from self._made(positions[start : start + chunk])

    def _made(self, positions: np.ndarray) -> Iterator[Reading]:
        s = self.samples
        read = [
            (name, s.values[positions, i].tolist(), s.have[positions, i].tolist(), reader)
            if i < s.values.shape[1]
            else (name, None, None, reader)
            for name, i, reader in self._readers
        ]
        columns = (s.epoch[positions], s.node[positions], s.t_us[positions])
        for row, (epoch, node, t_us) in enumerate(zip(*(c.tolist() for c in columns), strict=True)):
            values = {
                name: reader(raw[row]) if has is not None and has[row] else None
                for name, raw, has, reader in read
            }
            yield reading_row(self.query, epoch, node, values, t_us / 1e6)  # type: ignore[arg-type]


# --- the reference evaluation ---------------------------------------------------------------


class _Evaluator:
    def __init__(self, query: RegisteredQuery) -> None:
        self.query = query
        self.plan: QueryPlan = query.plan
        self.truth = Truth(query)

    def run(self, samples: SampleColumns, through: int | None = None) -> Truth:
        kept = self._once_per_node_epoch(samples)
        self.truth.anomalies.skipped = _skipped_epochs(kept, through)
        passing = kept.take(self._verdicts(kept))
        if self.plan.is_aggregate:
            last_epoch = int(kept.epoch.max(initial=0))
            self._aggregate(passing, last_epoch)
        else:
            self.truth.rows = TruthReadings(self.query, passing)
        return self.truth

    def _once_per_node_epoch(self, samples: SampleColumns) -> SampleColumns:
        """A node's first evaluation of each epoch, ordered by epoch and node; a second
        one of the same epoch is an anomaly."""
        order = np.lexsort((samples.t_us, samples.epoch))  # stable: ties keep their order
        key = samples.epoch[order] << 16 | samples.node[order]
        _, first = np.unique(key, return_index=True)  # the first of each, sorted by key
        self.truth.anomalies.repeated += len(samples) - len(first)
        return samples.take(order[first])

    def _verdicts(self, samples: SampleColumns) -> np.ndarray:
        """Whether each sample passes every selection, checked in order as the mote does:
        the first selection whose field was not read fails the sample."""
        alive = np.ones(len(samples), bool)
        for selection in self.plan.selections:
            values, read = samples.field(selection.field_index)
            self.truth.anomalies.unread += int(np.count_nonzero(alive & ~read))
            alive &= read & _holds(selection, values)
        self.truth.anomalies.verdicts += int(np.count_nonzero(alive != samples.passed))
        return alive

    def _aggregate(self, passing: SampleColumns, last_epoch: int) -> None:
        epochs, _, _, latest = extremes(passing.epoch, passing.t_us)
        last_t = dict(zip(epochs.tolist(), (latest / 1e6).tolist(), strict=True))
        values: dict[tuple[int, int], dict[int, float | int]] = defaultdict(dict)
        rows: list[AggregateRow] = []
        for agg in self.plan.aggregates:
            for group, series in self._inputs(agg, passing).items():
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
                rows.append(row)
            elif any(v.value is not None for v in finalized):
                self.truth.having_rejected.append((epoch, group))
        self.truth.rows = rows

    def _inputs(
        self, agg: PlanAggregate, passing: SampleColumns
    ) -> dict[int, dict[int, list[int]]]:
        """group -> epoch -> the values one aggregate takes in, from the samples that read
        its field (and its group's)."""
        raw, read = passing.field(agg.field_index)
        self.truth.anomalies.unread += int(np.count_nonzero(~read))
        group = np.zeros(len(passing), np.int64)
        if agg.group is not None:
            key, key_read = passing.field(agg.group.field_index)
            self.truth.anomalies.unread += int(np.count_nonzero(read & ~key_read))
            read = read & key_read
            group = wrap16(apply_arith(agg.group.arith, key))
        group, epoch, value = group[read], passing.epoch[read], apply_arith(agg.arith, raw[read])
        order = np.lexsort((epoch, group))
        group, epoch, value = group[order], epoch[order], value[order]
        cuts = np.flatnonzero((np.diff(group) != 0) | (np.diff(epoch) != 0)) + 1
        inputs: dict[int, dict[int, list[int]]] = defaultdict(dict)
        for start, stop in zip([0, *cuts.tolist()], [*cuts.tolist(), len(value)], strict=True):
            if start < stop:
                inputs[int(group[start])][int(epoch[start])] = value[start:stop].tolist()
        return inputs


def _skipped_epochs(kept: SampleColumns, through: int | None) -> int:
    """Epochs each node let pass between its first and last evaluation (one per epoch), up
    to epoch ``through`` (the last compared: `sampled` counts node-epochs up to it)."""
    if through is not None:
        kept = kept.take(kept.epoch <= through)
    nodes, at, first, last = extremes(kept.node, kept.epoch)
    return int((last - first + 1 - np.bincount(at, minlength=len(nodes))).sum())


def _holds(selection: PlanSelection, value: np.ndarray) -> np.ndarray:
    return np.asarray(_COMPARE[selection.op](apply_arith(selection.arith, value), selection.value))


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


def ground_truth(
    query: RegisteredQuery, samples: SampleColumns, through: int | None = None
) -> Truth:
    """The truth of ``query`` from its nodes' samples (see the module docstring); skipped
    epochs are counted up to epoch ``through`` when given."""
    return _Evaluator(query).run(samples, through)
