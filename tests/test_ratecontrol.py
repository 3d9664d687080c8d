"""The gateway's rate governor (gateway/ratecontrol.py) and queries whose rate changed
(gateway/assembly.py, RegisteredQuery.rates)."""

from __future__ import annotations

import pytest

from motebase.gateway.assembly import RateChange, RegisteredQuery, ResultPlan
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol.query import QUERY_MESSAGE_LEN
from motebase.gateway.ratecontrol import MAX_EPOCH_MS, RateGovernor
from motebase.gateway.session import rate_message

NODES = 10


def deliver(governor: RateGovernor, epochs: range, nodes: int) -> list:
    """Epoch by epoch, ``nodes`` of the NODES deliver (all do in epoch 1), and the
    governor judges after each; the decisions it made."""
    decisions = []
    for epoch in epochs:
        for node in range(NODES if epoch == 1 else nodes):
            governor.observe(epoch, node)
        decision = governor.decide()
        if decision is not None:
            decisions.append(decision)
    return decisions


def test_a_network_that_delivers_keeps_its_rate() -> None:
    governor = RateGovernor(4096)
    assert deliver(governor, range(1, 60), nodes=NODES) == []
    assert deliver(governor, range(60, 120), nodes=9) == []  # one node lost: 90 %
    assert governor.epoch_ms == 4096


def test_an_overloaded_network_gets_half_the_rate_once_per_settled_window() -> None:
    governor = RateGovernor(4096, low_yield=0.8, settle_epochs=3, window=3)
    # Epoch 1 is whole (every node heard); from epoch 2 on, half the nodes arrive. Epochs
    # 2, 3 and 4 are judged when epochs 5, 6 and 7 arrive: the third low one decides.
    (first,) = deliver(governor, range(1, 8), nodes=5)
    assert (first.after_epoch, first.old_epoch_ms, first.epoch_ms) == (7, 4096, 8192)
    assert first.judged_yield == 0.5 and first.nodes == NODES and first.judged_epochs == 3
    assert "50% of the 10 nodes' tuples" in first.describe(3)
    assert "sample period is now 8.192 s (RATE from epoch 8)" in first.describe(3)
    # Epochs up to 7 are the old rate's: not judged. 8, 9 and 10 are, at 11, 12 and 13.
    assert deliver(governor, range(8, 13), nodes=5) == []
    (second,) = deliver(governor, range(13, 14), nodes=5)
    assert (second.after_epoch, second.epoch_ms) == (13, 16384)


def test_a_good_epoch_resets_the_count() -> None:
    governor = RateGovernor(4096, settle_epochs=1, window=3)
    for epoch in range(1, 40):
        for node in range(NODES if epoch % 3 == 0 else 5):  # two low, one whole
            governor.observe(epoch, node)
        assert governor.decide() is None


def test_the_epoch_stops_at_what_the_wire_carries() -> None:
    governor = RateGovernor(MAX_EPOCH_MS // 2 + 10, settle_epochs=1, window=1)
    (decision,) = deliver(governor, range(1, 4), nodes=1)
    assert decision.epoch_ms == MAX_EPOCH_MS
    assert deliver(governor, range(4, 20), nodes=1) == []


def plan(period_ms: int) -> ResultPlan:
    return compile_query(f"SELECT nodeid FROM sensors SAMPLE PERIOD {period_ms}")


def test_epochs_after_a_rate_change_are_timed_by_the_new_period() -> None:
    query = RegisteredQuery(1, plan(2000), start_time=100.0)
    assert query.epoch_ms == 2000
    assert query.epoch_time(5) == 110.0 and query.epoch_at(110.5) == 5
    slower = query.with_rate(6, 8000)
    assert slower.rates == (RateChange(6, 8000, 112.0),)
    assert slower.epoch_ms == 8000
    assert [slower.epoch_time(e) for e in (5, 6, 7, 9)] == [110.0, 112.0, 120.0, 136.0]
    assert [slower.epoch_at(t) for t in (111.9, 112.0, 127.9, 128.0)] == [5, 6, 7, 8]
    again = slower.with_rate(9, 16000)
    assert [again.epoch_time(e) for e in (7, 9, 10)] == [120.0, 136.0, 152.0]


@pytest.mark.parametrize("epoch", [0, 3])
def test_a_query_without_epochs_has_one_time(epoch: int) -> None:
    once = RegisteredQuery(1, compile_query("SELECT nodeid FROM sensors ONCE"), start_time=5.0)
    assert once.epoch_time(epoch) == 5.0 and once.epoch_at(50.0) == 0


def test_a_mote_that_missed_the_rate_does_not_set_the_pace() -> None:
    """A mote that missed a RATE samples on at the old rate, its epochs ahead of everyone's:
    epochs are judged by the root's (node 0), so the others' are judged once they had the
    time to arrive, and a network that delivers them keeps its rate."""
    governor = RateGovernor(8192, settle_epochs=3, window=3)
    for epoch in range(1, 30):
        for node in range(NODES):
            governor.observe(epoch, node)
        governor.observe(3 * epoch, 99)  # running three epochs to everyone's one
        assert governor.decide() is None
    assert governor.epoch_ms == 8192


def test_without_the_roots_tuples_the_newest_of_any_node_counts() -> None:
    governor = RateGovernor(4096, settle_epochs=1, window=1)
    for node in range(1, NODES):
        governor.observe(1, node)
    governor.observe(2, 1)
    governor.observe(3, 1)  # one node two epochs on: epoch 2 is judged, with one of nine
    decision = governor.decide()
    assert decision is not None and decision.judged_yield == 1 / 9


def test_the_longest_rate_is_one_the_wire_carries() -> None:
    assert MAX_EPOCH_MS == 0x7FFE * 10
    assert len(rate_message(1, MAX_EPOCH_MS)) == QUERY_MESSAGE_LEN
