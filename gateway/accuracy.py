"""How close the rows a network delivered are to the ground truth of the same run.

``mote emulate --out R --truth T`` writes, side by side, the rows the gateway assembled
(R, the schema of ``mote query --out``) and the rows a perfect network would have delivered
(T: per query a ``truth`` header, then its rows in the same schema; see emu/truth.py).
:func:`compare` matches them row by row and returns an :class:`AccuracyReport`: tuple yield
and wrong values for tuple queries, exact fractions, errors and COUNT drift for aggregate
queries, soundness invariants that no lossy network may break, and how the query reached
and left the nodes. docs/accuracy.md explains every number.

Only epochs ``1..complete_through`` of each query are compared: later epochs had no time
to deliver, so their results are set aside, neither matched nor spurious. The module is
pure apart from :func:`load_jsonl`; callers that hold record dicts call :func:`compare`.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeGuard

Record = Mapping[str, Any]
Source = Literal["results", "truth"]

#: Floats are equal within this relative tolerance (AVG = sum / count differs in the last bits).
REL_TOL = 1e-9
#: Examples kept per violated invariant.
MAX_EXAMPLES = 3
#: The depth the emulator reports for a node with no route to the root.
UNROUTED = 255
#: Stop lags (epochs after the stop) the report measures.
STOP_GRACE = (2, 5)

# Soundness invariants: a lossy network loses and delays results; it never invents them.
TUPLE_EQUALS_TRUTH = "tuple_equals_truth"
NO_SPURIOUS_ROWS = "no_spurious_rows"
COUNT_LE_TRUTH = "count_le_truth"
MAX_LE_TRUTH = "max_le_truth"
MIN_GE_TRUTH = "min_ge_truth"

TUPLE_INVARIANTS = (TUPLE_EQUALS_TRUTH, NO_SPURIOUS_ROWS)
AGGREGATE_INVARIANTS = (COUNT_LE_TRUTH, MAX_LE_TRUTH, MIN_GE_TRUTH, NO_SPURIOUS_ROWS)

#: Aggregates that only shrink (+1: may not exceed the truth) or only grow (-1: may not fall
#: below it) when inputs are lost: a subset's count and max are at most the whole's.
_BOUNDED: dict[str, tuple[str, int]] = {
    "CNT": (COUNT_LE_TRUTH, 1),
    "WINCNT": (COUNT_LE_TRUTH, 1),
    "MAX": (MAX_LE_TRUTH, 1),
    "WINMAX": (MAX_LE_TRUTH, 1),
    "MIN": (MIN_GE_TRUTH, -1),
    "WINMIN": (MIN_GE_TRUTH, -1),
}
COUNT = "CNT"

_GROUP_BY = re.compile(r"\bGROUP\s+BY\b", re.IGNORECASE)


class AccuracyInputError(ValueError):
    """A results or truth input that cannot be compared. ``index`` is the record's 1-based
    position among the records given (the line number when the file has no blank lines)."""

    def __init__(self, message: str, source: Source | None = None, index: int | None = None):
        self.source = source
        self.index = index
        where = f"{source} record {index}: " if source is not None and index is not None else ""
        super().__init__(where + message)


# --- the report -----------------------------------------------------------------------------


@dataclass(frozen=True)
class YieldStat:
    """Delivered out of expected; ``fraction`` is None when nothing was expected."""

    delivered: int
    expected: int
    fraction: float | None

    @classmethod
    def of(cls, delivered: int, expected: int) -> YieldStat:
        return cls(delivered, expected, _ratio(delivered, expected))


@dataclass(frozen=True, kw_only=True)
class Dissemination:
    """How far and how fast the query spread: epochs are the nodes' first sampled epoch."""

    nodes: int
    nodes_reached: int
    never_reached: int
    first_epoch: int | None
    all_reached_at_epoch: int | None
    epochs_before_all: int | None


@dataclass(frozen=True, kw_only=True)
class StopReport:
    """How the nodes left a stopped query: lag = last sampled epoch - the stop's epoch."""

    stopped_at_epoch: int
    lag_by_node: dict[int, int]
    stopped_within_2: float | None
    stopped_within_5: float | None
    last_observed_epoch: int | None
    still_sampling: list[int]  # nodes sampling in the last epoch observed, after the stop
    not_freed: list[int]  # nodes that ran the query and never reported it freed


