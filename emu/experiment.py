"""Queries on an emulated network, run in virtual time with the gateway in the same process,
with the ground truth beside the results.

``run_experiment`` is what ``mote emulate --query SQL --epochs K --out R --truth T`` does:
the network forms its routing tree, the gateway's own
:class:`~motebase.gateway.session.QuerySession` talks to the root over a
:class:`~motebase.emu.virtual_link.VirtualEndpoint` (so the session's waiting drives the clock),
each query is sent, its rows are assembled and finalized as ``mote query`` would, and every
node's firmware reports what it sampled (``hal.observe``),
from which :mod:`motebase.emu.truth` computes the rows a perfect network would have delivered.

Timeline of one query: it is sent after ``warmup_ms``; it runs until the root has sampled
its epoch ``epochs`` (or ``stop_after``, which stops it early); the gateway keeps
collecting for ``DRAIN_EPOCHS`` more epochs so the last epochs' results can arrive, and on
while they still do (up to ``DRAIN_MAX_EPOCHS``); then it stops the query and the network
runs ``after_stop_epochs`` more epochs, in which the nodes that keep running a stopped query
show up in the observations.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from motebase.emu.network import Network, node_index
from motebase.emu.truth import (
    OBS_QUERY,
    OBS_SAMPLED,
    QUERY_FREE,
    SampleColumns,
    Truth,
    extremes,
    ground_truth,
    sample_columns,
    sampled,
)
from motebase.emu.virtual_link import VirtualEndpoint
from motebase.gateway.accuracy import AggregateAccuracy, compare
from motebase.gateway.assembly import Assembled, Reading, RegisteredQuery, Row, expand_rows
from motebase.gateway.plan import compile_query
from motebase.gateway.plan.capacity import epoch_intervals
from motebase.gateway.session import QuerySession, RowSink, SessionConfig, deliver
from motebase.gateway.sinks import jsonl_records

#: Once each query's last epoch, how long the gateway keeps collecting (epochs)...
DRAIN_EPOCHS = 2
#: ...and, for a tuple query, on while its readings of the compared epochs come late (more
#: than an epoch after the root's last), until none has for QUIET_EPOCHS, up to
#: DRAIN_MAX_EPOCHS. A relay's queue holds tuples for epochs where one path carries most of
#: a network: SELECT 100 @8 s, seed 22, had 46 of the 68 readings of its last epoch still
#: on the way two epochs after it. Issue 10's table, seeds 1-100, two epochs -> this: SELECT 25
#: @2 s .973 -> .984, 49 @4 s .953 -> .977, 100 @8 s .966 -> .977, the Intel lab @4 s .981
#: -> .990. Readings later than that count as lost.
QUIET_EPOCHS = 2
DRAIN_MAX_EPOCHS = 10
#: After a stop, how long the network runs so that nodes still running it show (epochs).
AFTER_STOP_EPOCHS = 5
#: The gateway polls this often (seconds of virtual time).
POLL_S = 0.05
#: How long named commands sent before the queries get to cross the network.
COMMAND_FLOOD_S = 2.0
#: firmware/core/schedule.h: SCHED_START_DELAY_MS, SCHED_CTL_PERIOD_MS, SCHED_CTL_SLOT_MS
START_DELAY_S, CTL_PERIOD_S, CTL_SLOT_S = 4.096, 1.024, 0.064
UNROUTED = 255
#: Epoch length assumed for a ONCE query (the motes' SCHED_ONCE_MS).
ONCE_MS = 1024


@dataclass(frozen=True)
class QueryRun:
    """A query of the experiment; ``stop_after`` stops it after that many epochs.
    ``optimize=False`` sends the TinyDB tools' predicate order instead of the planner's
    cheapest (``compile_query``), so a costlier plan can be emulated beside the chosen one."""

    sql: str
    stop_after: int | None = None
    optimize: bool = True


@dataclass
class QueryOutcome:
    """What one query delivered and what it should have."""

    run: QueryRun
    query: RegisteredQuery
    rows: list[Row] = field(default_factory=list)
    truth: Truth | None = None
    #: The root's epoch when the gateway sent the stop (None: not stopped).
    stopped_at_epoch: int | None = None
    stop_time_s: float | None = None
    #: When the root reached the last epoch and the drain began (session clock, s).
    drain_from_s: float | None = None
    #: Results of epochs up to this one had time to arrive before collection ended.
    complete_through: int = 0
    #: node -> (first, last) epoch it sampled the query in
    node_epochs: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: node -> epoch in which it last reported the query as running / freed
    freed_at: dict[int, int] = field(default_factory=dict)
    #: node -> virtual time (ms) of its last sample of the query
    last_sample_ms: dict[int, float] = field(default_factory=dict)
    #: virtual time (ms) when the observation of the network ended
    watched_until_ms: float | None = None
    #: node -> depth in the routing tree at each of its samples: (epoch -> depth)
    depth: dict[tuple[int, int], int] = field(default_factory=dict)
    #: samples taken more than two epochs after the stop: readings nobody delivers
    late_samples: int = 0

    @property
    def epoch_ms(self) -> int:
        """The epoch duration now: the plan's, or the last RATE's."""
        return self.query.epoch_ms or ONCE_MS


@dataclass
class Experiment:
    """Every query's outcome, and the network it ran on."""

    nodes: int
    outcomes: list[QueryOutcome]
    virtual_s: float
    #: What the gateway told the user meanwhile (a lowered rate, a silent query).
    notices: list[str] = field(default_factory=list)


