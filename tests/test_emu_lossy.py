"""A running query on the lossy medium must not tear the routing tree apart.

Every figure below was measured on the ``logistic`` link model, the default; these tests
pin ``link_model="logistic"`` so that they keep checking what they measured should the
default change to ``sinr``. (On ``sinr`` the same COUNT run counts 4.8 of 25 nodes per
epoch, below the bound of 10 here: see docs/radio.md.)

The lossy medium differs from ``lossless=True`` in more than link loss: transmissions
collide and carrier sense backs off, so a 1 s SELECT that forwards every tuple saturates a
5x5 grid (most unicasts go unacknowledged). That used to cascade: nodes asleep between
their slots counted beacon periods they slept through as parent loss, dropped parents,
went unrouted for good and formed cycles, and delivery decayed to one tuple per epoch.

Thresholds come from measurements of these fixed seeds (the emulator is deterministic per
seed), sampling the tree every 0.5 s over 31 steady epochs. Before the routing fixes, seed 1
/ seed 2 averaged 24% / 30% parentless nodes, with a cycle through 4 nodes on seed 2, and
delivered 0.18 / 0.14 of the steady-state tuples; after, 3.5% / 4.6%, no cycle, 0.21 /
0.23. On a 10x10 grid (seed 1) it was 17.5% parentless with 22 nodes in cycles and 0.035
delivered, now 4.4%, no cycle, 0.053. The bounds sit between the two. Delivery stays low
either way: the channel, not the tree, limits an every-tuple 1 s query on these grids --
the medium counts about 58 sends a second on the 5x5 grid, of which some 12 are acknowledged.

COUNT on the same grid counted 5.5 / 6.8 nodes per epoch on average before and 4.6 / 7.1
after: aggregate records got one send, and most were lost to collisions.

Then the MAC/schedule fixes (core/schedule.h): 125-ms intervals at 1 s (slot depth bounded
by 6 instead of 62-ms intervals for a bound of 14), a short random resend for records, the
root emitting at the end of its interval, relays sending their records late in theirs, and
query requests repeated when the parent missed them. SELECT delivery went 0.214 / 0.210 ->
0.294 / 0.285 (10x10: 0.053 -> 0.068). COUNT went 5.1 / 6.0 -> 13.1 / 13.5 of 25 nodes per
epoch (10x10: 7.1 / 6.0 -> 15.5 / 19.5 of 100), now without double counting: a parent drops
a child's record that comes after its own record went out, where it used to merge it into
its next epoch -- which the child reached too.

Epochs numbered by time, the down wave and acks withheld for backpressure (issue 9) moved
COUNT at 1 s to 10.5 of 25 on seed 1 (seeds 1-4 over 30 epochs: 10.7 / 11.5 / 12.2 / 11.6,
from 11.2 / 12.3 / 13.0 / 11.7) and at 2 s up to 20.1 / 21.6 / 20.1 / 21.4 (from 19.1 / 19.9
/ 19.9 / 19.2): 1 s on this grid is past the channel's capacity for records.
"""

from __future__ import annotations

import collections
import statistics
from dataclasses import dataclass, field

import numpy as np
import pytest

from motebase.emu import Network, NetworkConfig
from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
from motebase.emu.network import LoopWatch
from motebase.emu.queries import query_frames
from motebase.gateway.accuracy import AggregateAccuracy, TupleAccuracy, compare
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol import Deframer, decode_packet

NODES = 25
WARMUP_MS = 30_000  # the tree forms before the query arrives
EPOCHS = 40
STEADY_FROM = 8  # epochs before this one are the query spreading
NO_PARENT = 0xFFFF
BEACON_PERIOD_MS = 4096  # firmware/core/mote_state.h
SELECT = "SELECT nodeid, light, temp FROM sensors SAMPLE PERIOD 1s"


@dataclass
class Observed:
    parentless: list[int] = field(default_factory=list)  # per routing snapshot
    loops: LoopWatch = field(default_factory=LoopWatch)
    origins_by_epoch: dict[int, set[int]] = field(default_factory=dict)
    records_by_epoch: dict[int, list[int]] = field(default_factory=dict)


