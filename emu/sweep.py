"""Parameter sweeps: a grid of emulations, each point one run of ``run_experiment`` scored
by ``mote accuracy``'s comparison (issue 15, §1). This module knows the spec and one point;
spreading the points over Spark's executors is motebase.spark.sweep's job.

A spec is TOML. Top-level keys hold for every point, and the ``[grid]`` table gives each
key a list of values; a point is one combination, in the grid's key order (the last key
varies fastest)::

    query = "SELECT nodeid, light FROM sensors SAMPLE PERIOD 2048"
    epochs = 20

    [grid]
    seed = [1, 2, 3]
    link_model = ["logistic", "sinr"]

Keys: ``query`` (TinySQL), ``epochs``, ``warmup_s`` (30), ``adapt_rate`` (false),
``snoop``, ``slots``, ``policy`` and ``qlen`` (the named commands ``snoop enabled=0|1``,
``slots enabled=0|1``, ``qpolicy policy=naive|winavg|delta`` and ``qlen length=1..8``, sent
before the query; unset, the firmware's defaults: snooping on, the slot schedule, NAIVE, the
longest queue), ``traces`` (a table of
attribute = samples: every node reads the list, or node i row ``i % rows`` of a list of
lists, one sample a read: emu/sources.py ``Trace``), ``series`` (true: the row keeps the
first field's readings, delivered and true, in ``series``), ``optimize`` (true: the
planner's predicate order; false: the TinyDB tools', the reverse of the written order, to
emulate a plan the planner would not pick), ``sensors`` (a table of attribute -> source:
``{kind = "uniform"}`` for readings spread evenly over the ADC range, or ``constant``,
``walk``, ``sine``, ``square``, ``burst`` with emu/sources.py's parameters; unnamed
attributes keep the defaults), and the network's (``NetworkConfig``): nodes, topology,
platform, seed, lossless, spacing, radio_range, link_model, min_link_prob, asymmetry,
battery_j, send_gap_ms, link_table (a file's links instead of the model's,
emu/linktables.py). With ``battery_j``, ``drain_s`` runs the network that much longer
after the query's epochs and reports ``lifetime_median_s``: the median over the motes (not
the basestation, which is powered) of the virtual time since boot at which each went flat.
A point never raises: a failure is its row's ``error``, and the sweep goes on.

A tuple query's row has ``held_rms``: the RMS error of the query's first field, each
node's delivered readings put in epoch order and held until the next one, against every
reading the node took (TODS 2005 Table V's measure), over every node and compared epoch.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import statistics
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

NETWORK_KEYS = (
    "nodes",
    "topology",
    "platform",
    "seed",
    "lossless",
    "spacing",
    "radio_range",
    "link_model",
    "min_link_prob",
    "asymmetry",
    "battery_j",
    "send_gap_ms",
    "link_table",
)
RUN_DEFAULTS: dict[str, Any] = {
    "epochs": 20,
    "warmup_s": 30.0,
    "adapt_rate": False,
    "drain_s": 0.0,
}
#: Steps in which a drain run looks for flat batteries: its lifetimes' resolution.
DRAIN_STEPS = 400
COMMAND_KEYS = ("snoop", "slots", "policy", "qlen")
#: Keys with a default that is left out of the rows when unset (the planner's order, the
#: default sources), so that specs without them keep their columns.
OPTIONAL_KEYS = ("optimize", "sensors")
KEYS = (
    "query",
    *RUN_DEFAULTS,
    *COMMAND_KEYS,
    "traces",
    "series",
    *OPTIONAL_KEYS,
    *NETWORK_KEYS,
)
#: What every row reports besides its parameters (None where it does not apply).
METRICS = (
    "error",
    "kind",
    "tuple_yield",
    "exact_fraction",
    "count_median",
    "sampled",
    "sound",
    "rows",
    "messages_per_epoch",
    "records_suppressed",
    "frames_sent",
    "receptions_collided",
    "sends_dropped",
    "queue_dropped",
    "rate_changes",
    "virtual_s",
    "wall_s",
    "accuracy",
    "lifetime_median_s",
    "held_rms",
    "series",
    "sensing_j",
    "samples",
)


class SweepSpecError(ValueError):
    """A sweep spec that cannot be run; the message says which key and why."""


@dataclass(frozen=True)
class SweepSpec:
    fixed: dict[str, Any]
    grid: dict[str, list[Any]]

    def points(self) -> list[dict[str, Any]]:
        """Every combination of the grid's values, over the fixed keys and defaults."""
        base = {**RUN_DEFAULTS, **self.fixed}
        keys = list(self.grid)
        return [
            {**base, **dict(zip(keys, values, strict=True))}
            for values in itertools.product(*(self.grid[k] for k in keys))
        ]

    @property
    def keys(self) -> list[str]:
        """The parameters the rows carry: the defaults', the fixed and the grid's keys."""
        return list(dict.fromkeys([*RUN_DEFAULTS, *self.fixed, *self.grid]))