class _Routes:
    """Snapshots of every node's depth over time, for depth-by-sample lookups."""

    def __init__(self) -> None:
        self.times: list[int] = []
        self.depths: list[np.ndarray] = []

    def snapshot(self, net: Network) -> None:
        self.times.append(net.now_us)
        self.depths.append(net.routing().depth.copy())

    def depths_at(self, motes: np.ndarray, t_us: np.ndarray) -> np.ndarray:
        """Each mote's depth in the last snapshot taken at or before its time (the first
        snapshot for an earlier time; 0xFF, no route, before any snapshot)."""
        out = np.full(len(motes), 0xFF, dtype=np.int64)
        if not self.depths or not len(motes):
            return out
        ids, inverse = np.unique(motes, return_inverse=True)
        index = np.array([node_index(int(m)) for m in ids.tolist()])[inverse]
        taken = np.maximum(np.searchsorted(self.times, t_us, side="right") - 1, 0)
        order = np.argsort(taken, kind="stable")
        bounds = np.flatnonzero(np.diff(taken[order])) + 1
        for rows in np.split(order, bounds):  # the samples of one snapshot each
            out[rows] = self.depths[int(taken[rows[0]])][index[rows]]
        return out


class _Runner:
    def __init__(
        self,
        net: Network,
        runs: Sequence[QueryRun],
        epochs: int,
        sinks: Sequence[RowSink],
        progress: Callable[[str], None] | None,
        adapt_rate: bool = False,
        commands: Sequence[tuple[str, dict[str, Any]]] = (),
        after_stop_epochs: int = AFTER_STOP_EPOCHS,
    ) -> None:
        self.net = net
        self.after_stop_epochs = after_stop_epochs
        self.commands = commands
        self.runs = runs
        self.epochs = epochs
        self.sinks = sinks
        self.progress = progress
        self.endpoint = VirtualEndpoint(net)
        self.session = QuerySession(
            self.endpoint,
            config=SessionConfig(status_wait_s=0.5, adapt_rate=adapt_rate),
            clock=self.endpoint.clock,
            notify=self._notify,
        )
        self.notices: list[str] = []
        self.observations: list[np.ndarray] = []
        self.routes = _Routes()
        self.outcomes: list[QueryOutcome] = []
        self.start_us: dict[int, int] = {}
        self.root_epoch: dict[int, int] = {}
        self.finished_at: dict[int, float] = {}  # qid -> when collection ended
        self.last_arrival: dict[int, float] = {}  # qid -> when a late reading of it came

    def run(self) -> list[QueryOutcome]:
        self.net.record_observations(True)
        self.routes.snapshot(self.net)
        for name, params in self.commands:
            self.session.send_command(name, params)
        if self.commands:  # no query runs yet: a command floods at radio speed
            self._poll_for(COMMAND_FLOOD_S)
        for run in self.runs:
            self._start(run)
        self._collect()
        for outcome in self.outcomes:
            if outcome.stop_time_s is None:
                self._stop(outcome)
        tail = max(o.epoch_ms for o in self.outcomes) * self.after_stop_epochs / 1000.0
        self._poll_for(tail)
        for sink in self.sinks:
            sink.write(self.session.finish())
            sink.close()
        self._settle_truth()
        return self.outcomes

    def _start(self, run: QueryRun) -> None:
        plan = compile_query(run.sql, optimize=run.optimize)
        self.start_us[len(self.outcomes)] = self.net.now_us
        query = self.session.start_query(plan, run.sql)
        self.outcomes.append(QueryOutcome(run, query))
        for sink in self.sinks:
            sink.start(query)

    def _collect(self) -> None:
        """Poll until every query has had its epochs and the drain time after them."""
        deadline = self.session.clock() + self._time_limit_s()
        while self.session.clock() < deadline:
            self._poll(POLL_S)
            open_ = [o for o in self.outcomes if o.query.query_id not in self.finished_at]
            if not open_:
                return
            for outcome in open_:
                self._maybe_finish(outcome)
        for outcome in self.outcomes:
            if outcome.query.query_id not in self.finished_at:
                self.finished_at[outcome.query.query_id] = self.session.clock()

    def _time_limit_s(self) -> float:
        longest = max(o.epoch_ms for o in self.outcomes)
        epochs = max(self.epochs, *(o.run.stop_after or 0 for o in self.outcomes))
        # Generous: a query that never reaches the root's epoch count still ends.
        span = epochs + DRAIN_MAX_EPOCHS + 10
        return span * longest / 1000.0 * 2 + self._start_delay_s(longest)

    def _start_delay_s(self, epoch_ms: int) -> float:
        """The longest the root may wait before epoch 1 (firmware/core/schedule.c,
        sched_start_base): the down wave crossing every level, then the deepest level's
        lead of (depth + 2) intervals; a 150-hop line at 1 s waits ~50 s."""
        depths = self.net.routing().depth
        routed = depths[depths != UNROUTED]
        deepest = int(routed.max()) if routed.size else 0
        wave_s = 2 * CTL_PERIOD_S + deepest * CTL_SLOT_S
        lead_s = (deepest + 2) * epoch_ms / epoch_intervals(epoch_ms) / 1000.0
        return START_DELAY_S + wave_s + lead_s

    def _epoch_limit(self, outcome: QueryOutcome) -> int:
        """The root's epoch the query runs to, and the last one compared."""
        limit = outcome.run.stop_after or self.epochs
        if outcome.query.plan.epoch_ms is None:
            return 1
        if outcome.query.plan.num_epochs is not None:
            return min(limit, outcome.query.plan.num_epochs)
        return limit

    def _late(self, outcome: QueryOutcome, row: Row, now: float) -> bool:
        """Whether ``row``, come at ``now``, is a tuple of a compared epoch more than an
        epoch after the root's last (an aggregate's epoch the root reports once, as it
        closes)."""
        drain_from = outcome.drain_from_s
        return (
            drain_from is not None
            and now > drain_from + outcome.epoch_ms / 1000.0
            and isinstance(row, Reading)
            and row.epoch <= self._epoch_limit(outcome)
        )

    def _maybe_finish(self, outcome: QueryOutcome) -> None:
        qid = outcome.query.query_id
        if self.root_epoch.get(qid, 0) < self._epoch_limit(outcome):
            return
        if outcome.run.stop_after is not None and outcome.stopped_at_epoch is None:
            self._stop(outcome)
            return
        now = self.session.clock()
        if outcome.drain_from_s is None:
            outcome.drain_from_s = now
        drain_from = outcome.drain_from_s
        epoch_s = outcome.epoch_ms / 1000.0
        if now < drain_from + DRAIN_EPOCHS * epoch_s:
            return
        quiet = now >= self.last_arrival.get(qid, 0.0) + QUIET_EPOCHS * epoch_s
        if quiet or now >= drain_from + DRAIN_MAX_EPOCHS * epoch_s:
            self.finished_at[qid] = now

    def _stop(self, outcome: QueryOutcome) -> None:
        qid = outcome.query.query_id
        outcome.stopped_at_epoch = self.root_epoch.get(qid, 0)
        outcome.stop_time_s = self.session.clock()
        rows = self.session.stop_query(qid)
        self._deliver(rows)
        self.finished_at.setdefault(qid, self.session.clock())

    def _notify(self, message: str) -> None:
        self.notices.append(message)
        if self.progress is not None:
            self.progress(message)

    def _poll(self, seconds: float) -> None:
        self._deliver(self.session.poll_batches(seconds))
        for outcome in self.outcomes:  # a RATE retimes the query (gateway/ratecontrol.py)
            current = self.session.assembler.query_of(outcome.query.query_id)
            if current is not None:
                outcome.query = current
        self.routes.snapshot(self.net)
        taken = self.net.take_observations()
        if len(taken):
            self.observations.append(taken)
            roots = taken[(taken["node"] == 0) & (taken["kind"] == OBS_SAMPLED)]
            for qid, epoch in zip(roots["qid"].tolist(), roots["epoch"].tolist(), strict=True):
                self.root_epoch[qid] = max(self.root_epoch.get(qid, 0), epoch)
        if self.progress is not None:
            done = sum(len(o.rows) for o in self.outcomes)
            self.progress(f"virtual {self.session.clock():8.1f} s, {done} rows")

    def _poll_for(self, seconds: float) -> None:
        end = self.session.clock() + seconds
        while self.session.clock() < end:
            self._poll(POLL_S)

    def _deliver(self, items: Sequence[Assembled]) -> None:
        if not items:
            return
        by_id = {o.query.query_id: o for o in self.outcomes}
        now = self.session.clock()
        for row in expand_rows(items):
            outcome = by_id[row.query_id]
            outcome.rows.append(row)
            if self._late(outcome, row, now):
                self.last_arrival[row.query_id] = now
        deliver(self.sinks, items)

    def _settle_truth(self) -> None:
        observed = (
            np.concatenate(self.observations) if self.observations else self.net.take_observations()
        )
        for index, outcome in enumerate(self.outcomes):
            qid = outcome.query.query_id
            since = self.start_us[index]
            picked = sampled(observed, qid, since)
            samples = sample_columns(picked)
            outcome.complete_through = min(
                _complete_through(outcome, samples, self.finished_at[qid]),
                self._epoch_limit(outcome),
            )
            outcome.truth = ground_truth(outcome.query, samples, outcome.complete_through)
            outcome.watched_until_ms = self.session.clock() * 1000.0
            if outcome.stop_time_s is not None:
                late_from_us = (outcome.stop_time_s * 1000.0 + 2 * outcome.epoch_ms) * 1000.0
                outcome.late_samples = int((picked["t_us"] > late_from_us).sum())
            self._sample_spans(outcome, picked)
            freed = observed[
                (observed["kind"] == OBS_QUERY)
                & (observed["qid"] == qid)
                & (observed["status"] == QUERY_FREE)
                & (observed["t_us"] >= since)
            ]
            for node, epoch in zip(freed["node"].tolist(), freed["epoch"].tolist(), strict=True):
                outcome.freed_at.setdefault(node, epoch)

    def _sample_spans(self, outcome: QueryOutcome, picked: np.ndarray) -> None:
        """Each node's first and last epoch and last sample time, and its depth at each
        sample (the last sample's, where a node sampled an epoch twice), from whole
        columns: one Python step per sample was a tenth of a 1,000-node run."""
        node = picked["node"].astype(np.int64)
        epoch = picked["epoch"].astype(np.int64)
        t_us = picked["t_us"].astype(np.int64)
        ids, first_at, inverse = np.unique(node, return_index=True, return_inverse=True)
        first = np.full(len(ids), np.iinfo(np.int64).max)
        last = np.full(len(ids), np.iinfo(np.int64).min)
        latest = np.zeros(len(ids), dtype=np.int64)
        np.minimum.at(first, inverse, epoch)
        np.maximum.at(last, inverse, epoch)
        np.maximum.at(latest, inverse, t_us)
        for i in np.argsort(first_at, kind="stable").tolist():  # in order of first sample
            outcome.node_epochs[int(ids[i])] = (int(first[i]), int(last[i]))
            outcome.last_sample_ms[int(ids[i])] = int(latest[i]) / 1000.0
        depths = self.routes.depths_at(node, t_us)
        outcome.depth.update(
            zip(zip(node.tolist(), epoch.tolist(), strict=True), depths.tolist(), strict=True)
        )