@dataclass(frozen=True, kw_only=True)
class QueryAccuracy:
    """What every query's report holds; see :class:`TupleAccuracy`, :class:`AggregateAccuracy`."""

    kind: ClassVar[str] = "query"

    query_id: int
    sql: str
    epoch_ms: int | None
    nodes: int
    complete_through: int
    duplicates: int  # deliveries of a key already delivered
    ignored_results: int  # results outside epochs 1..complete_through
    invariant_violations: dict[str, int]
    violation_examples: dict[str, list[str]]
    dissemination: Dissemination
    stop: StopReport | None
    anomalies: dict[str, int]
    #: node-epochs in 1..complete_through that ran the query, over nodes x complete_through:
    #: yield and exactness are measured against what the nodes sampled, so a query that
    #: reached few nodes, or nodes that skip epochs, show here and not there
    sampled: float | None

    @property
    def sound(self) -> bool:
        return not any(self.invariant_violations.values())

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **_plain(self)}


@dataclass(frozen=True)
class LagStats:
    """Lags in epochs (TupleAccuracy.lag_epochs)."""

    median: float
    p90: float
    latest: float

    @classmethod
    def of(cls, lags: Sequence[float]) -> LagStats:
        ordered = sorted(lags)
        return cls(statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))], ordered[-1])


@dataclass(frozen=True, kw_only=True)
class TupleAccuracy(QueryAccuracy):
    """A tuple query, keyed by (epoch, node)."""

    kind: ClassVar[str] = "tuple"

    truth_readings: int
    delivered_readings: int  # distinct truth keys delivered at least once
    tuple_yield: float | None
    yield_by_depth: dict[int | None, YieldStat]  # the truth reading's depth; None: unknown
    yield_by_node: dict[int, YieldStat]
    zero_yield_nodes: list[int]
    wrong_values: int
    spurious: int
    #: How long after the first reading of its epoch each delivered reading came, in epochs:
    #: median, 90th percentile, latest (results that waited in relay queues show here).
    #: None where the results carry no receive_time.
    lag_epochs: LagStats | None = None


@dataclass(frozen=True, kw_only=True)
class ValueStats:
    """Agreement of aggregate values: exact matches, and errors where both sides have one."""

    values: int  # truth (epoch, group, column) values
    exact_values: int
    exact_fraction: float | None
    mean_abs_error: float | None
    max_abs_error: float | None
    mean_rel_error: float | None  # over truth values that are not 0
    max_rel_error: float | None


@dataclass(frozen=True, kw_only=True)
class EpochAccuracy(ValueStats):
    epoch: int
    truth_rows: int
    result_rows: int
    missing_rows: int
    spurious_rows: int
    count_truth: float | None  # the COUNT column summed over groups, if the query has one
    count_delivered: float | None


@dataclass(frozen=True, kw_only=True)
class GroupAccuracy(ValueStats):
    group: int
    missing_rows: int
    spurious_rows: int


@dataclass(frozen=True, kw_only=True)
class AggregateAccuracy(QueryAccuracy, ValueStats):
    """An aggregate query: rows keyed by (epoch, group), values by output column."""

    kind: ClassVar[str] = "aggregate"

    grouped: bool
    truth_rows: int
    result_rows: int
    missing_rows: int
    spurious_rows: int
    # COUNT against the truth, per (epoch, group) row both sides have ("epochs" when ungrouped)
    count_over_epochs: int
    count_under_epochs: int
    count_exact_epochs: int
    count_max_over: float
    # Delivered values of epoch e against the truth of epoch e - 1: near 1 while
    # exact_fraction is low means the rows arrive labelled one epoch late.
    previous_epoch_exact_fraction: float | None
    epochs: list[EpochAccuracy]
    groups: dict[int, GroupAccuracy]
    columns: dict[str, ValueStats]  # by output column: which aggregate is off


QueryReport = TupleAccuracy | AggregateAccuracy


