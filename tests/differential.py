"""The differential test's grammar and runner: random queries on random networks, every
answer compared with the emulator's ground truth (emu/truth.py, gateway/accuracy.py).

A :class:`Case` is a few concurrent TinySQL queries on one emulated network (topology,
size, seed, lossless or the default radio). ``cases()`` generates them from a grammar over
the catalog: selected attributes and select-list arithmetic, WHERE conjunctions with field
arithmetic, every aggregate motebase runs (temporal ones included), GROUP BY expressions,
HAVING. The grammar keeps each case within what the network can carry -- the epoch is
long enough for the records and tuples it asks for (docs/accuracy.md, "capacity") -- so
on a lossless network every answer must be exact; on the default radio, answers may be
incomplete but never unsound.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
from motebase.emu.network import Network, NetworkConfig
from motebase.gateway.accuracy import AccuracyReport, AggregateAccuracy, TupleAccuracy, compare
from motebase.gateway.plan.capacity import INTERVALS_MAX, RECORD_MS, RECORD_SLACK, TUPLE_MS_PER_NODE

REGRESSIONS = Path(__file__).parent / "data" / "differential_regressions.json"

#: Sensor attributes with the ranges of the emulator's default sources (emu/sources.py).
SENSORS = {"light": (200, 800), "temp": (420, 540), "noise": (50, 350), "accel_x": (300, 700)}
PLAIN_AGGS = ("SUM", "MIN", "MAX", "COUNT", "AVG")
WINDOW_AGGS = ("WINAVG", "WINSUM", "WINMIN", "WINMAX", "WINCNT")
COMPARISONS = ("<", "<=", ">", ">=", "=", "<>")


@dataclass(frozen=True)
class Case:
    queries: tuple[str, ...]
    topology: str
    nodes: int
    seed: int
    lossless: bool
    epochs: int = 6

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class _Query:
    """A query before its epoch is chosen: its text without the epoch, and its load."""

    body: str
    records: int  # aggregate records per node and epoch, at most (0 for tuples)
    tuples: bool


def _arith(draw: st.DrawFn, attribute: str) -> str:
    op = draw(st.sampled_from(["", "", "+", "-", "*", "/", "%", ">>"]))
    if not op:
        return attribute
    const = {
        "+": st.integers(1, 500),
        "-": st.integers(1, 500),
        "*": st.integers(2, 40),
        "/": st.integers(2, 60),
        "%": st.integers(2, 97),
        ">>": st.integers(1, 4),
    }[op]
    return f"{attribute} {op} {draw(const)}"


@st.composite
def _predicate(draw: st.DrawFn) -> str:
    attribute = draw(st.sampled_from([*SENSORS, "nodeid"]))
    low, high = SENSORS.get(attribute, (0, 60))
    if draw(st.booleans()):
        return f"{attribute} {draw(st.sampled_from(COMPARISONS))} {draw(st.integers(low, high))}"
    op, const = draw(st.sampled_from([("/", 10), ("%", 7), ("+", 100), ("-", 50)]))
    value = draw(st.integers(0, 120)) if op in "/%" else draw(st.integers(low - 50, high + 100))
    return f"{attribute} {op} {const} {draw(st.sampled_from(COMPARISONS))} {value}"


def _where(draw: st.DrawFn) -> str:
    predicates = draw(st.lists(_predicate(), max_size=2))
    return f" WHERE {' AND '.join(predicates)}" if predicates else ""


@st.composite
def _tuple_query(draw: st.DrawFn) -> _Query:
    attributes = draw(
        st.lists(st.sampled_from([*SENSORS, "nodeid"]), min_size=1, max_size=3, unique=True)
    )
    items = [_arith(draw, a) if draw(st.booleans()) else a for a in attributes]
    return _Query(f"SELECT {', '.join(items)} FROM sensors{_where(draw)}", 0, True)


#: Bytes of a wide partial state (firmware/ops/agg.h), and what a node's arena offers a
#: GROUP BY query: its share less the reserve, 4 bytes of group table per slot
#: (firmware/core/runs.c, ops/groups.h).
STATE_BYTES = {"SUM": 4, "COUNT": 4, "MIN": 6, "MAX": 6, "AVG": 8}
GROUP_ARENA = 672 - 672 // 8
# records a node can send in a 16 s epoch's interval
MAX_RECORDS = int(16384 // (INTERVALS_MAX * RECORD_MS * RECORD_SLACK))


def _group_by(draw: st.DrawFn, nodes: int, ops: list[str]) -> tuple[str, int]:
    """A GROUP BY expression and its number of groups. A relay near the root holds a slot
    for nearly every group (one child of a grid's corner root carries most of it), so a
    case has no more groups than a node has slots for its aggregates, and no more records
    than the longest epoch carries."""
    slots = min(128, GROUP_ARENA // (4 + sum(STATE_BYTES[op] for op in ops)))
    most = min(slots, MAX_RECORDS // len(ops))
    per = math.ceil(nodes / 8)
    options = [
        ("nodeid", nodes),
        (f"nodeid / {per}", math.ceil(nodes / per)),
        ("nodeid / 3", math.ceil(nodes / 3)),
        *((f"nodeid % {m}", min(m, nodes)) for m in (4, 8, 12, 16, 24)),
        ("light / 100", 7),
        ("temp / 20", 7),
        ("noise / 50", 8),
    ]
    return draw(st.sampled_from([o for o in options if o[1] <= most]))


@st.composite
def _aggregate_query(draw: st.DrawFn, nodes: int) -> _Query:
    where = _where(draw)
    if draw(st.booleans()):  # GROUP BY: plain aggregates (windows keep no group spill)
        ops = draw(st.lists(st.sampled_from(PLAIN_AGGS), min_size=1, max_size=2))
        group, groups = _group_by(draw, nodes, ops)
        # The TinyDB tools refuse to group by an aggregated attribute (testqueries).
        free = [a for a in SENSORS if not group.startswith(a)]
        calls = [
            f"{op}({_arith(draw, draw(st.sampled_from(free)))})" if op != "COUNT" else "COUNT(*)"
            for op in ops
        ]
        calls = list(dict.fromkeys(calls))
        having = ""
        if draw(st.booleans()):
            having = f" HAVING {calls[0]} {draw(st.sampled_from(COMPARISONS))} 400"
        select = ", ".join([group, *calls])
        return _Query(
            f"SELECT {select} FROM sensors{where} GROUP BY {group}{having}",
            len(calls) * groups,
            False,
        )
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["plain", "plain", "window", "expavg"]))
        attribute = _arith(draw, draw(st.sampled_from(list(SENSORS))))
        if kind == "plain":
            op = draw(st.sampled_from(PLAIN_AGGS))
            calls.append("COUNT(*)" if op == "COUNT" else f"{op}({attribute})")
        elif kind == "window":
            op = draw(st.sampled_from(WINDOW_AGGS))
            slide = draw(st.integers(1, 4))
            window = draw(st.integers(1, slide + 4))
            calls.append(f"{op}({attribute}, {window}, {slide})")
        else:
            calls.append(f"EXPAVG({attribute}, {draw(st.integers(8, 16))})")
    calls = list(dict.fromkeys(calls))
    return _Query(f"SELECT {', '.join(calls)} FROM sensors{where}", len(calls), False)


def _epoch_ms(queries: list[_Query], nodes: int, draw: st.DrawFn) -> int:
    """A period from 1 to 16 s that carries the case's load (the capacity rule)."""
    records = sum(q.records for q in queries)
    tuple_queries = sum(q.tuples for q in queries)
    # the capacity rule (gateway/plan/capacity.py) at its shortest interval (an eighth of
    # the epoch), summed over the concurrent queries:
    # records and tuples share the channel
    record_ms = math.ceil(INTERVALS_MAX * RECORD_MS * records * RECORD_SLACK)
    need = max(1024, record_ms + TUPLE_MS_PER_NODE * nodes * tuple_queries)
    choices = [p for p in (1024, 2048, 4096, 8192, 16384) if p >= need]
    return draw(st.sampled_from(choices or [16384]))


@st.composite
def cases(draw: st.DrawFn, *, lossless: bool, max_nodes: int = 100) -> Case:
    topology = draw(st.sampled_from(["grid", "grid", "random", "intel"]))
    if topology == "intel":
        nodes = 55
    elif topology == "random":
        nodes = draw(st.integers(8, min(60, max_nodes)))
    else:
        nodes = draw(st.sampled_from([n for n in (4, 9, 16, 25, 49, 100) if n <= max_nodes]))
    queries = [
        draw(st.one_of(_tuple_query(), _aggregate_query(nodes)))
        for _ in range(draw(st.integers(1, 3)))
    ]
    epoch_ms = _epoch_ms(queries, nodes, draw)
    return Case(
        queries=tuple(f"{q.body} EPOCH DURATION {epoch_ms}" for q in queries),
        topology=topology,
        nodes=nodes,
        seed=draw(st.integers(1, 10_000)),
        lossless=lossless,
        # On a lossy radio double counting comes with parent changes, which take a
        # while to happen: a lossy case runs longer.
        epochs=draw(st.integers(4, 8) if lossless else st.integers(10, 20)),
    )


def run_case(case: Case) -> AccuracyReport:
    """Run the case's queries together and compare every answer with the truth."""
    config = NetworkConfig(
        nodes=case.nodes, topology=case.topology, seed=case.seed, lossless=case.lossless
    )
    with Network(config) as net:
        experiment = run_experiment(net, [QueryRun(q) for q in case.queries], epochs=case.epochs)
    return compare(result_records(experiment), truth_records(experiment))


def exactness_failures(report: AccuracyReport, topology: str = "grid") -> list[str]:
    """Why a lossless run is not exact: every delivered row must equal the truth, every truth
    row must be delivered, the firmware must agree with the reference evaluation, and on a
    grid every node must sample every epoch (a random or Intel layout may leave a mote out
    of everyone's range)."""
    failures = []
    for qid, q in report.queries.items():
        where = f"query {qid} ({q.sql})"
        if any(q.anomalies.values()):
            failures.append(f"{where}: firmware anomalies {q.anomalies}")
        if topology == "grid" and q.sampled != 1.0:
            failures.append(f"{where}: sampled {q.sampled} of node-epochs")
        if any(q.invariant_violations.values()):
            failures.append(f"{where}: {q.invariant_violations} {q.violation_examples}")
        if q.duplicates:
            failures.append(f"{where}: {q.duplicates} duplicate rows")
        if isinstance(q, TupleAccuracy):
            if q.tuple_yield not in (1.0, None) or q.wrong_values or q.spurious:
                failures.append(
                    f"{where}: yield {q.tuple_yield} ({q.delivered_readings}/{q.truth_readings}),"
                    f" {q.wrong_values} wrong, {q.spurious} spurious"
                )
        elif isinstance(q, AggregateAccuracy) and (
            q.missing_rows or q.spurious_rows or q.exact_fraction not in (1.0, None)
        ):
            failures.append(
                f"{where}: exact {q.exact_fraction}, {q.missing_rows} rows missing, "
                f"{q.spurious_rows} spurious, columns "
                f"{ {c: v.exact_fraction for c, v in q.columns.items()} }"
            )
    return failures


def soundness_failures(report: AccuracyReport) -> list[str]:
    """What a run on the default radio must never do (docs/accuracy.md, invariants). An
    epoch a node skipped is a loss of readings, not a wrong answer: on a lossy radio a clock
    corrected forward by its parent may jump over one, so only a lossless run forbids it."""
    return [
        f"query {qid} ({q.sql}): {q.invariant_violations} {q.violation_examples}"
        for qid, q in report.queries.items()
        if any(q.invariant_violations.values())
    ] + [
        f"query {qid} ({q.sql}): firmware anomalies {q.anomalies}"
        for qid, q in report.queries.items()
        if any(v for k, v in q.anomalies.items() if k != "skipped")
    ]


def _regression_entries() -> list[dict[str, Any]]:
    return json.loads(REGRESSIONS.read_text()) if REGRESSIONS.exists() else []


def _case_of(entry: dict[str, Any]) -> Case:
    fields = {k: v for k, v in entry.items() if k != "open"}
    return Case(**{**fields, "queries": tuple(fields["queries"])})


def load_regressions() -> list[Case]:
    return [_case_of(entry) for entry in _regression_entries()]


def open_regressions() -> list[tuple[Case, str | None]]:
    """Every recorded case with, for one whose defect is still open, what it is (the
    entry's "open" text): such a case is expected to fail until that is fixed."""
    return [(_case_of(entry), entry.get("open")) for entry in _regression_entries()]


def record_regression(case: Case) -> None:
    """Keep a shrunk counterexample, replayed by every later test run."""
    entries = _regression_entries()
    if case not in [_case_of(entry) for entry in entries]:
        entries.append(case.to_json())
        REGRESSIONS.write_text(json.dumps(entries, indent=1) + "\n")
