"""The 2004 Intel Berkeley lab deployment rerun: its 54-mote layout at its 31 s sample
period on the default radio, through `mote sweep`'s points on local Spark; the yield and
every mote's yield beside the ~40 % of its readings the real network delivered.

The deployment (TinyDB on Mica2Dot motes, 28 Feb - 5 Apr 2004) sampled humidity,
temperature, light and voltage every 31 s. The catalog has no humidity sensor, so the
query reads ``nodeid, light, temp, voltage``. Each seed runs `--epochs` epochs after the
30 s warm-up on the `sinr` radio, the default (`mica2dot` platform); mote 0, the basestation, is at
the layout's centroid (the file does not place it). Per-mote yields pool the seeds; depth
is the mote's hop count when it sampled (`mote accuracy`'s ``yield_by_depth``), distance
is from the basestation.

    python bench/papers/deployment.py                  # seeds 1-10, 40 epochs: docs/img/...
    python bench/papers/deployment.py --seeds 1 --epochs 3 --out /tmp/d.json --svg /tmp/d.svg
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from paper import sweep_rows
from ratios import write_report
from svgplot import Axes, save

from motebase.emu.network import NetworkConfig, mote_id, node_index
from motebase.emu.sweep import SweepSpec

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench" / "results" / "deployment.json"
FIGURE = ROOT / "docs" / "img" / "deployment_yield.svg"
PERIOD_MS = 31000
QUERY = f"SELECT nodeid, light, temp, voltage FROM sensors SAMPLE PERIOD {PERIOD_MS}"
NETWORK = {"topology": "intel-lab", "platform": "mica2dot", "link_model": "sinr"}
#: What the real deployment delivered (db.csail.mit.edu/labdata): about 2.3 million
#: readings from 54 motes over 28 Feb - 5 Apr 2004 (37 days) at one reading every 31 s.
REAL_2004 = {"readings": 2.3e6, "motes": 54, "days": 37, "period_s": 31}
DISTANCE_BINS_M = (0.0, 10.0, 15.0, 20.0, math.inf)
UNROUTED = "255"  # the depth a reading taken without a route carries
WORST = 5


def real_yield() -> float:
    expected = REAL_2004["motes"] * REAL_2004["days"] * 86400 / REAL_2004["period_s"]
    return REAL_2004["readings"] / expected


def spec(epochs: int, seeds: int) -> SweepSpec:
    return SweepSpec(
        {"query": QUERY, "epochs": epochs, **NETWORK}, {"seed": list(range(1, seeds + 1))}
    )


def distances() -> dict[str, float]:
    """Each mote id's distance (m) from the basestation, as the emulated layout has it."""
    layout = NetworkConfig(**NETWORK).file_layout()
    root = layout.positions[node_index(0)]
    out = {}
    for index, (x, y) in enumerate(layout.positions):
        if index not in layout.absent and index != node_index(0):
            out[str(mote_id(index))] = math.hypot(x - root[0], y - root[1])
    return out


def pooled(reports: list[dict[str, Any]], key: str) -> dict[str, list[int]]:
    """``yield_by_node`` or ``yield_by_depth`` summed over the seeds: [delivered, expected]."""
    total: dict[str, list[int]] = {}
    for report in reports:
        for name, stat in report[key].items():
            tally = total.setdefault(name, [0, 0])
            tally[0] += stat["delivered"]
            tally[1] += stat["expected"]
    return total


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    failed = [r["error"] for r in rows if r["error"] is not None]
    if failed:
        raise SystemExit(f"{len(failed)} points failed: {failed[0]}")
    reports = [next(iter(json.loads(r["accuracy"]).values())) for r in rows]
    far = distances()
    # The basestation's own readings go by serial, not by radio: leave them out.
    motes = {n: t for n, t in pooled(reports, "yield_by_node").items() if n != "0"}
    per_node = {n: d / e for n, (d, e) in motes.items() if e}
    ranked = sorted(per_node, key=lambda n: (per_node[n], int(n)))
    depths = pooled(reports, "yield_by_depth")
    by_depth = {
        d: {"readings": depths[d][1], "yield": depths[d][0] / depths[d][1]}
        for d in sorted(depths, key=lambda d: int(d) if d.isdigit() else 1 << 16)
        if depths[d][1]
    }
    return {
        "yield_by_seed": {str(r["seed"]): r["tuple_yield"] for r in rows},
        "yield_mean": statistics.mean(r["tuple_yield"] for r in rows),
        "motes_yield": sum(d for d, _ in motes.values()) / sum(e for _, e in motes.values()),
        "per_node": {n: {"yield": per_node[n], "distance_m": far[n]} for n in sorted(per_node)},
        "per_node_quantiles": quantiles(list(per_node.values())),
        "motes_below_0_9": sum(1 for y in per_node.values() if y < 0.9),
        "worst": [{"mote": int(n), "yield": per_node[n], "distance_m": far[n]} for n in ranked][
            :WORST
        ],
        "yield_by_depth": by_depth,
        "yield_by_distance": by_distance(motes, far),
        "frames_sent_mean": statistics.mean(r["frames_sent"] for r in rows),
        "queue_dropped_mean": statistics.mean(r["queue_dropped"] for r in rows),
        "sends_dropped_mean": statistics.mean(r["sends_dropped"] for r in rows),
        "real_2004": {**REAL_2004, "yield": real_yield()},
    }


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    cut = statistics.quantiles(ordered, n=10, method="inclusive")
    median = statistics.median(ordered)
    return {"min": ordered[0], "p10": cut[0], "median": median, "max": ordered[-1]}


