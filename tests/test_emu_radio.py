"""The SINR radio model from Python: propagation, the PRR curve, link-table imports, the
Intel lab layout, and that a seed fixes a run on the default model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from motebase.emu import Network, NetworkConfig, linktables, propagation, reception, topology
from motebase.emu._motesim import lib

PARAMS = propagation.RadioParams()


def _powers(seed: int, n: int = 400) -> propagation.LinkPowers:
    return propagation.link_powers(topology.grid_positions(n, 10.0), PARAMS, seed)


def _by_pair(p: propagation.LinkPowers) -> dict[tuple[int, int], float]:
    return {(int(s), int(d)): float(r) for s, d, r in zip(p.src, p.dst, p.rx_dbm, strict=True)}


def test_same_seed_same_powers_other_seed_other_powers() -> None:
    a, b, c = _powers(7), _powers(7), _powers(8)
    assert _by_pair(a) == _by_pair(b)
    assert np.array_equal(a.noise_dbm, b.noise_dbm) and np.array_equal(a.tx_dbm, b.tx_dbm)
    assert _by_pair(a) != _by_pair(c)


def test_path_loss_is_symmetric_and_links_asymmetric_only_through_hardware() -> None:
    p = _powers(3)
    links = _by_pair(p)
    both = [(s, d) for (s, d) in links if s < d and (d, s) in links]
    assert len(both) > 1000
    # rx(s->d) - tx[s] is minus the path loss, shadowing included: the same both ways
    loss = np.array([links[s, d] - p.tx_dbm[s] for s, d in both])
    back = np.array([links[d, s] - p.tx_dbm[d] for s, d in both])
    assert np.allclose(loss, back, atol=1e-4)
    # but the SNRs differ: output power and noise floor vary per node. The difference is
    # (tx + noise)[s] - (tx + noise)[d]: deviation sqrt(2 (S11 + S22 + 2 S12)) = 2.49 dB
    snr = np.array([links[s, d] - p.noise_dbm[d] for s, d in both])
    snr_back = np.array([links[d, s] - p.noise_dbm[s] for s, d in both])
    assert np.std(snr - snr_back) == pytest.approx(np.sqrt(2 * (3.7 + 6.0 - 6.6)), rel=0.15)
    assert np.std(p.tx_dbm) == pytest.approx(np.sqrt(6.0), rel=0.15)
    assert np.std(p.noise_dbm) == pytest.approx(np.sqrt(3.7), rel=0.15)
    assert np.corrcoef(p.tx_dbm, p.noise_dbm)[0, 1] == pytest.approx(-3.3 / np.sqrt(22.2), abs=0.1)


def test_mean_power_follows_log_distance_and_links_stop_at_the_floor() -> None:
    pos = topology.grid_positions(900, 10.0)
    p = propagation.link_powers(pos, PARAMS, 1)
    dist = np.hypot(*(pos[p.src] - pos[p.dst]).T)
    # at 10 m nearly every pair is a link, so the mean is unbiased by the cutoff
    near = np.isclose(dist, 10.0)
    expect = PARAMS.tx_dbm - PARAMS.path_loss_db(np.array(10.0))
    assert np.mean(p.rx_dbm[near]) == pytest.approx(expect, abs=0.5)
    assert np.all(p.rx_dbm >= p.noise_dbm[p.dst] + PARAMS.link_min_snr_db)
    assert dist.max() < PARAMS.reach_m()


def test_prr_curve_is_monotone_sharp_and_matches_the_c_medium() -> None:
    snr = np.linspace(-5.0, 20.0, 501)
    curve = reception.prr(snr)
    assert np.all(np.diff(curve) >= 0.0)
    assert curve[0] < 1e-100 and curve[-1] > 0.999999
    low, high = reception.snr_for_prr([0.1, 0.9])
    assert 1.5 < high - low < 3.0  # the transitional window: ~2 dB
    assert 8.0 < low < 8.6 and 10.0 < high < 10.6
    for db in (5.0, 8.0, 9.2, 10.0, 12.0):
        for tos_len in (10, 36, 54):
            assert float(reception.prr(db, tos_len)) == pytest.approx(
                lib.emu_radio_prr(db, tos_len), rel=1e-12, abs=1e-300
            )
    assert float(reception.prr(reception.snr_for_prr(0.5))) == pytest.approx(0.5)


def test_default_grid_regions() -> None:
    """4 nearest neighbours connected, diagonals mostly good, 20 m transitional, 40 m gone."""
    pos = topology.grid_positions(900, 10.0)
    links = topology.sinr_links(pos, PARAMS, 1)
    src = np.repeat(np.arange(len(pos)), np.diff(links.row))
    dist = np.hypot(*(pos[src] - pos[links.dst]).T)

    def share_good(d: float) -> float:
        # pairs at that distance that are not links at all count as prob 0
        pairs = int(np.sum(np.isclose(np.hypot(*(pos[:, None] - pos[None]).T), d)))
        return float(np.sum(links.prob[np.isclose(dist, d)] > 0.9)) / pairs

    assert share_good(10.0) > 0.95
    assert share_good(np.hypot(10.0, 10.0)) > 0.75
    assert 0.3 < share_good(20.0) < 0.7
    assert share_good(40.0) < 0.05


def test_nss_import(tmp_path: Path) -> None:
    path = tmp_path / "lossy.nss"
    path.write_text("0:1:0.0\n1:0:0.001\t0:2:1.0\n2:1:0.01\n1:1:0.5\n")
    assert linktables.detect_format(path.read_text()) == "nss"
    links = linktables.load(path, 3)
    assert links.rx_dbm is None
    assert links.row.tolist() == [0, 1, 2, 3]
    assert links.dst.tolist() == [1, 0, 1]  # 0->2 (every bit wrong) and 1->1 left out
    bits = 8 * (54 + 4)
    assert links.prob.tolist() == pytest.approx([1.0, 0.999**bits, 0.99**bits], rel=1e-6)
    path.write_text("0:1:0.0\n0:7:0.1\n")
    with pytest.raises(ValueError, match=r":2: node 7 outside 0..2"):
        linktables.load(path, 3)


def test_gain_import_feeds_the_sinr_medium(tmp_path: Path) -> None:
    path = tmp_path / "topo.txt"
    path.write_text(
        "gain 0 1 -60.0\ngain 1 0 -62.5\ngain 1 2 -95.0\ngain 2 1 -110.0\n"
        "noise 0 -100.0 4.0\nnoise 1 -105.0 4.0\n"
    )
    assert linktables.detect_format(path.read_text()) == "gain"
    links = linktables.load(path, 3)
    assert links.dst.tolist() == [1, 0, 2]  # 2->1 is under node 1's floor + 3 dB
    assert links.rx_dbm is not None and links.noise_dbm is not None
    assert links.rx_dbm.tolist() == [-60.0, -62.5, -95.0]
    assert links.noise_dbm.tolist() == [-100.0, -105.0, PARAMS.noise_dbm]
    assert links.prob[2] == pytest.approx(float(reception.prr(10.0)), rel=1e-5)
    net = Network(NetworkConfig(nodes=3, link_table=path, seed=1))
    assert net.sinr
    net.run_for(20_000)
    assert int(net.counters()["received"][1]) > 0
    path.write_text("gain 0 1 x\n")
    with pytest.raises(ValueError, match=r":1: 'x' is not a number"):
        linktables.load(path, 3)


def test_csv_link_table_still_runs_the_probability_model(tmp_path: Path) -> None:
    path = tmp_path / "links.csv"
    path.write_text("src,dst,prob\n0,1,0.5\n1,0,1.0\n")
    net = Network(NetworkConfig(nodes=2, link_table=path))
    assert not net.sinr and net.links.prob.tolist() == [0.5, 1.0]


def test_intel_lab_keeps_mote_ids() -> None:
    records = topology.read_motes(topology.INTEL_LAB)
    net = Network(NetworkConfig(topology="intel-lab", seed=1))
    assert net.n == 55
    for mote, x, y in records:
        assert net.node_index(mote) == mote
        assert net.positions[mote].tolist() == [x, y]
    alias = NetworkConfig(topology="intel", seed=1).positions()
    assert np.array_equal(alias, net.positions)


def _run(config: NetworkConfig) -> tuple[dict[str, list[int]], bytes, int]:
    with Network(config) as net:
        net.run_for(40_000)
        counters = {k: v.tolist() for k, v in net.counters().items()}
        return counters, net.uart_read(), net.events


def test_on_sinr_a_seed_fixes_the_run() -> None:
    config = NetworkConfig(nodes=49, seed=5, link_model="sinr")
    first, second = _run(config), _run(config)
    assert first == second
    assert first != _run(NetworkConfig(nodes=49, seed=6, link_model="sinr"))
    counters = first[0]
    assert sum(counters["received"]) > 0 and sum(counters["collided"]) > 0


def test_set_link_in_the_sinr_model_sets_power() -> None:
    net = Network(NetworkConfig(nodes=9, seed=1, link_model="sinr"))
    assert net.sinr
    dst = int(net.links.neighbours(0)[0])
    net.set_link(0, dst, 0.0)
    net.set_link(0, dst, 1.0)
    with pytest.raises(Exception, match="no link"):
        net.set_link(0, 0, 0.5)


def test_lossless_ignores_the_sinr_model() -> None:
    a = Network(NetworkConfig(nodes=16, lossless=True, link_model="sinr"))
    b = Network(NetworkConfig(nodes=16, lossless=True, link_model="logistic"))
    assert not a.sinr
    assert np.array_equal(a.links.dst, b.links.dst) and np.array_equal(a.links.prob, b.links.prob)


def test_alarm_events_are_the_firmware_share_of_events() -> None:
    with Network(NetworkConfig(nodes=9, seed=1)) as net:
        net.run_for(20_000)
        sent = int(net.counters()["sent"].sum())
        # the others are radio timers: at least the carrier sense that starts each frame
        assert sent > 0
        assert 0 < net.alarm_events <= net.events - sent
