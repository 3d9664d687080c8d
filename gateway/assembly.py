"""Result assembly: raw TinyDB results in, query rows out.

A running query produces two kinds of wire results (wire format §7): tuples, one per
node and epoch, and aggregate records, one per (epoch, group, aggregate expression)
carrying a raw partial state. Tuples become rows the moment they arrive. Aggregate
records are collected in a bucket per (query, epoch, group) and the bucket becomes one
row when it is closed: once it holds every aggregate of the query and a later epoch has
started, once results run ``reorder_window`` epochs ahead of it, when it has been open
longer than ``close_timeout`` seconds, or when the session ends. Closing finalizes each
partial state (AVG = sum/count, ...), then applies HAVING and the select-list arithmetic
that the wire format cannot carry. Partial states are read in the layout the plan names
(``wide_states``: motebase's 32-bit layout); a wide EXPAVG record carries only its
epoch's average, which is smoothed here, per (query, group), as the rows close.

The radio and the root's retransmissions deliver duplicates and, with the delta queue
policy, epochs out of order. A tuple from the same node for the same epoch is emitted
once; an aggregate record for an expression a bucket already holds is ignored (the
original Java tool behaves the same way); a record for a bucket already closed, or older
than the reorder window, is counted as late and dropped. Row epochs keep counting past
the wire's 16-bit wrap (65535 -> 0 becomes 65536).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from motebase.gateway.finalize import AggregateSpec as FinalizeSpec
from motebase.gateway.finalize import (
    AggregateValue,
    FinalizeError,
    expavg_step,
    finalize,
    merge_partials,
)
from motebase.gateway.protocol.aggregates import WINDOWED, AggOp

Value = int | float | None

#: Epochs are 16 bits on the wire (QueryResult.epoch) and wrap after 65535.
_EPOCH_MASK = 0xFFFF
_EPOCH_HALF = 0x8000


class FieldSpec(Protocol):
    """One query field as the planner describes it."""

    @property
    def name(self) -> str: ...

    @property
    def wire_type(self) -> int: ...


class AggregateSpec(FinalizeSpec, Protocol):
    """One aggregate expression as the planner describes it (PlanAggregate)."""

    @property
    def hidden(self) -> bool:
        """Only needed by HAVING: finalized, but not an output of the query."""
        ...


class ResultPlan(Protocol):
    """What assembly needs from a compiled query plan (motebase.gateway.plan.QueryPlan)."""

    @property
    def fields(self) -> Sequence[FieldSpec]: ...

    @property
    def aggregates(self) -> Sequence[AggregateSpec]: ...

    @property
    def epoch_ms(self) -> int | None: ...

    @property
    def group_by(self) -> str | None: ...

    @property
    def output_columns(self) -> Sequence[str]: ...

    def column_references(self) -> Mapping[str, str]:
        """Output columns that only name a row value, with the key they name."""
        ...

    @property
    def wide_states(self) -> bool:
        """Aggregate states in motebase's wide layout rather than TinyDB's."""
        ...

    def having_matches(self, row: Mapping[str, Value]) -> bool: ...

    def project(self, row: Mapping[str, Value]) -> dict[str, Value]: ...


@dataclass(frozen=True)
class TupleResult:
    """A decoded tuple result (qrType 2) of one node for one epoch."""

    query_id: int
    epoch: int
    origin: int
    values: dict[str, int | None]
    #: The result's time-sync stamp (ms), None where the sender left it 0.
    node_time: int | None = None


@dataclass(frozen=True)
class AggregateResult:
    """A decoded aggregate record (qrType 3): one partial state of one group."""

    query_id: int
    epoch: int
    origin: int
    group: int
    expr_idx: int
    partial: bytes
    #: The result's time-sync stamp (ms), None where the sender left it 0.
    node_time: int | None = None


WireResult = TupleResult | AggregateResult


@dataclass(frozen=True)
class Reading:
    """One tuple of one node: raw field values by name and the projected output columns."""

    query_id: int
    epoch: int
    node_id: int
    epoch_time: float
    receive_time: float
    values: dict[str, int | None]
    columns: dict[str, Value]
    #: The network's logical time in ms when the basestation passed the tuple to the
    #: serial port (its time-sync stamp); None from a mote that does not stamp it.
    node_time: int | None = None


@dataclass(frozen=True)
class AggregateRow:
    """The finalized aggregates of one group in one epoch."""

    query_id: int
    epoch: int
    group: int
    epoch_time: float
    receive_time: float
    aggregates: tuple[AggregateValue, ...]
    columns: dict[str, Value]
    #: The latest time-sync stamp (ms) of the records the row was finalized from: the
    #: network's logical time when the basestation passed the last of them to the serial
    #: port, as ``receive_time`` is when the gateway got it; None when none was stamped.
    node_time: int | None = None


Row = Reading | AggregateRow


@dataclass(frozen=True)
class ReadingBatch:
    """Readings of one query as columns, one entry per tuple: what a run of tuple results
    assembles into without a Python object per row. :meth:`readings` gives the same
    :class:`Reading` rows the tuples would have made one at a time."""

    query_id: int
    plan: ResultPlan
    epoch: np.ndarray  # int64, row epochs
    node_id: np.ndarray  # int64
    epoch_time: np.ndarray  # float64
    receive_time: float
    #: The time-sync stamps in ms, 0 where the sender left it 0 (Reading: None).
    node_time: np.ndarray  # int64
    #: Raw field values by name, in the plan's order; None: NULL in every tuple.
    values: Mapping[str, np.ndarray | None]

    def __len__(self) -> int:
        return len(self.epoch)

    def readings(self) -> list[Reading]:
        """The batch's rows, equal to those :func:`reading_row` makes one at a time."""
        names = list(self.values)
        n = len(self)
        columns = [[None] * n if v is None else v.tolist() for v in self.values.values()]
        rows = zip(*columns, strict=True) if columns else [()] * n
        project = self.plan.project
        receive_time, query_id = self.receive_time, self.query_id
        # A frozen dataclass's __init__ sets each field through object.__setattr__: ~6 us
        # a row, most of the cost here. Its fields go into the instance dict at once
        # instead; the row is the one the constructor makes (the batch tests compare).
        new, set_dict = object.__new__, object.__setattr__
        out: list[Reading] = []
        for epoch, node, epoch_time, node_time, row in zip(
            self.epoch.tolist(),
            self.node_id.tolist(),
            self.epoch_time.tolist(),
            self.node_time.tolist(),
            rows,
            strict=True,
        ):
            values = dict(zip(names, row, strict=True))
            reading = new(Reading)
            set_dict(
                reading,
                "__dict__",
                {
                    "query_id": query_id,
                    "epoch": epoch,
                    "node_id": node,
                    "epoch_time": epoch_time,
                    "receive_time": receive_time,
                    "values": values,
                    "columns": project(values),
                    "node_time": node_time or None,
                },
            )
            out.append(reading)
        return out


