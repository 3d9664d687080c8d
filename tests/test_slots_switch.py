"""`slots enabled=0|1` (AM 103): the slot schedule against the naive alternative, paper
§6.1.1 / Fig 12.

Slotted, a level transmits in the interval its parent listens in, so COUNT over the whole
tree reaches the root in the epoch it was sampled. Unslotted (firmware/core/runs.c), every
node sends at the same moment of the epoch, so a parent's record is out before its
children's arrive, and theirs joins its next one: a record climbs a level an epoch, except
the last hop, which the root (emitting at its epoch's end) still merges in the same epoch.
Epoch k then counts exactly the nodes of depth <= k, and the first complete epoch is the
tree's depth. On a lossless network both are exact.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from motebase.emu import Network, NetworkConfig
from motebase.emu.experiment import QueryRun, run_experiment

NODES = 10
COUNT = "SELECT COUNT(*) FROM sensors EPOCH DURATION 4096"
EPOCHS = 10


def tree(nodes: int, depth: int) -> dict[int, int]:
    """child -> parent: a spine 0-1-...-depth, the other nodes hung round-robin on the
    spine's first `depth` nodes (depths 1..depth)."""
    parent = {i: i - 1 for i in range(1, depth + 1)}
    for k, node in enumerate(range(depth + 1, nodes)):
        parent[node] = k % depth
    return parent


def depths(parent: dict[int, int]) -> dict[int, int]:
    out = {0: 0}
    for node in sorted(parent):  # a parent's number is always below its children's
        out[node] = out[parent[node]] + 1
    return out


def write_links(path: Path, parent: dict[int, int]) -> Path:
    rows = [f"{c},{p},1.0\n{p},{c},1.0" for c, p in parent.items()]
    path.write_text("src,dst,prob\n" + "\n".join(rows) + "\n")
    return path


def counts(links: Path, slotted: int | None) -> tuple[list[int], list[int]]:
    """(COUNT per epoch from epoch 1 on, each node's depth as routing chose it)."""
    commands = [] if slotted is None else [("slots", {"enabled": slotted})]
    config = NetworkConfig(nodes=NODES, lossless=True, seed=4, link_table=str(links))
    with Network(config) as net:
        ex = run_experiment(net, [QueryRun(COUNT)], epochs=EPOCHS, commands=commands)
        routed = [int(d) for d in net.routing().depth]
        executed = [net.mote_stats(i)["commands_executed"] for i in range(NODES)]
    assert executed == [len(commands)] * NODES
    rows = ex.outcomes[0].rows
    assert [row.epoch for row in rows] == list(range(1, len(rows) + 1))
    values = [row.columns["COUNT(*)"] for row in rows]
    assert None not in values
    return [int(v) for v in values if v is not None], routed


@pytest.mark.parametrize("depth", [1, 3, 6, 9])
def test_slotted_counts_every_node_from_the_first_epoch_unslotted_after_depth_epochs(
    tmp_path: Path, depth: int
) -> None:
    parent = tree(NODES, depth)
    levels = depths(parent)
    links = write_links(tmp_path / "tree.csv", parent)
    slotted, routed = counts(links, None)
    assert routed == [levels[i] for i in range(NODES)]
    assert len(slotted) >= EPOCHS and set(slotted) == {NODES}
    assert counts(links, 1)[0] == slotted  # the default, sent explicitly

    unslotted, _ = counts(links, 0)
    at_depth = Counter(levels.values())
    expected = [sum(n for d, n in at_depth.items() if d <= k) for k in range(1, len(unslotted) + 1)]
    assert unslotted == expected
    assert unslotted.index(NODES) + 1 == depth  # epochs to complete
