"""Emulator building blocks through the real cffi build: topology, links, sources, energy,
faults, determinism. (The medium itself is unit-tested in C: emu/csrc/tests.)"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from motebase.emu import topology
from motebase.emu.network import (
    NO_DEPTH,
    NO_PARENT,
    UART_ADDR,
    ConfigError,
    LoopWatch,
    Network,
    NetworkConfig,
    Routing,
    airtime_us,
    attr_id,
    mote_id,
    node_index,
)
from motebase.emu.queries import query_frames
from motebase.emu.sources import Constant, Trace

INTEL_LAB = topology.INTEL_LAB


def test_grid_disc_links_are_the_8_neighbourhood() -> None:
    pos = topology.grid_positions(25, 10.0)
    links = topology.links_from_positions(pos, "disc", 15.0)
    assert sorted(links.neighbours(12).tolist()) == [6, 7, 8, 11, 13, 16, 17, 18]
    assert sorted(links.neighbours(0).tolist()) == [1, 5, 6]
    assert links.degree().sum() == len(links.dst)


def test_logistic_links_match_brute_force_and_can_be_asymmetric() -> None:
    pos = topology.random_positions(300, 10.0, seed=4)
    links = topology.links_from_positions(pos, "logistic", 15.0, min_prob=0.2, asymmetry=0.3)
    dist = np.hypot(pos[:, None, 0] - pos[None, :, 0], pos[:, None, 1] - pos[None, :, 1])
    reachable = topology.link_probability(dist, "logistic", 15.0) >= 0.2
    np.fill_diagonal(reachable, False)
    assert len(links.dst) <= reachable.sum()
    for s in range(0, 300, 37):
        assert set(links.neighbours(s).tolist()) <= set(np.flatnonzero(reachable[s]).tolist())
    table = {
        (s, int(d)): p
        for s in range(300)
        for d, p in zip(
            links.neighbours(s), links.prob[links.row[s] : links.row[s + 1]], strict=True
        )
    }
    assert any(abs(p - table.get((d, s), p)) > 1e-6 for (s, d), p in table.items())


def test_link_table_csv(tmp_path: Path) -> None:
    path = tmp_path / "links.csv"
    path.write_text("src,dst,prob\n0,1,0.5\n1,0,1.0\n2,1,0.25\n")
    links = topology.links_from_csv(path, 3)
    assert links.row.tolist() == [0, 1, 2, 3]
    assert links.dst.tolist() == [1, 0, 1]
    assert links.prob.tolist() == [0.5, 1.0, 0.25]
    path.write_text("0,1,0.5\n0,7,0.5\n")
    with pytest.raises(ValueError, match=":2: bad link 0->7"):
        topology.links_from_csv(path, 3)


def test_positions_file_adds_the_basestation_as_node_0() -> None:
    pos = topology.file_positions(INTEL_LAB, None, node_index)
    assert len(pos) == 55
    assert pos[1].tolist() == [21.5, 23.0]  # mote 1
    assert np.allclose(pos[0], pos[1:].mean(axis=0))
    config = NetworkConfig(
        topology="file", positions_file=INTEL_LAB, link_model="logistic", radio_range=8.0
    )
    net = Network(config)
    assert (net.n, net.present, net.absent.tolist()) == (55, 55, [])


def test_the_default_radio_is_sinr_and_refuses_a_range_it_would_ignore() -> None:
    assert NetworkConfig().link_model == "sinr"
    with pytest.raises(ConfigError, match="radio range applies to the logistic and disc"):
        Network(NetworkConfig(nodes=4, radio_range=20.0))
    with Network(NetworkConfig(nodes=4, radio_range=20.0, lossless=True)) as net:
        assert not net.sinr  # lossless: every neighbour within the range, sinr or not
    with Network(NetworkConfig(nodes=4, radio_range=20.0, link_model="logistic")) as net:
        assert not net.sinr


def positions_file(tmp_path: Path, lines: str) -> Path:
    path = tmp_path / "motes.txt"
    path.write_text("moteid x y\n" + lines)
    return path


def test_a_positions_file_keeps_its_mote_ids(tmp_path: Path) -> None:
    # The report: ids 5, 12, 40 became 1, 2, 3, and a join by position found nothing.
    path = positions_file(tmp_path, "40 20 0\n5 0 0\n12 10 0\n")
    config = NetworkConfig(topology="file", positions_file=path, radio_range=12.0, lossless=True)
    layout = config.file_layout()
    assert (layout.root_listed, layout.root) == (False, (10.0, 0.0))  # the motes' centroid
    with Network(config) as net:
        assert (net.n, net.present) == (41, 4)
        assert net.absent.tolist() == [i for i in range(1, 40) if i not in (5, 12)]
        for mote, x in ((5, 0.0), (12, 10.0), (40, 20.0)):
            assert net.positions[net.node_index(mote)].tolist() == [x, 0.0]
        assert set(net.links.dst.tolist()) == {0, 5, 12, 40}  # no link to an absent node
        net.run_for(30_000)
        assert net.alive.tolist() == [i in (0, 5, 12, 40) for i in range(41)]
        assert int(net.counters()["sent"][net.absent].sum()) == 0
        parent, depth = net.routing()
        assert [(int(parent[i]), int(depth[i])) for i in (5, 12, 40)] == [(0, 1)] * 3


def test_a_positions_file_may_place_the_basestation(tmp_path: Path) -> None:
    path = positions_file(tmp_path, "0 3 4\n1 5 4\n")
    config = NetworkConfig(topology="file", positions_file=path)
    layout = config.file_layout()
    assert (layout.root_listed, layout.root, layout.absent.tolist()) == (True, (3.0, 4.0), [])
    both = NetworkConfig(topology="file", positions_file=path, root_position=(1.0, 1.0))
    with pytest.raises(ValueError, match="places mote 0, the basestation: drop it or the root"):
        both.file_layout()


def test_a_positions_file_past_126_skips_the_uart_address(tmp_path: Path) -> None:
    path = positions_file(tmp_path, "125 0 0\n127 10 0\n")
    with Network(NetworkConfig(topology="file", positions_file=path)) as net:
        assert net.n == 127  # nodes 0..126; node 126 is mote 127
        assert net.node_index(127) == 126
        assert net.positions[126].tolist() == [10.0, 0.0]


@pytest.mark.parametrize(
    ("lines", "error"),
    [
        ("126 0 0\n", "mote id 126 cannot be a mote (126 is TinyOS's UART address"),
        ("65535 0 0\n", "mote id 65535 cannot be a mote"),
        ("-1 0 0\n", "mote id -1 cannot be a mote"),
        ("3 0 0\n3 1 1\n", "mote id 3 is listed twice"),
    ],
)
def test_a_positions_file_with_an_impossible_id_is_refused(
    tmp_path: Path, lines: str, error: str
) -> None:
    path = positions_file(tmp_path, lines)
    with pytest.raises(ValueError, match=re.escape(error)):
        NetworkConfig(topology="file", positions_file=path).positions()


def test_trace_from_csv_and_bad_sources(tmp_path: Path) -> None:
    path = tmp_path / "light.csv"
    path.write_text("1,2,3\n10,20\n")
    trace = Trace.from_csv(path)
    assert trace.values.tolist() == [[1, 2, 3], [10, 20, 20]]
    net = Network(NetworkConfig(nodes=4))
    with pytest.raises(ConfigError, match="unknown attribute"):
        net.set_sensor("humidity", Constant(value=1))
    with pytest.raises(ConfigError, match="node range"):
        net.set_sensor("light", Constant(value=1), nodes=range(2, 9))


def test_airtime_of_a_56_byte_mica2_packet() -> None:
    # 54-byte TOS_Msg + 2 CRC + 28 preamble + 2 sync = 86 bytes at 19.2 kbit/s of data
    # (38.4 kBaud of Manchester chips, as TinyOS 1.x drove the CC1000)
    assert airtime_us("mica2", 54) == -(-86 * 8 * 1_000_000 // 19_200)
    # RFM TR1000: 54 + 2 CRC + 12 preamble/start symbol at 40 kbit/s
    assert airtime_us("mica", 54) == 68 * 8 * 1_000_000 // 40_000


def test_energy_of_one_node_equals_phase_times_times_currents() -> None:
    net = Network(NetworkConfig(nodes=9, lossless=True))
    for frame in query_frames("SELECT nodeid, light, accel_x SAMPLE PERIOD 1s"):
        net.uart_write(frame)
    net.run_for(20_000)
    times = {k: v.astype(np.float64) * 1e-6 for k, v in net.phase_times_us().items()}
    joules = net.energy()
    node = 4
    # mica2 figures (emu/README.md), 3 V
    sleep_a, cpu_a, listen_a, tx_a = 15e-6, 8e-3, 7.4e-3, 16.5e-3
    assert times["sleep"][node] + times["cpu"][node] == pytest.approx(20.0)
    assert times["listen"][node] + times["transmit"][node] <= 20.0 + 1e-9
    assert times["transmit"][node] > 0
    assert joules["sleep"][node] == pytest.approx(times["sleep"][node] * sleep_a * 3)
    assert joules["cpu"][node] == pytest.approx(times["cpu"][node] * cpu_a * 3)
    assert joules["listen"][node] == pytest.approx(times["listen"][node] * listen_a * 3)
    assert joules["transmit"][node] == pytest.approx(times["transmit"][node] * tx_a * 3)
    samples = int(net.counters()["samples"][node])
    # every sample is a light (90 nJ, 0.9 ms) or an accel_x (4.8 uJ, 17.9 ms) reading
    assert samples > 0
    light, accel = attr_id("light"), attr_id("accel_x")
    assert (light, accel) == (1, 4)
    n_accel = (times["sensing"][node] - samples * 900e-6) / (17.9e-3 - 900e-6)
    assert n_accel == pytest.approx(round(n_accel), abs=1e-6)
    expected_sense = (samples - round(n_accel)) * 90e-9 + round(n_accel) * 4800e-9
    assert joules["sensing"][node] == pytest.approx(expected_sense)
    total = sum(joules[k][node] for k in ("sleep", "cpu", "listen", "transmit", "sensing"))
    assert joules["total"][node] == pytest.approx(total)


def test_battery_depletion_stops_a_node() -> None:
    net = Network(NetworkConfig(nodes=4, lossless=True, battery_j=0.5))
    net.run_for(60_000)  # CPU + radio at ~46 mW drain 0.5 J in ~11 s
    net.energy()
    # The basestation is powered by its board: only the motes go flat.
    assert net.alive[0] and not net.alive[1:].any()
    sent = net.counters()["sent"].copy()
    net.run_for(10_000)
    assert (net.counters()["sent"][1:] == sent[1:]).all()


def test_kill_and_revive_at_virtual_times() -> None:
    net = Network(NetworkConfig(nodes=9, lossless=True))
    net.kill(4, at_ms=1_000)
    net.revive(4, at_ms=20_000)
    net.run_for(10_000)
    assert not net.alive[4]
    frozen = int(net.counters()["received"][4])
    net.run_for(5_000)
    assert int(net.counters()["received"][4]) == frozen
    net.run_for(10_000)
    assert net.alive[4]
    assert int(net.counters()["received"][4]) > frozen


def _run(seed: int, lossless: bool) -> bytes:
    net = Network(NetworkConfig(nodes=16, seed=seed, lossless=lossless))
    net.run_for(5_000)
    for frame in query_frames("SELECT nodeid, light SAMPLE PERIOD 1s"):
        net.uart_write(frame)
    net.run_for(20_000)
    return net.uart_read()


def test_same_seed_gives_byte_identical_root_streams() -> None:
    first = _run(7, lossless=False)
    assert first
    assert _run(7, lossless=False) == first
    assert _run(8, lossless=False) != first


def test_routing_finds_the_nodes_whose_parents_loop() -> None:
    # By mote id: 0 is the root (its parent the UART), 1 and 2 hang from it, 3 -> 4 -> 5 -> 3
    # loop, 6 hangs off the loop without being in it, 7 has no route, 8 <-> 9 loop; and
    # past mote 125 the ids skip 126, so node 130 is mote 131, here in a loop with node 129.
    parent = [UART_ADDR, 0, 1, 5, 3, 4, 3, NO_PARENT, 9, 8] + [0] * 119 + [131, 130]
    depth = [0] * len(parent)
    routing = Routing(np.array(parent, dtype=np.uint16), np.array(depth, dtype=np.uint8))
    assert mote_id(130) == 131
    assert routing.in_cycles() == {3, 4, 5, 8, 9, 129, 130}


def test_a_loop_watch_times_each_node_from_its_first_read_in_a_cycle() -> None:
    def tree(*parent: int) -> Routing:
        return Routing(np.array(parent, dtype=np.uint16), np.zeros(len(parent), np.uint8))

    tree_ok, loop_12, loop_23 = (
        tree(UART_ADDR, 0, 1, 2),
        tree(UART_ADDR, 2, 1, 2),
        tree(UART_ADDR, 0, 3, 2),
    )
    watch = LoopWatch()
    for now_ms, routing in enumerate([tree_ok, loop_12, loop_12, loop_12, loop_23, tree_ok]):
        watch.see(routing, now_ms * 250.0, 250.0)
    # 1 and 2 looped over reads 1-3 (500 ms); 2 stayed on into 3's loop at read 4 (750 ms)
    assert watch.longest_ms == 750.0
    assert watch.node_ms == 250.0 * (2 + 2 + 2 + 2)
    assert watch.nodes == {1, 2, 3}


def test_routing_is_a_tree_over_real_links_toward_the_root() -> None:
    net = Network(NetworkConfig(nodes=25, lossless=True, seed=2))
    net.run_for(30_000)
    parent, depth = net.routing()
    assert parent.dtype == np.uint16 and depth.dtype == np.uint8
    assert parent[0] == UART_ADDR and depth[0] == 0
    assert (parent[1:] != NO_PARENT).all() and (depth[1:] != NO_DEPTH).all()
    for node in range(1, net.n):
        p = int(parent[node])
        assert p in net.links.neighbours(node), (node, p)  # a link it really has
        assert depth[node] == depth[p] + 1, (node, p)
    # corner root on a 5 x 5 8-neighbourhood grid: depth is the Chebyshev distance
    side = 5
    assert list(depth) == [max(i % side, i // side) for i in range(net.n)]