@dataclass(frozen=True)
class AccuracyReport:
    """Every query of the truth, by query id; results of other queries are only listed."""

    queries: dict[int, QueryReport]
    ignored_queries: list[int] = field(default_factory=list)

    @property
    def sound(self) -> bool:
        return all(q.sound for q in self.queries.values())

    def violations(self) -> int:
        return sum(sum(q.invariant_violations.values()) for q in self.queries.values())

    def tuple_query(self, query_id: int) -> TupleAccuracy:
        query = self.queries[query_id]
        if not isinstance(query, TupleAccuracy):
            raise TypeError(f"query {query_id} is an aggregate query")
        return query

    def aggregate_query(self, query_id: int) -> AggregateAccuracy:
        query = self.queries[query_id]
        if not isinstance(query, AggregateAccuracy):
            raise TypeError(f"query {query_id} is a tuple query")
        return query

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: queries by id (as strings), dict keys as strings, no NaN."""
        return {str(qid): query.to_json() for qid, query in sorted(self.queries.items())}


# --- the inputs -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TruthHeader:
    """A query's ``truth`` record: what the comparison needs beyond the rows."""

    query_id: int
    sql: str
    epoch_ms: int | None
    aggregate: bool
    nodes: int
    complete_through: int
    stopped_at_epoch: int | None
    node_epochs: dict[int, tuple[int, int]]
    freed_at: dict[int, int]
    anomalies: dict[str, int]
    #: When the stop was sent and each node's last sample, in virtual ms (optional).
    stop_time_ms: float | None = None
    last_sample_ms: dict[int, float] = field(default_factory=dict)
    #: When the emulator stopped watching the network, in virtual ms (optional).
    watched_until_ms: float | None = None
    #: (epoch, group) that had readings but whose row HAVING rejected (optional)
    having_rejected: frozenset[tuple[int, int]] = frozenset()


@dataclass(frozen=True)
class ReadingLine:
    """One delivered or true tuple (not motebase.gateway.assembly.Reading: the record, parsed)."""

    query_id: int
    epoch: int
    node: int
    values: Mapping[str, Any]
    depth: int | None
    receive_time: float | None = None  # when the gateway had it (results only), seconds


@dataclass(frozen=True)
class AggregateLine:
    """One aggregate of one (epoch, group) row; a row is all lines sharing the key."""

    query_id: int
    epoch: int
    group: int
    column: str
    aggregate: str
    value: float | int | None


RowLine = ReadingLine | AggregateLine


def load_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, blank lines skipped. AccuracyInputError
    naming the file and line for anything else."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise AccuracyInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise AccuracyInputError(f"{path}: not UTF-8 text ({exc.reason})") from None
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise AccuracyInputError(
                f"{path}:{lineno}: not valid JSON ({exc.msg}, column {exc.colno})"
            ) from None
        if not isinstance(record, dict):
            raise AccuracyInputError(f"{path}:{lineno}: expected a JSON object per line")
        records.append(record)
    return records


