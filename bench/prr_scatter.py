"""PRR against distance, ``sinr`` model with its default parameters: an SVG scatter, a table.

Every directed link of a 10 m grid (default 900 nodes, seed 1) is a point: its distance and
the reception probability of a typical 54-byte frame without interference (the ``prob``
the link table carries). Pairs that are not links at all (below the noise floor + 3 dB)
count as PRR 0 in the table. No plotting library is needed: the SVG is written directly.

    python bench/prr_scatter.py                      # docs/img/prr_vs_distance.svg + table
    python bench/prr_scatter.py --nodes 400 --out /tmp/prr.svg
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from svgplot import Axes, save

from motebase.emu import propagation, topology

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "prr_vs_distance.svg"
BANDS = ((9.5, 10.5), (14.0, 14.3), (19.5, 20.5), (22.0, 22.5), (28.0, 28.5), (30.0, 31.7))
BANDS += ((35.0, 36.1), (40.0, 41.3), (50.0, 51.0))
MAX_POINTS = 3000


def measure(nodes: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(link distances, link PRRs, distance of every ordered pair)."""
    pos = topology.grid_positions(nodes, 10.0)
    links = topology.sinr_links(pos, propagation.RadioParams(), seed)
    src = np.repeat(np.arange(nodes), np.diff(links.row))
    dist = np.hypot(*(pos[src] - pos[links.dst]).T)
    pairs = np.hypot(pos[:, None, 0] - pos[None, :, 0], pos[:, None, 1] - pos[None, :, 1])
    return dist, links.prob.astype(np.float64), pairs[~np.eye(nodes, dtype=bool)]


def table(dist: np.ndarray, prob: np.ndarray, pairs: np.ndarray) -> str:
    rows = [
        "| distance (m) | pairs | mean PRR | PRR > 0.9 | 0.1-0.9 | PRR < 0.1 (or no link) |",
        "|---|---|---|---|---|---|",
    ]
    for lo, hi in BANDS:
        n_pairs = int(np.sum((pairs >= lo) & (pairs <= hi)))
        p = prob[(dist >= lo) & (dist <= hi)]
        good, mid = np.sum(p > 0.9) / n_pairs, np.sum((p >= 0.1) & (p <= 0.9)) / n_pairs
        rows.append(
            f"| {lo:g}-{hi:g} | {n_pairs} | {p.sum() / n_pairs:.2f} | {good:.2f} | {mid:.2f}"
            f" | {1 - good - mid:.2f} |"
        )
    return "\n".join(rows)


def svg(dist: np.ndarray, prob: np.ndarray, max_m: float, seed: int) -> str:
    rng = np.random.default_rng(seed)
    keep = dist <= max_m
    dist, prob = dist[keep], prob[keep]
    if len(dist) > MAX_POINTS:
        pick = rng.choice(len(dist), MAX_POINTS, replace=False)
        dist, prob = dist[pick], prob[pick]
    jitter = rng.uniform(-0.4, 0.4, len(dist))  # grid distances repeat: spread them a little
    axes = Axes(x_max=max_m).begin()
    axes.band(0, 12.5, "connected", "#e8f5e9")
    axes.band(12.5, 35, "transitional", "#fff8e1")
    axes.band(35, max_m, "disconnected", "#ffebee")
    for d, p, j in zip(dist, prob, jitter, strict=True):
        axes.out.append(
            f'<circle cx="{axes.x(d + j):.1f}" cy="{axes.y(p):.1f}" r="1.3" fill="#1f4e99" '
            'fill-opacity="0.35"/>'
        )
    return axes.end(
        range(0, int(max_m) + 1, 10),
        (0.0, 0.25, 0.5, 0.75, 1.0),
        "distance (m); default sinr model, 10 m grid, 54-byte frames, no interference",
        "PRR",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=900)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-m", type=float, default=60.0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    dist, prob, pairs = measure(args.nodes, args.seed)
    save(args.out, svg(dist, prob, args.max_m, args.seed))
    print(table(dist, prob, pairs))


if __name__ == "__main__":
    main()