def parse_spec(text: str) -> SweepSpec:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepSpecError(f"not TOML: {exc}") from None
    grid = data.pop("grid", {})
    if not isinstance(grid, dict):
        raise SweepSpecError("[grid] must be a table of lists")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepSpecError(f"grid.{key} must be a non-empty list")
    for key in [*data, *grid]:
        if key not in KEYS:
            raise SweepSpecError(f"unknown key {key!r}; choose from {', '.join(KEYS)}")
    both = sorted(set(data) & set(grid))
    if both:
        raise SweepSpecError(f"{', '.join(both)}: fixed and in the grid")
    if "query" not in data and "query" not in grid:
        raise SweepSpecError('no query: give `query = "SELECT ..."`')
    return SweepSpec(data, grid)


def load_spec(path: Path | str) -> SweepSpec:
    return parse_spec(Path(path).read_text())


def _commands(point: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The named commands a point's ``snoop``, ``slots``, ``policy`` and ``qlen`` ask for
    (checked by the session against the command table before anything is sent)."""
    commands: list[tuple[str, dict[str, Any]]] = []
    for switch in ("snoop", "slots"):
        if point.get(switch) is not None:
            commands.append((switch, {"enabled": int(bool(point[switch]))}))
    if point.get("policy") is not None:
        commands.append(("qpolicy", {"policy": str(point["policy"])}))
    if point.get("qlen") is not None:
        commands.append(("qlen", {"length": int(point["qlen"])}))
    return commands


def _trace_sources(point: Mapping[str, Any]) -> dict[str, Any]:
    """The point's ``traces`` as emulator sources: one sample a read, so the k-th reading
    a node takes is its row's k-th sample whatever the sample period."""
    import numpy as np

    from motebase.emu.sources import Trace

    traces = point.get("traces") or {}
    return {
        str(attr): Trace(values=np.asarray(rows, dtype=np.int16)) for attr, rows in traces.items()
    }


def run_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """One emulation and its score, as a row: the point's parameters, then METRICS."""
    row: dict[str, Any] = {**dict(point), **dict.fromkeys(METRICS)}
    started = time.perf_counter()
    try:
        row.update(_score(point))
    except Exception as exc:  # a failed point is a row, not a failed sweep
        row["error"] = f"{type(exc).__name__}: {exc}"
    row["wall_s"] = time.perf_counter() - started
    return row


def _score(point: Mapping[str, Any]) -> dict[str, Any]:
    # Imported here: a Spark executor imports this module before it runs a point.
    from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
    from motebase.emu.network import Network, NetworkConfig
    from motebase.gateway.accuracy import AggregateAccuracy, compare

    config = NetworkConfig(
        **{k: point[k] for k in NETWORK_KEYS if k in point},
        sensors={**_sensor_sources(point), **_trace_sources(point)},
    )
    with Network(config) as net:
        experiment = run_experiment(
            net,
            [QueryRun(str(point["query"]), optimize=bool(point.get("optimize", True)))],
            epochs=int(point["epochs"]),
            warmup_ms=float(point["warmup_s"]) * 1000.0,
            adapt_rate=bool(point["adapt_rate"]),
            commands=_commands(point),
        )
        stats = [net.mote_stats(i) for i in range(net.n)]
        radio = {name: int(counts.sum()) for name, counts in net.counters().items()}
        sensing_j = float(net.energy()["sensing"].sum())
        lifetime = _median_lifetime_s(net, str(point["query"]), float(point["drain_s"]))
    report = compare(result_records(experiment), truth_records(experiment))
    (query,) = report.queries.values()
    (outcome,) = experiment.outcomes
    # Result messages (own and forwarded) over the epochs a node ran, on average: what
    # TAG and TinyDB count (TODS 2005 §6.3.2); beacons and query parts are not in it.
    epochs_run = sum(s["epochs"] for s in stats) / max(1, len(stats))
    messages = sum(s["results_sent"] + s["results_forwarded"] for s in stats)
    scores: dict[str, Any] = {
        "kind": query.kind,
        "messages_per_epoch": messages / epochs_run if epochs_run else None,
        "records_suppressed": sum(s["records_suppressed"] for s in stats),
        # Where a saturated channel's tuples go (TODS 2005 §6.4): frames on air,
        # receptions an overlap corrupted (one per receiver), sends given up on a busy
        # channel, and tuples a full queue turned away. Whole run, warm-up included.
        "frames_sent": radio["sent"],
        "receptions_collided": radio["collided"],
        "sends_dropped": radio["dropped"],
        "queue_dropped": sum(s["queue_dropped"] for s in stats),
        "sampled": query.sampled,
        "sound": query.sound,
        "rows": len(outcome.rows),
        "rate_changes": len(outcome.query.rates),
        "virtual_s": experiment.virtual_s,
        "accuracy": json.dumps(report.to_json(), sort_keys=True),
        "lifetime_median_s": lifetime,
        # What the query's sampling cost (TODS 2005 §4.2): the sensors' joules (charged
        # per sample, emu/csrc/hal_emu.c) and the firmware's own per-attribute sample
        # counters, summed over the nodes (JSON: name -> count). Not per epoch: the
        # firmware's epoch counter also counts a stopped query's draining epochs.
        "sensing_j": sensing_j,
        "samples": json.dumps(_samples_by_attribute(stats), sort_keys=True),
    }
    if isinstance(query, AggregateAccuracy):
        counts = [e.count_delivered for e in query.epochs if e.count_delivered is not None]
        scores["exact_fraction"] = query.exact_fraction
        scores["count_median"] = float(statistics.median(counts)) if counts else None
    else:
        scores["tuple_yield"] = query.tuple_yield
        field_name = outcome.query.plan.fields[0].name
        truth, delivered = _readings(outcome, field_name)
        scores["held_rms"] = held_rms(truth, delivered)
        if point.get("series"):
            scores["series"] = json.dumps(
                {"field": field_name, "truth": truth, "delivered": delivered}, sort_keys=True
            )
    return scores


def _sensor_sources(point: Mapping[str, Any]) -> dict[str, Any]:
    """The point's ``sensors`` table as emu/sources.py sources (unknown kinds raise)."""
    from motebase.emu import sources

    kinds: dict[str, Any] = {
        "uniform": sources.uniform,
        "constant": sources.Constant,
        "walk": sources.RandomWalk,
        "sine": sources.Sine,
        "square": sources.Square,
        "burst": sources.Burst,
    }
    out: dict[str, Any] = {}
    for attribute, table in dict(point.get("sensors") or {}).items():
        params = dict(table)
        kind = params.pop("kind", None)
        if kind not in kinds:
            raise SweepSpecError(
                f"sensors.{attribute}: kind {kind!r}; choose from {', '.join(kinds)}"
            )
        out[attribute] = kinds[kind](**params)
    return out


def _samples_by_attribute(stats: list[dict[str, Any]]) -> dict[str, int]:
    """Samples taken per catalog attribute over every node (the ones taken at all)."""
    from motebase.emu.network import attr_id
    from motebase.gateway.catalog import default_catalog

    totals: dict[str, int] = {}
    for attribute in default_catalog().attributes:
        aid = attr_id(attribute)
        count = sum(s["samples"][aid] for s in stats) if aid < len(stats[0]["samples"]) else 0
        if count:
            totals[attribute] = count
    return totals


def _median_lifetime_s(net: Any, sql: str, drain_s: float) -> float | None:
    """Run the query again for ``drain_s`` and return the median time (s since boot) at
    which the motes went flat, to DRAIN_STEPS' resolution; None without a drain or when
    the median mote outlived it. The experiment stopped its query, and a network with no
    query never sleeps: drained so, every mote lasted about 160 h whatever the period."""
    if drain_s <= 0:
        return None
    from motebase.emu.queries import query_frames

    for frame in query_frames(sql):
        net.uart_write(frame)
    motes = net.n - 1  # node 0, the basestation, is powered (emu/csrc/energy.h)
    flat_at: dict[int, float] = {}
    step_ms = drain_s * 1000.0 / DRAIN_STEPS
    for _ in range(DRAIN_STEPS):
        net.run_for(step_ms)
        net.energy()  # settles every meter: a flat node is found now, not at its next event
        for node in range(1, net.n):
            if node not in flat_at and not net.alive[node]:
                flat_at[node] = net.now_ms / 1000.0
        if len(flat_at) == motes:
            break
    if len(flat_at) < motes // 2 + 1:
        return None
    times = sorted(flat_at.values()) + [float("inf")] * (motes - len(flat_at))
    return float(statistics.median(times))


Series = dict[int, list[tuple[int, float]]]


def _readings(outcome: Any, field_name: str) -> tuple[Series, Series]:
    """Per node, (epoch, value) of ``field_name``: every reading the node took in the
    epochs compared (1..complete_through), and what the gateway delivered of them."""
    truth: Series = {}
    delivered: Series = {}
    assert outcome.truth is not None
    for rows, into in ((outcome.truth.rows, truth), (outcome.rows, delivered)):
        for row in rows:
            value = row.values.get(field_name)
            if value is not None and 1 <= row.epoch <= outcome.complete_through:
                into.setdefault(row.node_id, []).append((row.epoch, float(value)))
    for series in (truth, delivered):
        for readings in series.values():
            readings.sort()
    return truth, delivered


def held_rms(truth: Mapping[int, list[tuple[int, float]]], delivered: Series) -> float | None:
    """RMS error of sample-and-hold: at each true reading, a node's delivered reading of
    the latest epoch at or before it (before its first, the first). A winavg-merged
    reading carries its oldest epoch and the average, as the basestation sees it. None if
    there is nothing to compare; a node that delivered nothing is left out (its error has
    no held value to measure; tuple_yield counts it)."""
    squares: list[float] = []
    for node, readings in truth.items():
        got = delivered.get(node)
        if not got:
            continue
        epochs = [epoch for epoch, _ in got]
        for epoch, value in readings:
            at = max(0, bisect.bisect_right(epochs, epoch) - 1)
            squares.append((value - got[at][1]) ** 2)
    return math.sqrt(statistics.fmean(squares)) if squares else None