def _complete_through(outcome: QueryOutcome, samples: SampleColumns, collected_until: float) -> int:
    """The last epoch whose results all had time to arrive: sampled, plus two epochs of
    margin, before the gateway stopped collecting (and no later than a stop)."""
    epochs, _, _, latest = extremes(samples.epoch, samples.t_us)
    margin_us = 2 * outcome.epoch_ms * 1000
    done = epochs[latest + margin_us <= collected_until * 1e6]
    through = int(done.max(initial=0))
    if outcome.stopped_at_epoch is not None:
        through = min(through, outcome.stopped_at_epoch)
    return through


def run_experiment(
    net: Network,
    runs: Sequence[QueryRun],
    *,
    epochs: int,
    warmup_ms: float = 30_000.0,
    sinks: Sequence[RowSink] = (),
    progress: Callable[[str], None] | None = None,
    adapt_rate: bool = False,
    commands: Sequence[tuple[str, dict[str, Any]]] = (),
    after_stop_epochs: int = AFTER_STOP_EPOCHS,
) -> Experiment:
    """Run ``runs`` concurrently on ``net`` (see the module docstring); ``adapt_rate``:
    the gateway lowers a SELECT's rate the network cannot carry (gateway/ratecontrol.py);
    ``commands``: named commands (name, params) sent after the warm-up, before the
    queries (``snoop`` off, a queue policy); ``after_stop_epochs``: how long the network
    is watched after the stops (a stop's lag is measured only as far as that)."""
    if not runs:
        raise ValueError("an experiment needs at least one query")
    net.run_for(max(0.0, warmup_ms - net.now_ms))
    runner = _Runner(net, runs, epochs, sinks, progress, adapt_rate, commands, after_stop_epochs)
    outcomes = runner.run()
    return Experiment(net.present, outcomes, net.now_ms / 1000.0, runner.notices)