#: What assembly hands on: rows, and readings in batches.
Assembled = Row | ReadingBatch


def expand_rows(items: Iterable[Assembled]) -> list[Row]:
    """Rows, each batch in its readings, in order."""
    rows: list[Row] = []
    for item in items:
        if isinstance(item, ReadingBatch):
            rows.extend(item.readings())
        else:
            rows.append(item)
    return rows


@dataclass
class AssemblyStats:
    """Counters of results that did not become rows, for the session's status line."""

    tuples: int = 0
    aggregate_records: int = 0
    duplicates: int = 0
    late: int = 0
    malformed: int = 0
    unknown_query: int = 0
    filtered_by_having: int = 0


@dataclass(frozen=True)
class RateChange:
    """From ``epoch`` on, a query's epochs last ``epoch_ms``; that epoch begins at ``time``."""

    epoch: int
    epoch_ms: int
    time: float


@dataclass(frozen=True)
class RegisteredQuery:
    """A query the assembler accepts results for."""

    query_id: int
    plan: ResultPlan
    start_time: float
    sql: str = ""
    #: RATE messages sent since it started, oldest first (the motes number epochs on
    #: across a change, firmware/core/querymsg.c).
    rates: tuple[RateChange, ...] = ()

    @property
    def epoch_ms(self) -> int | None:
        """The epoch duration now: the plan's, or the last RATE's."""
        return self.rates[-1].epoch_ms if self.rates else self.plan.epoch_ms

    def epoch_time(self, epoch: int) -> float:
        """Event time of an epoch: query start + epoch * epoch duration (ONCE: the start),
        counted from the last rate change at or before it."""
        if self.plan.epoch_ms is None:
            return self.start_time
        for change in reversed(self.rates):
            if epoch >= change.epoch:
                return change.time + (epoch - change.epoch) * change.epoch_ms / 1000.0
        return self.start_time + epoch * self.plan.epoch_ms / 1000.0

    def epoch_at(self, time: float) -> int:
        """Whole epochs elapsed at ``time`` since the start (0 for ONCE or before it)."""
        if self.plan.epoch_ms is None:
            return 0
        for change in reversed(self.rates):
            if time >= change.time:
                return change.epoch + int((time - change.time) * 1000 // change.epoch_ms)
        return max(0, int((time - self.start_time) * 1000 // self.plan.epoch_ms))

    def with_rate(self, epoch: int, epoch_ms: int, at: float | None = None) -> RegisteredQuery:
        """The same query, its epochs lasting ``epoch_ms`` from ``epoch`` on, which begins
        ``at`` (default: when the old period would have begun it)."""
        change = RateChange(epoch, epoch_ms, self.epoch_time(epoch) if at is None else at)
        return replace(self, rates=(*self.rates, change))


@dataclass
class _Bucket:
    epoch: int
    group: int
    opened_at: float
    last_receive: float
    records: dict[int, AggregateResult] = field(default_factory=dict)
    #: expr_idx -> origins whose records are in records[expr_idx] (merged, wide layout)
    origins: dict[int, set[int]] = field(default_factory=dict)
    node_time: int | None = None  # the latest stamp of the records taken

    def stamp(self, node_time: int | None) -> None:
        if node_time is not None and (self.node_time is None or node_time > self.node_time):
            self.node_time = node_time


class _QueryAssembly:
    """Per-query state: duplicate filter for tuples and the open aggregate buckets."""

    def __init__(self, query: RegisteredQuery, reorder_window: int, horizon: int) -> None:
        self.query = query
        self._window = reorder_window
        self._horizon = horizon
        self._expected = {agg.expr_idx for agg in query.plan.aggregates}
        self._specs = {agg.expr_idx: agg for agg in query.plan.aggregates}
        #: epoch -> origins whose tuple of that epoch came (duplicates), and epoch ->
        #: groups whose bucket closed: keyed by epoch, so forgetting the epochs past the
        #: horizon drops whole entries instead of rebuilding a set of every key (issue 14)
        self._seen_tuples: dict[int, set[int]] = {}
        self._buckets: dict[tuple[int, int], _Bucket] = {}
        self._closed: dict[int, set[int]] = {}
        self._wide = query.plan.wide_states
        #: group -> expr_idx -> smoothed value of a wide EXPAVG (starts at 0)
        self._smoothed: dict[int, dict[int, float]] = {}
        self.first_epoch: int | None = None
        self.latest_epoch = -1
        #: Row epoch = unwrapped wire epoch + offset; the offset moves on when the network
        #: restarts the query (``restart``) and numbers its epochs from 1 again.
        self._offset = 0
        self._wire_latest = -1

    def row_epoch(self, epoch: int) -> int:
        """The row epoch of a wire epoch: unwrapped (the 16-bit count keeps growing past
        65535, the value nearest to the latest seen) and shifted past a restart."""
        latest = self._wire_latest
        candidate = epoch
        if latest >= 0:
            candidate = latest - (latest & _EPOCH_MASK) + epoch
            if candidate < latest - _EPOCH_HALF:
                candidate += _EPOCH_MASK + 1
            elif candidate > latest + _EPOCH_HALF:
                candidate -= _EPOCH_MASK + 1
        self._wire_latest = max(latest, candidate)
        return candidate + self._offset

    def restart(self, elapsed_epochs: int, stats: AssemblyStats) -> list[Row]:
        """The network runs the query afresh and numbers its epochs from 1 again: close
        the open buckets (their missing records died with the old run) and number the
        new run's epochs after every epoch seen and ``elapsed_epochs`` since the start,
        so rows keep unique, growing epochs and roughly right epoch times."""
        rows = self.flush(stats)
        self._offset = max(self.latest_epoch, elapsed_epochs, self._offset)
        self._wire_latest = -1
        return rows

    def add_tuple(self, result: TupleResult, now: float, stats: AssemblyStats) -> list[Row]:
        if not self._first_tuple(result.epoch, result.origin, stats):
            return []
        row = reading_row(self.query, result.epoch, result.origin, result.values, now)
        return [replace(row, node_time=result.node_time)]

    def take_tuples(
        self, wire_epochs: np.ndarray, origins: Sequence[int], stats: AssemblyStats
    ) -> tuple[list[int], list[int]]:
        """Tuples in arrival order, as :meth:`add_tuple` takes them one at a time after
        :meth:`row_epoch`: the indices of those that make rows, and their row epochs."""
        epochs = self._row_epochs(wire_epochs)
        seen = self._seen_tuples
        kept: list[int] = []
        for index, epoch, origin in zip(itertools.count(), epochs, origins):
            got = seen.get(epoch)
            if got is None:
                seen[epoch] = {origin}
            elif origin in got:
                continue
            else:
                got.add(origin)
            kept.append(index)
            if epoch > self.latest_epoch:
                self._advance(epoch)
        stats.duplicates += len(epochs) - len(kept)
        stats.tuples += len(kept)
        kept_epochs = [epochs[i] for i in kept]
        if kept_epochs:
            self._advance(min(kept_epochs))  # the first epoch, as each tuple's _advance
        return kept, kept_epochs

    def _row_epochs(self, wire: np.ndarray) -> list[int]:
        """:meth:`row_epoch` of each, in order; at once when the batch sits well within
        half the epoch range of the latest epoch, where unwrapping against the latest
        epoch before the batch and against the one before each tuple agree."""
        latest = self._wire_latest if self._wire_latest >= 0 else int(wire[0])
        candidate = latest - (latest & _EPOCH_MASK) + wire.astype(np.int64)
        candidate[candidate < latest - _EPOCH_HALF] += _EPOCH_MASK + 1
        candidate[candidate > latest + _EPOCH_HALF] -= _EPOCH_MASK + 1
        if int(np.abs(candidate - latest).max()) >= _EPOCH_HALF // 2:
            return [self.row_epoch(epoch) for epoch in wire.tolist()]
        self._wire_latest = max(self._wire_latest, int(candidate.max()))
        return (candidate + self._offset).tolist()

    def _first_tuple(self, epoch: int, origin: int, stats: AssemblyStats) -> bool:
        """Whether this is the first tuple of ``origin`` for ``epoch`` (counted either way)."""
        origins = self._seen_tuples.setdefault(epoch, set())
        if origin in origins:
            stats.duplicates += 1
            return False
        origins.add(origin)
        self._advance(epoch)
        stats.tuples += 1
        return True

    def add_record(self, record: AggregateResult, now: float, stats: AssemblyStats) -> list[Row]:
        key = (record.epoch, record.group)
        if (
            record.group in self._closed.get(record.epoch, ())
            or record.epoch < self.latest_epoch - self._window
        ):
            stats.late += 1
            return []
        spec = self._specs.get(record.expr_idx)
        if spec is None or not _readable(spec, record.partial, self._wide):
            stats.malformed += 1
            return []
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(record.epoch, record.group, opened_at=now, last_receive=now)
            self._buckets[key] = bucket
        if not self._take(bucket, record, spec):
            stats.duplicates += 1
            return []
        bucket.last_receive = now
        bucket.stamp(record.node_time)
        stats.aggregate_records += 1
        self._advance(record.epoch)
        return self._close_ready(stats)

    def _take(self, bucket: _Bucket, record: AggregateResult, spec: AggregateSpec) -> bool:
        """File the record in its bucket; False for a duplicate. motebase motes (the wide
        layout) send a group they had no slot for in records of its own, from the node
        that made each: records from different origins merge, one origin's again is a
        duplicate. A narrow query has one record per group (TinyDB), the first kept."""
        held = bucket.records.get(record.expr_idx)
        if held is None:
            bucket.records[record.expr_idx] = record
            bucket.origins[record.expr_idx] = {record.origin}
            return True
        origins = bucket.origins[record.expr_idx]
        merged = merge_partials(spec, held.partial, record.partial) if self._wide else None
        if record.origin in origins or merged is None:
            return False
        origins.add(record.origin)
        bucket.records[record.expr_idx] = replace(held, partial=merged)
        return True

    def expire(self, now: float, timeout: float, stats: AssemblyStats) -> list[Row]:
        aged = [k for k, b in self._buckets.items() if now - b.opened_at >= timeout]
        return self._close(sorted(aged), stats)

    def flush(self, stats: AssemblyStats) -> list[Row]:
        return self._close(sorted(self._buckets), stats)

    def _advance(self, epoch: int) -> None:
        if self.first_epoch is None or epoch < self.first_epoch:
            self.first_epoch = epoch
        if epoch <= self.latest_epoch:
            return
        self.latest_epoch = epoch
        oldest_kept = epoch - self._horizon
        for kept in (self._seen_tuples, self._closed):
            for old in [e for e in kept if e < oldest_kept]:
                del kept[old]

    def _close_ready(self, stats: AssemblyStats) -> list[Row]:
        ready = [
            key
            for key, bucket in self._buckets.items()
            if bucket.epoch < self.latest_epoch - self._window
            or (
                bucket.epoch < self.latest_epoch
                and self._reporting(bucket.epoch) <= bucket.records.keys()
            )
        ]
        return self._close(sorted(ready), stats)

    def _close(self, keys: list[tuple[int, int]], stats: AssemblyStats) -> list[Row]:
        rows: list[Row] = []
        for key in keys:
            bucket = self._buckets.pop(key)
            self._closed.setdefault(key[0], set()).add(key[1])
            row = self._finalize(bucket)
            if row is None:
                stats.filtered_by_having += 1
            else:
                rows.append(row)
        return rows

    def _reporting(self, epoch: int) -> set[int]:
        """The aggregates that report at ``epoch``: a window WINxxx(w, s) only when
        epoch % s == 0 (wire format §9.3), so a row need not wait for a record that will
        not come -- and rows close in epoch order, as EXPAVG's smoothing needs."""
        return {
            agg.expr_idx
            for agg in self.query.plan.aggregates
            if agg.op_id not in WINDOWED
            or epoch % max(1, agg.args[1] if len(agg.args) > 1 else 1) == 0
        }

    def _finalize(self, bucket: _Bucket) -> AggregateRow | None:
        values = []
        for expr_idx in sorted(self._expected):
            spec = self._specs[expr_idx]
            record = bucket.records.get(expr_idx)
            value = finalize(spec, record.partial if record is not None else None, wide=self._wide)
            if self._wide and spec.op_id == AggOp.EXPAVG:
                value = self._smooth(spec, bucket.group, value)
            values.append(value)
        row = aggregate_row(self.query, bucket.epoch, bucket.group, values, bucket.last_receive)
        return None if row is None else replace(row, node_time=bucket.node_time)

    def _smooth(self, spec: AggregateSpec, group: int, value: AggregateValue) -> AggregateValue:
        """A wide EXPAVG: the epoch's average folded into the group's smoothed value. Rows
        close in epoch order; a bucket closed late (after a later one) folds in late."""
        if value.value is None:
            return value
        smoothed = self._smoothed.setdefault(group, {})
        new_bits = spec.args[0] if spec.args else 0
        current = expavg_step(smoothed.get(spec.expr_idx, 0.0), value.value, new_bits)
        smoothed[spec.expr_idx] = current
        return replace(value, value=current)


def reading_row(
    query: RegisteredQuery,
    epoch: int,
    node_id: int,
    values: Mapping[str, int | None],
    receive_time: float,
) -> Reading:
    """The row of one node's tuple: raw field values and the projected output columns."""
    return Reading(
        query_id=query.query_id,
        epoch=epoch,
        node_id=node_id,
        epoch_time=query.epoch_time(epoch),
        receive_time=receive_time,
        values=dict(values),
        columns=query.plan.project(values),
    )


def aggregate_row(
    query: RegisteredQuery,
    epoch: int,
    group: int,
    values: Sequence[AggregateValue],
    receive_time: float,
) -> AggregateRow | None:
    """The row of one group's finalized aggregates (one per aggregate expression of the
    query, hidden ones included); None if HAVING rejects it."""
    plan = query.plan
    hidden = {spec.expr_idx for spec in plan.aggregates if spec.hidden}
    named: dict[str, Value] = {value.column: value.value for value in values}
    if plan.group_by is not None:
        named[plan.group_by] = group
    if not plan.having_matches(named):
        return None
    return AggregateRow(
        query_id=query.query_id,
        epoch=epoch,
        group=group,
        epoch_time=query.epoch_time(epoch),
        receive_time=receive_time,
        aggregates=tuple(v for v in values if v.expr_idx not in hidden),
        columns=plan.project(named),
    )


def _readable(spec: AggregateSpec, partial: bytes, wide: bool) -> bool:
    try:
        finalize(spec, partial, wide=wide)
    except FinalizeError:
        return False
    return True


class ResultAssembler:
    """Turns decoded wire results of registered queries into rows.

    ``reorder_window``: how many epochs a bucket stays open for late records once newer
    epochs arrive (the Java tool's IGNORE_AGE is 5). ``close_timeout``: seconds after
    which an open bucket is closed even if no later epoch arrives (the last epoch of a
    query, a lost record). ``horizon``: how many epochs back duplicates are recognised.
    """

    def __init__(
        self, *, reorder_window: int = 5, close_timeout: float = 10.0, horizon: int = 256
    ) -> None:
        if reorder_window < 0 or horizon <= reorder_window:
            raise ValueError("need 0 <= reorder_window < horizon")
        self._window = reorder_window
        self._timeout = close_timeout
        self._horizon = horizon
        self._queries: dict[int, _QueryAssembly] = {}
        self.stats = AssemblyStats()

    def register(self, query: RegisteredQuery) -> None:
        self._queries[query.query_id] = _QueryAssembly(query, self._window, self._horizon)

    def unregister(self, query_id: int) -> list[Row]:
        """Forget a query, returning the rows of its still-open buckets."""
        state = self._queries.pop(query_id, None)
        return state.flush(self.stats) if state is not None else []

    def retime(self, query_id: int, epoch: int, epoch_ms: int, at: float | None = None) -> None:
        """The query's epochs last ``epoch_ms`` from ``epoch`` on, which begins ``at``
        (a RATE message)."""
        state = self._queries.get(query_id)
        if state is not None:
            state.query = state.query.with_rate(epoch, epoch_ms, at)

    def query_of(self, query_id: int) -> RegisteredQuery | None:
        state = self._queries.get(query_id)
        return state.query if state is not None else None

    def plan_of(self, query_id: int) -> ResultPlan | None:
        state = self._queries.get(query_id)
        return state.query.plan if state is not None else None

    def epochs_seen(self, query_id: int) -> tuple[int, int] | None:
        """(first, latest) epoch that results of the query have carried, None before any."""
        state = self._queries.get(query_id)
        if state is None or state.first_epoch is None:
            return None
        return state.first_epoch, state.latest_epoch

    def add(self, result: WireResult, receive_time: float) -> list[Row]:
        state = self._queries.get(result.query_id)
        if state is None:
            self.stats.unknown_query += 1
            return []
        result = replace(result, epoch=state.row_epoch(result.epoch))
        if isinstance(result, TupleResult):
            return state.add_tuple(result, receive_time, self.stats)
        return state.add_record(result, receive_time, self.stats)

    def add_tuples(
        self,
        query_id: int,
        wire_epochs: np.ndarray,
        origins: np.ndarray,
        values: Mapping[str, np.ndarray | None],
        node_times: np.ndarray,
        receive_time: float,
    ) -> list[ReadingBatch]:
        """Many tuple results of one query at once, in arrival order: what :meth:`add`
        makes of them one at a time, as one batch (none if every one was a duplicate)."""
        state = self._queries.get(query_id)
        if state is None:
            self.stats.unknown_query += len(wire_epochs)
            return []
        kept, epochs = state.take_tuples(wire_epochs, origins.tolist(), self.stats)
        if not kept:
            return []
        index = np.asarray(kept, dtype=np.intp)
        query = state.query
        times = {epoch: query.epoch_time(epoch) for epoch in set(epochs)}
        return [
            ReadingBatch(
                query_id=query_id,
                plan=query.plan,
                epoch=np.asarray(epochs, dtype=np.int64),
                node_id=origins[index].astype(np.int64),
                epoch_time=np.fromiter((times[e] for e in epochs), np.float64, len(epochs)),
                receive_time=receive_time,
                node_time=node_times[index],
                values={
                    name: None if column is None else column[index]
                    for name, column in values.items()
                },
            )
        ]

    def restart(self, query_id: int, now: float) -> list[Row]:
        """The query was sent again to a network that had lost it (a rebooted
        basestation): its epochs start from 1 again. Returns the rows of the buckets
        this closes."""
        state = self._queries.get(query_id)
        if state is None:
            return []
        epoch_ms = state.query.plan.epoch_ms
        elapsed = 0 if not epoch_ms else state.query.epoch_at(now)
        return state.restart(elapsed, self.stats)

    def expire(self, now: float) -> list[Row]:
        rows: list[Row] = []
        for state in self._queries.values():
            rows.extend(state.expire(now, self._timeout, self.stats))
        return rows

    def flush(self) -> list[Row]:
        rows: list[Row] = []
        for state in self._queries.values():
            rows.extend(state.flush(self.stats))
        return rows