def run_query(sql: str, seed: int, nodes: int = NODES) -> Observed:
    config = NetworkConfig(
        nodes=nodes, topology="grid", platform="mica2", seed=seed, link_model="logistic"
    )
    net = Network(config)
    net.run_for(WARMUP_MS * max(1, nodes // NODES // 2))  # a deeper tree forms slower
    for frame in query_frames(sql, 1):
        net.uart_write(frame)
        net.run_for(1000)
    seen = Observed()
    for half_second in range(2 * EPOCHS):
        net.run_for(500)
        if half_second >= 2 * STEADY_FROM:
            routing = net.routing()
            seen.parentless.append(int((routing.parent[1:] == NO_PARENT).sum()))
            seen.loops.see(routing, net.now_ms, 500)
    plan = compile_query(sql)
    origins: dict[int, set[int]] = collections.defaultdict(set)
    records: dict[int, list[int]] = collections.defaultdict(list)
    for frame in Deframer().feed(net.uart_read()):
        packet = decode_packet(frame.payload, field_types=[f.wire_type for f in plan.fields])
        if packet.am != 240:
            continue
        epoch = packet.body["epoch"]
        origins[epoch].add(packet.mhop["originaddr"])
        if "state" in packet.body["d"] and packet.body["d"]["exprIdx"] == 0:
            state = bytes(packet.body["d"]["state"])
            records[epoch].append(int.from_bytes(state[:2], "little"))
    seen.origins_by_epoch = dict(origins)
    seen.records_by_epoch = dict(records)
    return seen


def steady(by_epoch: dict[int, object]) -> list[int]:
    # the last epoch may still be in flight when the run stops
    return [e for e in sorted(by_epoch) if STEADY_FROM <= e < EPOCHS - 1]


@pytest.mark.parametrize(
    ("nodes", "seed", "min_delivered"), [(NODES, 1, 0.26), (NODES, 2, 0.26), (100, 1, 0.06)]
)
def test_select_keeps_the_tree_formed_and_tuples_flowing(
    nodes: int, seed: int, min_delivered: float
) -> None:
    seen = run_query(SELECT, seed, nodes)
    # The data path breaks a loop that stale depths or costs still close: a child no deeper
    # than its parent is refused and hears its beacon (core/results.c). Loops that lasted
    # (before the routing fixes, or the count-to-infinity in docs/radio.md's open section)
    # stay past a beacon period.
    assert seen.loops.longest_ms < BEACON_PERIOD_MS, (
        f"routing cycle through {sorted(seen.loops.nodes)} for {seen.loops.longest_ms} ms"
    )
    share_parentless = sum(seen.parentless) / (len(seen.parentless) * (nodes - 1))
    assert share_parentless <= 0.10, share_parentless
    epochs = steady(seen.origins_by_epoch)
    assert len(epochs) >= EPOCHS - STEADY_FROM - 4, epochs  # results every epoch
    counts = [len(seen.origins_by_epoch[e]) for e in epochs]
    delivered = sum(counts) / ((nodes - 1) * len(epochs))
    assert delivered >= min_delivered, delivered


@pytest.mark.parametrize(("seed", "link_model"), [(1, None), (2, "sinr")])
def test_clocks_stay_with_the_root_however_long_the_backoff(
    seed: int, link_model: str | None
) -> None:
    # Stamps taken when a frame was handed to the radio aged by its backoff and airtime;
    # only those aged past the 32 ms threshold were adopted, so each hop fell ~35 ms
    # behind (a depth-5 node 155 ms). Stamped and compared at the start symbol, the
    # clocks agree to the millisecond the stamps are rounded to.
    config = NetworkConfig(nodes=NODES, seed=seed)
    if link_model is not None:
        config = NetworkConfig(nodes=NODES, seed=seed, link_model=link_model)
    with Network(config) as net:
        net.run_for(WARMUP_MS)
        for frame in query_frames(SELECT, 1):
            net.uart_write(frame)
            net.run_for(1000)
        net.run_for(20_000)
        routed = net.routing().depth != 0xFF
        skew = net.logical_times_ms().astype(np.int64) - int(net.logical_times_ms()[0])
    assert routed.sum() >= NODES - 1
    assert np.abs(skew[routed]).max() <= 1, skew


def test_every_node_gets_the_query_on_a_lossy_grid() -> None:
    # Nodes that missed parts ask their parent (core/sharing.h); on seed 1 three nodes used
    # to lose every request to a sleeping or deaf parent and never ran the query.
    config = NetworkConfig(
        nodes=NODES, topology="grid", platform="mica2", seed=1, link_model="logistic"
    )
    net = Network(config)
    net.run_for(WARMUP_MS)
    for frame in query_frames(SELECT, 1):
        net.uart_write(frame)
        net.run_for(1000)
    net.run_for(30_000)
    idle = [node for node in range(NODES) if net.mote_stats(node)["epochs"] == 0]
    assert not idle, idle


def test_count_stays_bounded_and_flowing_on_a_lossy_grid() -> None:
    seen = run_query("SELECT COUNT(light) FROM sensors SAMPLE PERIOD 1s", seed=1)
    assert not seen.loops.nodes, sorted(seen.loops.nodes)
    epochs = steady(seen.records_by_epoch)
    assert len(epochs) >= EPOCHS - STEADY_FROM - 4, epochs
    counts = [sum(seen.records_by_epoch[e]) for e in epochs]
    # A late record is dropped, not merged into the parent's next epoch: no node counts twice.
    assert max(counts) <= NODES, counts
    # Of 25: 4.6 before the MAC fixes, 11-12 while the medium sent 38.4 kbit/s; 7.7 at the
    # CC1000's real 19.2 kbit/s, where a 1 s epoch's 125 ms interval holds two frames.
    assert sum(counts) / len(counts) >= 6, counts


@pytest.mark.parametrize("seed", [1, 2])
def test_relays_keep_tuples_moving_behind_a_busy_parent(seed: int) -> None:
    # A relay refused by a parent without room used to wait to overhear that parent make
    # room, else for its next slot, an epoch later. On a lossy 10x10 grid at 8 s some
    # relays never overheard theirs (one sat 7 s with a full queue), their own tuples
    # overflowed, and delivery fell over the run: 0.454 / 0.409 on these seeds. A refused
    # tuple now goes again after a pause that doubles while the parent stays busy
    # (core/txpath.c, busy_pause), and relays gather bundles under contention: 0.665 / 0.685.
    config = NetworkConfig(nodes=100, topology="grid", seed=seed, link_model="logistic")
    with Network(config) as net:
        experiment = run_experiment(
            net, [QueryRun("SELECT nodeid, light FROM sensors SAMPLE PERIOD 8192")], epochs=12
        )
    (query,) = compare(result_records(experiment), truth_records(experiment)).queries.values()
    assert isinstance(query, TupleAccuracy)
    assert query.tuple_yield is not None and query.tuple_yield >= 0.55, query.tuple_yield
    assert not any(query.invariant_violations.values()), query.violation_examples


@pytest.mark.parametrize("seed", [1, 2])
def test_grid_trees_leave_their_diagonals(seed: int) -> None:
    """On a 20x20 lossy grid a diagonal link carries 0.64 of frames each way, a side 0.966.
    Nodes used to join over the first routed neighbour heard, often a diagonal, and never
    moved to a deeper parent: 76 / 102 of 400 nodes routed over one after 60 s (seeds 1 /
    2). Moves to a cheaper, deeper path (net/routing.c, cheaper_further), with children
    following a parent that moves deeper, leave 4 / 3."""
    side = 20
    config = NetworkConfig(nodes=side * side, topology="grid", link_model="logistic", seed=seed)
    with Network(config) as net:
        net.run_until(60_000)
        parents = {
            i: net.node_index(int(p))
            for i, p in enumerate(net.routing().parent[1:], start=1)
            if int(p) != NO_PARENT
        }
    rows_cols = {i: divmod(i, side) for i in range(side * side)}
    diagonal = [
        i
        for i, p in parents.items()
        if all(abs(a - b) == 1 for a, b in zip(rows_cols[i], rows_cols[p], strict=True))
    ]
    assert len(parents) >= side * side - 1 - 4
    assert len(diagonal) <= 20


@pytest.mark.parametrize("seed", [2, 4])
def test_sinr_trees_keep_off_weak_links_so_counts_arrive(seed: int) -> None:
    """On the sinr radio links 11 dB over the noise carry a whole frame in quiet and
    fail once a level's records add interference; trees took them across half the grid
    (seed 4: a 50 m link to a parent, 15 of 25 nodes in one level) and COUNT at 2 s read
    a median of 17.5 of 25 there. A link heard below ROUTING_SNR_FIRM_DB costs two hops a
    dB (net/routing.c, weak_signal_cost): 25 on both seeds."""
    config = NetworkConfig(nodes=NODES, topology="grid", seed=seed, link_model="sinr")
    with Network(config) as net:
        experiment = run_experiment(
            net, [QueryRun("SELECT COUNT(*) FROM sensors SAMPLE PERIOD 2048")], epochs=30
        )
    (query,) = compare(result_records(experiment), truth_records(experiment)).queries.values()
    assert isinstance(query, AggregateAccuracy)
    counts = [e.count_delivered for e in query.epochs if e.count_delivered is not None]
    assert len(counts) >= 28, counts
    assert statistics.median(counts) == NODES, counts
    assert not any(query.invariant_violations.values()), query.violation_examples