def truth_header(outcome: QueryOutcome, nodes: int) -> dict[str, Any]:
    """The truth file's description of one query: what the comparison needs beyond rows."""
    truth = outcome.truth
    assert truth is not None
    return {
        "kind": "truth",
        "query_id": outcome.query.query_id,
        "sql": outcome.query.sql,
        "epoch_ms": outcome.query.epoch_ms,
        "aggregate": outcome.query.plan.is_aggregate,
        "nodes": nodes,
        "complete_through": outcome.complete_through,
        "stopped_at_epoch": outcome.stopped_at_epoch,
        "node_epochs": {str(n): list(span) for n, span in sorted(outcome.node_epochs.items())},
        "freed_at": {str(n): e for n, e in sorted(outcome.freed_at.items())},
        "having_rejected": [list(key) for key in truth.having_rejected],
        "stop_time_ms": None if outcome.stop_time_s is None else outcome.stop_time_s * 1000.0,
        "last_sample_ms": {str(n): t for n, t in sorted(outcome.last_sample_ms.items())},
        "watched_until_ms": outcome.watched_until_ms,
        "anomalies": {
            "verdicts": truth.anomalies.verdicts,
            "unread": truth.anomalies.unread,
            "repeated": truth.anomalies.repeated,
            "skipped": truth.anomalies.skipped,
        },
    }