def _get(record: Record, key: str, kinds: tuple[type, ...], source: Source, index: int) -> Any:
    """``record[key]`` if it has one of ``kinds`` (bool is never a number here)."""
    if key not in record:
        raise AccuracyInputError(f"no {key!r}", source, index)
    value = record[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise AccuracyInputError(f"{key!r} is {value!r}", source, index)
    return value


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse_row(record: Record, source: Source, index: int) -> RowLine | None:
    """A ``reading`` or ``aggregate`` record, checked; None for any other kind."""
    kind = record.get("kind")
    if kind not in ("reading", "aggregate"):
        return None
    qid = _get(record, "query_id", (int,), source, index)
    epoch = _get(record, "epoch", (int,), source, index)
    if kind == "reading":
        depth = record.get("depth")
        if depth is not None and not isinstance(depth, int):
            raise AccuracyInputError(f"'depth' is {depth!r}", source, index)
        received = record.get("receive_time")
        return ReadingLine(
            qid,
            epoch,
            _get(record, "node_id", (int,), source, index),
            _get(record, "values", (dict,), source, index),
            depth,
            float(received) if _is_number(received) else None,
        )
    value = record.get("value")
    if value is not None and not _is_number(value):
        raise AccuracyInputError(f"'value' is {value!r}", source, index)
    return AggregateLine(
        qid,
        epoch,
        _get(record, "group", (int,), source, index),
        _get(record, "column", (str,), source, index),
        _get(record, "aggregate", (str,), source, index),
        value,
    )


def parse_header(record: Record, index: int) -> TruthHeader:
    """A ``truth`` record as emu/experiment.py ``truth_header`` writes it."""

    def get(key: str, *kinds: type) -> Any:
        return _get(record, key, kinds, "truth", index)

    spans, freed, counts = get("node_epochs", dict), get("freed_at", dict), get("anomalies", dict)
    try:
        node_epochs = {int(node): (int(span[0]), int(span[1])) for node, span in spans.items()}
        freed_at = {int(node): int(epoch) for node, epoch in freed.items()}
        anomalies = {str(k): int(v) for k, v in counts.items()}
        last_sample_ms = {
            int(node): float(t) for node, t in (record.get("last_sample_ms") or {}).items()
        }
        stop_time = record.get("stop_time_ms")
        stop_time_ms = None if stop_time is None else float(stop_time)
        watched = record.get("watched_until_ms")
        watched_until_ms = None if watched is None else float(watched)
        having_rejected = frozenset(
            (int(epoch), int(group)) for epoch, group in record.get("having_rejected") or ()
        )
    except (TypeError, ValueError, IndexError, AttributeError) as exc:
        raise AccuracyInputError(f"malformed node map ({exc})", "truth", index) from None
    return TruthHeader(
        query_id=get("query_id", int),
        sql=get("sql", str),
        epoch_ms=get("epoch_ms", int, type(None)),
        aggregate=get("aggregate", bool),
        nodes=get("nodes", int),
        complete_through=get("complete_through", int),
        stopped_at_epoch=get("stopped_at_epoch", int, type(None)),
        node_epochs=node_epochs,
        freed_at=freed_at,
        anomalies=anomalies,
        stop_time_ms=stop_time_ms,
        last_sample_ms=last_sample_ms,
        watched_until_ms=watched_until_ms,
        having_rejected=having_rejected,
    )


@dataclass
class QueryTruth:
    header: TruthHeader
    rows: list[RowLine] = field(default_factory=list)


def parse_truth(records: Iterable[Record]) -> dict[int, QueryTruth]:
    """The truth file's queries by id: headers first (anywhere), then each query's rows."""
    records = list(records)
    truths: dict[int, QueryTruth] = {}
    for index, record in enumerate(records, start=1):
        if record.get("kind") == "truth":
            header = parse_header(record, index)
            if header.query_id in truths:
                # Rows carry only the query id: two queries under one id cannot be told apart.
                raise AccuracyInputError(
                    f"a second header for query {header.query_id}", "truth", index
                )
            truths[header.query_id] = QueryTruth(header)
    if not truths:
        raise AccuracyInputError(
            "the truth has no 'truth' header records (is it the results file? "
            "the order is RESULTS TRUTH; the truth comes from `mote emulate --truth`)",
            "truth",
        )
    for index, record in enumerate(records, start=1):
        row = parse_row(record, "truth", index)
        if row is None:
            continue
        if row.query_id not in truths:
            raise AccuracyInputError(
                f"a row of query {row.query_id}, which has no header", "truth", index
            )
        truths[row.query_id].rows.append(row)
    return truths


# --- comparing ------------------------------------------------------------------------------


def compare(results: Iterable[Record], truth: Iterable[Record]) -> AccuracyReport:
    """Compare delivered rows (``mote query --out`` records) with the truth records of the
    same run (``mote emulate --truth``), query by query of the truth."""
    truths = parse_truth(truth)
    delivered: dict[int, list[RowLine]] = defaultdict(list)
    for index, record in enumerate(results, start=1):
        row = parse_row(record, "results", index)
        if row is not None:
            delivered[row.query_id].append(row)
    queries = {
        qid: compare_query(t.header, t.rows, delivered.get(qid, [])) for qid, t in truths.items()
    }
    return AccuracyReport(dict(sorted(queries.items())), sorted(set(delivered) - set(truths)))


def compare_query(
    header: TruthHeader, truth: Sequence[RowLine], delivered: Sequence[RowLine]
) -> QueryReport:
    """One query's report from its header, truth rows and delivered rows."""
    if header.aggregate:
        return _compare_aggregates(
            header,
            [r for r in truth if isinstance(r, AggregateLine)],
            [r for r in delivered if isinstance(r, AggregateLine)],
        )
    return _compare_tuples(
        header,
        [r for r in truth if isinstance(r, ReadingLine)],
        [r for r in delivered if isinstance(r, ReadingLine)],
    )


def _in_window(header: TruthHeader, epoch: int) -> bool:
    return 1 <= epoch <= header.complete_through


def same_value(a: object, b: object) -> bool:
    """Equal, floats within :data:`REL_TOL` relative; None equals only None."""
    if _is_number(a) and _is_number(b) and (isinstance(a, float) or isinstance(b, float)):
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)
    return a == b


