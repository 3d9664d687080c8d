"""The emulator's truth counts epochs a node let pass without sampling.

A schedule that cannot keep up with its epochs makes nodes skip some; the truth then holds
fewer readings, and every yield measured against it looks better than the network does.
"""

from __future__ import annotations

from motebase.emu.truth import Sample, SampleColumns, ground_truth
from motebase.gateway.assembly import RegisteredQuery
from motebase.gateway.plan import compile_query

SQL = "SELECT nodeid, light FROM sensors EPOCH DURATION 2048"


def _samples(node: int, epochs: list[int]) -> list[Sample]:
    return [Sample(node, e, e * 2_048_000, True, {0: node, 1: 100 + e}) for e in epochs]


def test_gaps_between_a_nodes_first_and_last_epoch_are_skipped_epochs() -> None:
    query = RegisteredQuery(1, compile_query(SQL), 0.0, SQL)
    samples = _samples(1, [1, 2, 3, 4]) + _samples(2, [1, 3, 5]) + _samples(3, [2, 3])
    truth = ground_truth(query, SampleColumns.of(samples))
    assert truth.anomalies.skipped == 2  # node 2 let epochs 2 and 4 pass
    assert truth.anomalies.total == 2
    assert len(truth.rows) == 9


def test_a_node_that_joins_late_or_leaves_early_skips_nothing() -> None:
    query = RegisteredQuery(1, compile_query(SQL), 0.0, SQL)
    samples = _samples(1, [1, 2, 3]) + _samples(2, [3, 4, 5, 6])
    truth = ground_truth(query, SampleColumns.of(samples))
    assert truth.anomalies.skipped == 0


def test_skipped_epochs_are_counted_up_to_the_last_compared_epoch() -> None:
    """`sampled` counts node-epochs up to complete_through: gaps after it are not its to
    subtract (the run goes on past it while late results still arrive)."""
    query = RegisteredQuery(1, compile_query(SQL), 0.0, SQL)
    samples = _samples(1, [1, 2, 3, 5, 8]) + _samples(2, [1, 2])
    assert ground_truth(query, SampleColumns.of(samples)).anomalies.skipped == 3
    assert ground_truth(query, SampleColumns.of(samples), through=4).anomalies.skipped == 0
    assert ground_truth(query, SampleColumns.of(samples), through=5).anomalies.skipped == 1
