"""What the emulator's truth records of each node's samples (emu/experiment.py,
_Runner._sample_spans): first and last epoch, last sample time, and the depth at each
sample, from whole columns. Held to the loop over samples it replaced, one sample at a
time, on random observations: duplicate (node, epoch) samples, out-of-order times,
samples before the first route snapshot and after the last."""

from __future__ import annotations

import bisect
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from motebase.emu.experiment import _Routes, _Runner
from motebase.emu.network import OBSERVATION_DTYPE, mote_id, node_index
from motebase.emu.truth import OBS_SAMPLED


def observations(rng: np.random.Generator, n: int, nodes: int) -> np.ndarray:
    obs = np.zeros(n, OBSERVATION_DTYPE)
    obs["kind"] = OBS_SAMPLED
    obs["qid"] = 1
    obs["node"] = [mote_id(int(i)) for i in rng.integers(0, nodes, n)]  # 126 skipped
    obs["epoch"] = rng.integers(0, 40, n)
    obs["t_us"] = rng.integers(0, 10**8, n)
    return obs


def routes(rng: np.random.Generator, snapshots: int, nodes: int) -> _Routes:
    made = _Routes()
    made.times = sorted(rng.integers(10**6, 9 * 10**7, snapshots).tolist())
    made.depths = [rng.integers(0, 256, nodes).astype(np.uint8) for _ in range(snapshots)]
    return made


def one_at_a_time(outcome: Any, picked: np.ndarray, known: _Routes) -> None:
    columns = (picked[c].tolist() for c in ("node", "epoch", "t_us"))
    for node, epoch, t_us in zip(*columns, strict=True):
        first, last = outcome.node_epochs.get(node, (epoch, epoch))
        outcome.node_epochs[node] = (min(first, epoch), max(last, epoch))
        outcome.last_sample_ms[node] = max(outcome.last_sample_ms.get(node, 0.0), t_us / 1000.0)
        # the lookup _Routes.depth made per sample before depths_at
        i = max(0, bisect.bisect_right(known.times, t_us) - 1)
        depth = int(known.depths[i][node_index(node)]) if known.depths else 0xFF
        outcome.depth[(node, epoch)] = depth


def blank() -> Any:
    return SimpleNamespace(node_epochs={}, last_sample_ms={}, depth={})


@pytest.mark.parametrize("seed", range(6))
def test_sample_spans_are_what_the_loop_over_samples_made(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nodes = 200
    picked = observations(rng, 3000, nodes)
    known = routes(rng, [0, 1, 25][seed % 3], nodes)
    if known.times:  # a sample at a snapshot's very time reads that snapshot
        picked["t_us"][:300] = rng.choice(known.times, 300)
    expected, got = blank(), blank()
    one_at_a_time(expected, picked, known)
    runner = SimpleNamespace(routes=known)
    _Runner._sample_spans(runner, got, picked)  # type: ignore[arg-type]
    assert got.node_epochs == expected.node_epochs
    assert list(got.node_epochs) == list(expected.node_epochs)
    assert got.last_sample_ms == expected.last_sample_ms
    assert got.depth == expected.depth
    assert {type(v) for v in got.depth.values()} == {int}
    assert len(got.depth) < len(picked)  # some (node, epoch) sampled twice


def test_no_samples_leave_the_outcome_empty() -> None:
    got = blank()
    runner = SimpleNamespace(routes=routes(np.random.default_rng(1), 3, 10))
    _Runner._sample_spans(runner, got, np.zeros(0, OBSERVATION_DTYPE))  # type: ignore[arg-type]
    assert (got.node_epochs, got.last_sample_ms, got.depth) == ({}, {}, {})