def _differing(got: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    missing = object()
    return [
        k
        for k in sorted(set(got) | set(want))
        if not same_value(got.get(k, missing), want.get(k, missing))
    ]


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _common(
    header: TruthHeader,
    *,
    duplicates: int,
    ignored: int,
    violations: dict[str, int],
    examples: dict[str, list[str]],
) -> dict[str, Any]:
    """The fields every query's report shares."""
    return {
        "query_id": header.query_id,
        "sql": header.sql,
        "epoch_ms": header.epoch_ms,
        "nodes": header.nodes,
        "complete_through": header.complete_through,
        "duplicates": duplicates,
        "ignored_results": ignored,
        "invariant_violations": violations,
        "violation_examples": {k: v for k, v in examples.items() if v},
        "dissemination": dissemination(header),
        "stop": stop_report(header),
        "anomalies": dict(header.anomalies),
        "sampled": _sampled(header),
    }


def _sampled(header: TruthHeader) -> float | None:
    last = header.complete_through
    ran = sum(
        max(0, min(end, last) - max(first, 1) + 1) for first, end in header.node_epochs.values()
    )
    return _ratio(ran - header.anomalies.get("skipped", 0), header.nodes * last)


class _Violations:
    """Violation counts per invariant, with the first few examples of each."""

    def __init__(self, names: Sequence[str]) -> None:
        self.counts = dict.fromkeys(names, 0)
        self.examples: dict[str, list[str]] = {name: [] for name in names}

    def add(self, name: str, example: str) -> None:
        self.counts[name] += 1
        if len(self.examples[name]) < MAX_EXAMPLES:
            self.examples[name].append(example)


def _compare_tuples(
    header: TruthHeader, truth: Sequence[ReadingLine], delivered: Sequence[ReadingLine]
) -> TupleAccuracy:
    expected = {(r.epoch, r.node): r for r in truth if _in_window(header, r.epoch)}
    compared = [r for r in delivered if _in_window(header, r.epoch)]
    violations = _Violations(TUPLE_INVARIANTS)
    seen: Counter[tuple[int, int]] = Counter()
    for reading in compared:
        key = (reading.epoch, reading.node)
        seen[key] += 1
        want = expected.get(key)
        where = f"epoch {reading.epoch} node {reading.node}"
        if want is None:
            violations.add(NO_SPURIOUS_ROWS, f"{where}: delivered, no truth reading")
        elif differing := _differing(reading.values, want.values):
            shown = ", ".join(
                f"{k} {_show(reading.values.get(k))} (truth {_show(want.values.get(k))})"
                for k in differing
            )
            violations.add(TUPLE_EQUALS_TRUTH, f"{where}: {shown}")
    hit = {key for key in seen if key in expected}
    by_depth: dict[int | None, list[int]] = defaultdict(lambda: [0, 0])
    by_node: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for key, reading in expected.items():
        for tally in (by_depth[reading.depth], by_node[reading.node]):
            tally[0] += key in hit
            tally[1] += 1
    yield_by_node = {n: YieldStat.of(*by_node[n]) for n in sorted(by_node)}
    return TupleAccuracy(
        **_common(
            header,
            duplicates=sum(count - 1 for count in seen.values()),
            ignored=len(delivered) - len(compared),
            violations=violations.counts,
            examples=violations.examples,
        ),
        truth_readings=len(expected),
        delivered_readings=len(hit),
        tuple_yield=_ratio(len(hit), len(expected)),
        yield_by_depth={d: YieldStat.of(*by_depth[d]) for d in sorted(by_depth, key=_depth_order)},
        yield_by_node=yield_by_node,
        zero_yield_nodes=[n for n, s in yield_by_node.items() if s.delivered == 0],
        wrong_values=violations.counts[TUPLE_EQUALS_TRUTH],
        spurious=violations.counts[NO_SPURIOUS_ROWS],
        **_lateness(header, [r for r in compared if (r.epoch, r.node) in expected]),
    )


def _lateness(header: TruthHeader, readings: Sequence[ReadingLine]) -> dict[str, Any]:
    """How long after the first reading of its epoch each reading came, in epochs."""
    times = [(r.epoch, r.receive_time) for r in readings if r.receive_time is not None]
    if not times or not header.epoch_ms or len(times) < len(readings):
        return {}
    first: dict[int, float] = {}
    for epoch, at in times:
        first[epoch] = min(at, first.get(epoch, at))
    lags = [(at - first[epoch]) * 1000.0 / header.epoch_ms for epoch, at in times]
    return {"lag_epochs": LagStats.of(lags)}


def _depth_order(depth: int | None) -> int:
    return UNROUTED + 1 if depth is None else depth


class _Tally:
    """Exact matches and errors of a set of (delivered, truth) values."""

    def __init__(self) -> None:
        self.values = self.exact = 0
        self.abs_errors: list[float] = []
        self.rel_errors: list[float] = []

    def add(self, got: object, want: object) -> None:
        self.values += 1
        self.exact += same_value(got, want)
        if _is_number(got) and _is_number(want):
            error = abs(got - want)
            self.abs_errors.append(error)
            if want != 0:
                self.rel_errors.append(error / abs(want))

    def missed(self, count: int) -> None:
        self.values += count

    def stats(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "exact_values": self.exact,
            "exact_fraction": _ratio(self.exact, self.values),
            "mean_abs_error": _mean(self.abs_errors),
            "max_abs_error": max(self.abs_errors, default=None),
            "mean_rel_error": _mean(self.rel_errors),
            "max_rel_error": max(self.rel_errors, default=None),
        }


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


class _RowTally(_Tally):
    """A tally that also counts rows: for an epoch or a group."""

    def __init__(self) -> None:
        super().__init__()
        self.truth_rows = self.result_rows = self.missing_rows = self.spurious_rows = 0
        self.count_truth: float | None = None
        self.count_delivered: float | None = None


AggregateRow = dict[str, AggregateLine]
AggRows = dict[tuple[int, int], AggregateRow]


def _rows(lines: Iterable[AggregateLine]) -> tuple[AggRows, int]:
    """Lines gathered into (epoch, group) rows by column, and how many rows were delivered
    again (a row repeats as often as its most repeated column); the first line wins."""
    rows: AggRows = defaultdict(dict)
    seen: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
    for line in lines:
        key = (line.epoch, line.group)
        seen[key][line.column] += 1
        rows[key].setdefault(line.column, line)
    return dict(rows), sum(max(columns.values()) - 1 for columns in seen.values())


def _add_count(total: float | None, row: AggregateRow, column: str | None) -> float | None:
    line = row.get(column) if column is not None else None
    if line is None or line.value is None:
        return total
    return (total or 0) + line.value


class _AggregateComparison:
    """Walks the (epoch, group) rows of both sides once, tallying overall, per epoch and
    per group, and checking the soundness invariants."""

    def __init__(
        self, count_column: str | None, having_rejected: frozenset[tuple[int, int]] = frozenset()
    ) -> None:
        self.count_column = count_column
        self.having_rejected = having_rejected
        self.violations = _Violations(AGGREGATE_INVARIANTS)
        self.overall = _Tally()
        self.epochs: dict[int, _RowTally] = defaultdict(_RowTally)
        self.groups: dict[int, _RowTally] = defaultdict(_RowTally)
        self.columns: dict[str, _Tally] = defaultdict(_Tally)
        self.counts: Counter[str] = Counter()
        self.max_over: float = 0

    def row(
        self, key: tuple[int, int], want: AggregateRow | None, have: AggregateRow | None
    ) -> None:
        epoch, group = key
        per_epoch = self.epochs[epoch]
        tallies = (per_epoch, self.groups[group])
        if have is not None:
            for t in tallies:
                t.result_rows += 1
            per_epoch.count_delivered = _add_count(
                per_epoch.count_delivered, have, self.count_column
            )
        if want is None:
            for t in tallies:
                t.spurious_rows += 1
            # A group HAVING rejected had readings: a partial aggregate that passes is a
            # wrong row, not an invented one.
            if key not in self.having_rejected:
                self.violations.add(NO_SPURIOUS_ROWS, f"epoch {epoch} group {group}: no truth row")
            return
        for t in tallies:
            t.truth_rows += 1
        per_epoch.count_truth = _add_count(per_epoch.count_truth, want, self.count_column)
        if have is None:
            for t in tallies:
                t.missing_rows += 1
        for column, truth_line in sorted(want.items()):
            line = have.get(column) if have is not None else None
            self._value(f"epoch {epoch} group {group}: {column}", truth_line, line, tallies)

    def _value(
        self,
        where: str,
        want: AggregateLine,
        have: AggregateLine | None,
        tallies: tuple[_Tally, ...],
    ) -> None:
        for t in (self.overall, self.columns[want.column], *tallies):
            if have is None:
                t.missed(1)
            else:
                t.add(have.value, want.value)
        if have is None or have.value is None or want.value is None:
            return
        _check_bound(self.violations, want.aggregate, have.value, want.value, where)
        if want.aggregate == COUNT:
            diff = have.value - want.value
            self.counts["over" if diff > 0 else "under" if diff < 0 else "exact"] += 1
            self.max_over = max(self.max_over, diff)


def _compare_aggregates(
    header: TruthHeader, truth: Sequence[AggregateLine], delivered: Sequence[AggregateLine]
) -> AggregateAccuracy:
    expected, _ = _rows(r for r in truth if _in_window(header, r.epoch))
    compared = [r for r in delivered if _in_window(header, r.epoch)]
    got, duplicates = _rows(compared)
    # Per-epoch COUNT totals follow one COUNT column; a query rarely has two.
    walk = _AggregateComparison(
        min((r.column for r in truth if r.aggregate == COUNT), default=None),
        header.having_rejected,
    )
    for key in sorted(set(expected) | set(got)):
        walk.row(key, expected.get(key), got.get(key))
    violations = walk.violations
    return AggregateAccuracy(
        **_common(
            header,
            duplicates=duplicates,
            ignored=len(delivered) - len(compared),
            violations=violations.counts,
            examples=violations.examples,
        ),
        **walk.overall.stats(),
        grouped=bool(_GROUP_BY.search(header.sql)) or any(g != 0 for g in walk.groups),
        truth_rows=len(expected),
        result_rows=len(got),
        missing_rows=sum(t.missing_rows for t in walk.epochs.values()),
        spurious_rows=sum(t.spurious_rows for t in walk.epochs.values()),
        count_over_epochs=walk.counts["over"],
        count_under_epochs=walk.counts["under"],
        count_exact_epochs=walk.counts["exact"],
        count_max_over=walk.max_over,
        previous_epoch_exact_fraction=_previous_epoch_exact(expected, got),
        epochs=[_epoch_accuracy(e, walk.epochs[e]) for e in sorted(walk.epochs)],
        groups={g: _group_accuracy(g, walk.groups[g]) for g in sorted(walk.groups)},
        columns={c: ValueStats(**walk.columns[c].stats()) for c in sorted(walk.columns)},
    )


def _previous_epoch_exact(expected: AggRows, got: AggRows) -> float | None:
    same = total = 0
    for (epoch, group), row in got.items():
        previous = expected.get((epoch - 1, group), {})
        for column, line in row.items():
            if column in previous:
                total += 1
                same += same_value(line.value, previous[column].value)
    return _ratio(same, total)


def _check_bound(
    violations: _Violations, aggregate: str, got: float, want: float, where: str
) -> None:
    """Records a violation when a value that loss can only shrink (grow) exceeds (falls
    below) the truth; within the float tolerance counts as equal."""
    bound = _BOUNDED.get(aggregate)
    if bound is None or same_value(got, want):
        return
    invariant, sign = bound
    if (got - want) * sign > 0:
        relation = ">" if sign > 0 else "<"
        violations.add(invariant, f"{where} {_show(got)} {relation} truth {_show(want)}")


def _epoch_accuracy(epoch: int, t: _RowTally) -> EpochAccuracy:
    return EpochAccuracy(
        **t.stats(),
        epoch=epoch,
        truth_rows=t.truth_rows,
        result_rows=t.result_rows,
        missing_rows=t.missing_rows,
        spurious_rows=t.spurious_rows,
        count_truth=t.count_truth,
        count_delivered=t.count_delivered,
    )


def _group_accuracy(group: int, t: _RowTally) -> GroupAccuracy:
    return GroupAccuracy(
        **t.stats(), group=group, missing_rows=t.missing_rows, spurious_rows=t.spurious_rows
    )


# --- dissemination and stop -----------------------------------------------------------------


def dissemination(header: TruthHeader) -> Dissemination:
    """How many nodes ever sampled the query, and the epoch by which all N had."""
    firsts = [first for first, _ in header.node_epochs.values()]
    reached = len(firsts)
    all_at = max(firsts) if firsts and reached >= header.nodes else None
    return Dissemination(
        nodes=header.nodes,
        nodes_reached=reached,
        never_reached=max(0, header.nodes - reached),
        first_epoch=min(firsts, default=None),
        all_reached_at_epoch=all_at,
        epochs_before_all=all_at - min(firsts) if all_at is not None else None,
    )


def _stop_lags(header: TruthHeader, stop: int) -> dict[int, int]:
    """Epochs each node went on sampling after the stop. In time where the truth has the
    times: a node at depth d works on an epoch about d / 8 to d / 4 epochs before the root does
    (firmware/core/schedule.h), so its epoch numbers run ahead of the root's and would
    count that lead as lag. Else by epoch number."""
    period = header.epoch_ms
    if header.stop_time_ms is None or not header.last_sample_ms or not period:
        return {node: last - stop for node, (_, last) in sorted(header.node_epochs.items())}
    return {
        node: max(0, math.ceil((header.last_sample_ms[node] - header.stop_time_ms) / period))
        for node in sorted(header.node_epochs)
        if node in header.last_sample_ms
    }


def _still_sampling(header: TruthHeader, stop: int, last_observed: int | None) -> list[int]:
    """Nodes that sampled in the last epoch watched, when some node sampled well after
    the stop. In time where the truth has the times (epoch numbers of deep nodes run
    ahead, _stop_lags): within an epoch of the end of the watch (of the latest sample
    when the truth does not say when the watch ended), that more than two epochs after
    the stop was sent, and not released since."""
    period = header.epoch_ms
    if header.stop_time_ms is not None and header.last_sample_ms and period:
        latest = max(header.last_sample_ms.values())
        if latest - header.stop_time_ms <= 2 * period:
            return []
        # A running node samples once a period: one whose last sample is older than
        # that (and some slack for a retimed schedule) when the watch ended had stopped.
        recent = (
            latest - period
            if header.watched_until_ms is None
            else header.watched_until_ms - 1.5 * period
        )
        return sorted(
            n for n, t in header.last_sample_ms.items() if t >= recent and n not in header.freed_at
        )
    if last_observed is None or last_observed <= stop:
        return []
    return [n for n, (_, last) in sorted(header.node_epochs.items()) if last == last_observed]


def stop_report(header: TruthHeader) -> StopReport | None:
    """How promptly the nodes that ran the query stopped sampling it; None if not stopped."""
    stop = header.stopped_at_epoch
    if stop is None:
        return None
    lag = _stop_lags(header, stop)
    # A release is reported in the node's current epoch, so releases show how long the
    # network was watched beyond the last sample.
    last_observed = max(
        [last for _, last in header.node_epochs.values()] + list(header.freed_at.values()),
        default=None,
    )
    still = _still_sampling(header, stop, last_observed)
    # A node still sampling when the watch ended has not stopped, however small its lag.
    running = set(still)
    stopped = [v for n, v in lag.items() if n not in running]
    within = {k: _ratio(sum(1 for v in stopped if v <= k), len(lag)) for k in STOP_GRACE}
    return StopReport(
        stopped_at_epoch=stop,
        lag_by_node=lag,
        stopped_within_2=within[2],
        stopped_within_5=within[5],
        last_observed_epoch=last_observed,
        still_sampling=still,
        not_freed=[n for n in sorted(header.node_epochs) if n not in header.freed_at],
    )


# --- output helpers -------------------------------------------------------------------------


def _show(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "null" if value is None else str(value)


_LEADING = frozenset({"query_id", "sql", "epoch", "group"})


def _plain(value: Any) -> Any:
    """Dataclasses, tuples and non-string keys as JSON has them (keys as strings)."""
    if is_dataclass(value) and not isinstance(value, type):
        # Inherited value statistics would come first; identity reads better.
        names = sorted((f.name for f in fields(value)), key=lambda n: n not in _LEADING)
        return {name: _plain(getattr(value, name)) for name in names}
    if isinstance(value, Mapping):
        return {_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _key(key: object) -> str:
    return "unknown" if key is None else str(key)
