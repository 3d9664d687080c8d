"""The truth evaluates a query's samples as columns (emu/truth.py, issue 14: a 1,000-node
run's ~480,000 samples as objects took most of its memory and a third of its time). Held
here to the loop over samples it replaced, one sample at a time with Python's integers,
on random samples with every anomaly the truth counts: fields not read, a verdict that
differs from the reference, an epoch evaluated twice, epochs let pass; negative values and
every field operator, groups that wrap to int16, windows, EXPAVG, HAVING."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from motebase.emu.truth import (
    _COMPARE,
    Anomalies,
    Sample,
    SampleColumns,
    _aggregate_series,
    _wire_reader,
    ground_truth,
)
from motebase.gateway.assembly import RegisteredQuery, aggregate_row, reading_row
from motebase.gateway.finalize import AggregateValue
from motebase.gateway.plan import compile_query
from motebase.gateway.plan.model import FieldArith

QUERIES = [
    "SELECT nodeid, light, temp FROM sensors WHERE light / 7 > 20 AND temp % 9 <> 3",
    "SELECT light * 3, temp >> 2 FROM sensors WHERE light - 50 >= -100",
    "SELECT nodeid, noise FROM sensors",
    "SELECT COUNT(*), SUM(light), MIN(temp), MAX(temp), AVG(light / 3) FROM sensors"
    " WHERE noise % 4 <> 1",
    "SELECT nodeid % 3, SUM(light), COUNT(*) FROM sensors WHERE temp > -500"
    " GROUP BY nodeid % 3 HAVING SUM(light) > 400",
    "SELECT light * 40, MAX(temp) FROM sensors GROUP BY light * 40",
    "SELECT WINAVG(light, 4, 2), WINMAX(temp - 7, 3, 3), EXPAVG(noise, 12) FROM sensors",
]


def _arith(arith: FieldArith, value: int) -> int:
    op, c = arith.op, arith.const
    if not op or (op in "/%" and c == 0) or (op == ">>" and c < 0):
        return value
    if op in "/%":
        q, r = abs(value) // abs(c), abs(value) % abs(c)
        return (q if (value >= 0) == (c >= 0) else -q) if op == "/" else (r if value >= 0 else -r)
    return {"*": value * c, "+": value + c, "-": value - c, ">>": value >> c}[op]


def one_at_a_time(query: RegisteredQuery, samples: Sequence[Sample]) -> tuple[Any, ...]:
    """The evaluation the columns replaced: rows, anomalies, HAVING's rejects."""
    plan, anomalies = query.plan, Anomalies()
    by_epoch: dict[int, dict[int, Sample]] = defaultdict(dict)
    for sample in sorted(samples, key=lambda s: (s.epoch, s.t_us)):
        if sample.node in by_epoch[sample.epoch]:
            anomalies.repeated += 1
        else:
            by_epoch[sample.epoch][sample.node] = sample
    spans: dict[int, list[int]] = defaultdict(list)
    for epoch, nodes in by_epoch.items():
        for node in nodes:
            spans[node].append(epoch)
    anomalies.skipped = sum(max(es) - min(es) + 1 - len(es) for es in spans.values())
    passing: dict[int, list[Sample]] = defaultdict(list)
    for epoch in sorted(by_epoch):
        for node in sorted(by_epoch[epoch]):
            sample, verdict = by_epoch[epoch][node], True
            for selection in plan.selections:
                value = sample.values.get(selection.field_index)
                if value is None:
                    anomalies.unread += 1
                verdict = value is not None and _COMPARE[selection.op](
                    _arith(selection.arith, value), selection.value
                )
                if not verdict:
                    break
            anomalies.verdicts += verdict != sample.passed
            if verdict:
                passing[epoch].append(sample)
    if not plan.is_aggregate:
        readers = [(f.name, f.index, _wire_reader(f.wire_type)) for f in plan.fields]
        rows = [
            reading_row(
                query,
                epoch,
                s.node,
                {n: r(s.values[i]) if i in s.values else None for n, i, r in readers},
                s.t_us / 1e6,
            )
            for epoch, samples_of_epoch in passing.items()
            for s in samples_of_epoch
        ]
        return rows, anomalies, []
    inputs: Any = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    last_t: dict[int, float] = {}
    for epoch, samples_of_epoch in passing.items():
        for s in samples_of_epoch:
            last_t[epoch] = max(last_t.get(epoch, 0.0), s.t_us / 1e6)
            for agg in plan.aggregates:
                value, group = s.values.get(agg.field_index), 0
                if value is not None and agg.group is not None:
                    key = s.values.get(agg.group.field_index)
                    value = None if key is None else value
                    group = 0 if key is None else _arith(agg.group.arith, key)
                    group = (group & 0xFFFF) - 0x10000 if group & 0x8000 else group & 0xFFFF
                if value is None:
                    anomalies.unread += 1
                else:
                    inputs[agg.expr_idx][group][epoch].append(_arith(agg.arith, value))
    values: Any = defaultdict(dict)
    for agg in plan.aggregates:
        for group, series in inputs[agg.expr_idx].items():
            for epoch, value in _aggregate_series(agg, series, max(by_epoch)).items():
                values[(epoch, group)][agg.expr_idx] = value
    rows, rejected = [], []
    for epoch, group in sorted(values):
        finalized = [
            AggregateValue(
                a.name,
                a.column,
                a.attribute,
                a.expr_idx,
                values[(epoch, group)].get(a.expr_idx),
                None,
            )
            for a in plan.aggregates
        ]
        row = aggregate_row(query, epoch, group, finalized, last_t.get(epoch, 0.0))
        if row is not None:
            rows.append(row)
        elif any(v.value is not None for v in finalized):
            rejected.append((epoch, group))
    return rows, anomalies, rejected