def by_distance(motes: dict[str, list[int]], far: dict[str, float]) -> dict[str, Any]:
    """Pooled yield of the motes in each distance band from the basestation."""
    out: dict[str, Any] = {}
    for lo, hi in itertools.pairwise(DISTANCE_BINS_M):
        inside = [t for n, t in motes.items() if lo <= far[n] < hi]
        expected = sum(e for _, e in inside)
        name = f"{lo:g}-{hi:g} m" if math.isfinite(hi) else f">= {lo:g} m"
        out[name] = {
            "motes": len(inside),
            "yield": sum(d for d, _ in inside) / expected if expected else None,
        }
    return out


def table(result: dict[str, Any]) -> str:
    q = result["per_node_quantiles"]
    real = result["real_2004"]
    lines = [
        "| | emulated | real, 2004 |",
        "|---|---|---|",
        f"| yield, the 54 motes' readings | {result['motes_yield']:.3f} | ~{real['yield']:.2f} |",
        f"| yield, with the basestation's own | {result['yield_mean']:.3f} | |",
        f"| per-mote yield: min / p10 / median / max | {q['min']:.3f} / {q['p10']:.3f} / "
        f"{q['median']:.3f} / {q['max']:.3f} | |",
        f"| motes below 0.9 | {result['motes_below_0_9']} | |",
        "",
        "| hops when sampled | readings | yield |",
        "|---|---|---|",
        *(
            f"| {'no route' if d == UNROUTED else d} | {b['readings']} | {b['yield']:.3f} |"
            for d, b in result["yield_by_depth"].items()
        ),
        "",
        "| distance from the basestation | motes | yield |",
        "|---|---|---|",
        *(
            f"| {band} | {b['motes']} | "
            + (f"{b['yield']:.3f} |" if b["yield"] is not None else "- |")
            for band, b in result["yield_by_distance"].items()
        ),
        "",
        "worst motes: "
        + ", ".join(
            f"{w['mote']} ({w['yield']:.3f}, {w['distance_m']:.1f} m)" for w in result["worst"]
        ),
    ]
    return "\n".join(lines)


def svg(result: dict[str, Any], seeds: int) -> str:
    """Every mote's yield against its distance from the basestation."""
    nodes = result["per_node"].values()
    x_max = max(n["distance_m"] for n in nodes) * 1.1
    axes = Axes(x_max=x_max, y_min=min(0.5, min(n["yield"] for n in nodes))).begin()
    for node in nodes:
        axes.out.append(
            f'<circle cx="{axes.x(node["distance_m"]):.1f}" cy="{axes.y(node["yield"]):.1f}" '
            'r="3" fill="#1f4e99"/>'
        )
    return axes.end(
        [float(v) for v in range(0, int(x_max) + 1, 5)],
        [v / 10 for v in range(round(axes.y_min * 10), 11)],
        f"distance from the basestation (m): Intel lab layout, 31 s, {seeds} seeds pooled",
        "yield of the mote's readings",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--svg", type=Path, default=FIGURE)
    args = parser.parse_args()

    rows = sweep_rows(spec(args.epochs, args.seeds).points(), args.master, "deployment")
    result = summarize(rows)
    settings = {"query": QUERY, "epochs": args.epochs, "seeds": args.seeds, **NETWORK}
    write_report(args.out, {**settings, **result})
    save(args.svg, svg(result, args.seeds))
    print(table(result))


if __name__ == "__main__":
    main()
