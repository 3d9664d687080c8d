"""`mote emulate --epochs N` collects while the last epochs' results still arrive.

Where one relay chain carries most of a network its queue holds tuples for epochs: on the
100-node grid at 8 s, seed 22 (the default radio), a chain of relays carries 75 of the
nodes, and readings of the last compared epochs reach the gateway several epochs late. The
gateway collected for two epochs after the root's last one and counted those as lost; it
now goes on while they arrive (emu/experiment.py, DRAIN_MAX_EPOCHS).
"""

from __future__ import annotations

from motebase.emu import Network, NetworkConfig
from motebase.emu.experiment import (
    DRAIN_EPOCHS,
    DRAIN_MAX_EPOCHS,
    QUIET_EPOCHS,
    QueryRun,
    result_records,
    run_experiment,
    truth_records,
)
from motebase.gateway.accuracy import TupleAccuracy, compare

SQL = "SELECT nodeid, light FROM sensors SAMPLE PERIOD 8192"
EPOCHS = 12


def test_late_readings_of_the_compared_epochs_are_collected_and_counted() -> None:
    with Network(NetworkConfig(nodes=100, topology="grid", seed=22)) as net:
        experiment = run_experiment(net, [QueryRun(SQL)], epochs=EPOCHS)
    (outcome,) = experiment.outcomes
    assert outcome.drain_from_s is not None and outcome.stop_time_s is not None
    epoch_s = outcome.epoch_ms / 1000.0
    compared = [row for row in outcome.rows if row.epoch <= EPOCHS]
    drained = outcome.stop_time_s - outcome.drain_from_s
    late = [r for r in compared if r.receive_time > outcome.drain_from_s + DRAIN_EPOCHS * epoch_s]
    # Readings a two-epoch drain missed came in, so the gateway went on collecting...
    assert late and drained > DRAIN_EPOCHS * epoch_s
    # ...until none had come for QUIET_EPOCHS, or for DRAIN_MAX_EPOCHS at most.
    last = max(r.receive_time for r in compared)
    assert drained <= (DRAIN_MAX_EPOCHS + 0.1) * epoch_s
    assert (
        last <= outcome.stop_time_s - QUIET_EPOCHS * epoch_s
        or drained >= DRAIN_MAX_EPOCHS * epoch_s
    )
    # Every one of them is in the comparison: epochs 1..12, each late reading delivered.
    (query,) = compare(result_records(experiment), truth_records(experiment)).queries.values()
    assert isinstance(query, TupleAccuracy) and query.complete_through == EPOCHS
    assert query.delivered_readings == len({(r.epoch, r.node_id) for r in compared})
    assert not any(query.invariant_violations.values()), query.violation_examples


def test_a_network_whose_results_come_within_the_epoch_drains_two_epochs() -> None:
    """Lossless: every result arrives in its epoch, the drain is what it always was."""
    config = NetworkConfig(nodes=25, topology="grid", seed=1, lossless=True)
    with Network(config) as net:
        experiment = run_experiment(net, [QueryRun(SQL)], epochs=4)
    (outcome,) = experiment.outcomes
    assert outcome.drain_from_s is not None and outcome.stop_time_s is not None
    drained = outcome.stop_time_s - outcome.drain_from_s
    epoch_s = outcome.epoch_ms / 1000.0
    assert DRAIN_EPOCHS * epoch_s <= drained < DRAIN_EPOCHS * epoch_s + 0.1
    (query,) = compare(result_records(experiment), truth_records(experiment)).queries.values()
    assert isinstance(query, TupleAccuracy) and query.tuple_yield == 1.0