def truth_records(experiment: Experiment) -> list[dict[str, Any]]:
    """Every query's truth: its ``truth`` header, then its rows in the results' own
    schema (``mote query --out``), readings with the node's ``depth``."""
    return [r for o in experiment.outcomes for r in _truth_records_of(o, experiment.nodes)]


def _truth_records_of(outcome: QueryOutcome, nodes: int) -> list[dict[str, Any]]:
    assert outcome.truth is not None
    records = [truth_header(outcome, nodes)]
    for row in outcome.truth.rows:
        for record in jsonl_records(row, outcome.query.plan):
            if isinstance(row, Reading):
                record["depth"] = outcome.depth.get((row.node_id, row.epoch))
            records.append(record)
    return records


def result_records(experiment: Experiment) -> list[dict[str, Any]]:
    """The rows every query delivered, as ``mote query --out`` writes them."""
    return [r for o in experiment.outcomes for r in _result_records_of(o)]


def _result_records_of(outcome: QueryOutcome) -> list[dict[str, Any]]:
    return [r for row in outcome.rows for r in jsonl_records(row, outcome.query.plan)]


def aggregate_agreement(experiment: Experiment, outcome: QueryOutcome) -> AggregateAccuracy | None:
    """How an aggregate query's delivered values agree with its truth, as `mote accuracy`
    reports them; None for a tuple query. Cheap: a row an epoch and group, where a tuple
    query's comparison would go through every reading."""
    if not outcome.query.plan.is_aggregate:
        return None
    truth = _truth_records_of(outcome, experiment.nodes)
    report = compare(_result_records_of(outcome), truth).queries[outcome.query.query_id]
    return report if isinstance(report, AggregateAccuracy) else None


def write_truth(target: Path | IO[str], experiment: Experiment) -> None:
    """The truth as JSON lines (:func:`truth_records`), for ``mote accuracy``, into a file
    or onto a stream (stdout for ``--truth -``, which stays open)."""
    if not isinstance(target, Path):
        _write_records(target, truth_records(experiment))
        target.flush()
        return
    with target.open("w", encoding="utf-8") as out:
        _write_records(out, truth_records(experiment))


def _write_records(out: IO[str], records: list[dict[str, Any]]) -> None:
    for record in records:
        out.write(json.dumps(record, sort_keys=True) + "\n")