def random_samples(rng: np.random.Generator, fields: int) -> list[Sample]:
    samples = []
    for node in range(1, 9):
        epochs = sorted(set(rng.integers(1, 13, 9).tolist()))  # gaps: epochs let pass
        for epoch in epochs + rng.choice(epochs, 2).tolist():  # and epochs evaluated twice
            values = {
                i: int(rng.choice([rng.integers(-70_000, 70_000), rng.integers(0, 900)]))
                for i in range(fields)
                if rng.random() < 0.9
            }
            t_us = epoch * 2_048_000 + int(rng.integers(0, 2_000_000))
            samples.append(Sample(node, epoch, t_us, bool(rng.random() < 0.6), values))
    return [samples[i] for i in rng.permutation(len(samples))]


@pytest.mark.parametrize("sql", QUERIES)
@pytest.mark.parametrize("seed", range(4))
def test_the_columns_give_what_the_loop_over_samples_gave(sql: str, seed: int) -> None:
    query = RegisteredQuery(1, compile_query(f"{sql} EPOCH DURATION 2048"), 0.0, sql)
    samples = random_samples(np.random.default_rng(seed), len(query.plan.fields))
    truth = ground_truth(query, SampleColumns.of(samples))
    rows, anomalies, rejected = one_at_a_time(query, samples)
    assert list(truth.rows) == rows and len(truth.rows) == len(rows)
    assert truth.anomalies == anomalies
    assert truth.having_rejected == rejected
    assert anomalies.repeated and anomalies.skipped and anomalies.verdicts
    assert anomalies.unread or not (query.plan.selections or query.plan.aggregates)
    if not query.plan.is_aggregate and rows:  # read by position, as a sequence is
        assert truth.rows[-1] == rows[-1] and truth.rows[1:3] == rows[1:3]


def test_no_samples_make_an_empty_truth() -> None:
    for sql in (QUERIES[0], QUERIES[3]):
        query = RegisteredQuery(1, compile_query(f"{sql} EPOCH DURATION 2048"), 0.0, sql)
        truth = ground_truth(query, SampleColumns.of([]))
        assert (list(truth.rows), truth.anomalies, truth.having_rejected) == ([], Anomalies(), [])
