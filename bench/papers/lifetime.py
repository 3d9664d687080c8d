"""TODS 2005 §3.6, lifetime: the planner's sample period for a LIFETIME, and whether the
motes last that long in a battery-limited emulation, through `mote sweep`'s points on
local Spark.

The query is the paper's example, SELECT nodeid, light FROM sensors LIFETIME l, for 24, 4
and 1 weeks on the catalog's two AA cells (27,000 J). Emulating weeks of virtual time is
too long, so battery and lifetime are scaled down by the same factor (``--scale``): the
energy per hour p_h = c_rem / l is unchanged, so is the planner's period, and a mote that
lasts l / scale on c_rem / scale lasts l on c_rem. The warm-up (30 s with every node awake,
about 1.4 J) is the one cost the scaling inflates: about 1 % of 135 J at the default 200.

The network is a 9-node star (every mote hears the basestation: 40 m radio range on the
10 m grid), so every mote is a leaf, the node the planner plans for by default. A
lifetime the slot schedule cannot give at any period (the planner refuses it) is run at
the longest epoch the wire carries, to show how far the motes get.

    python bench/papers/lifetime.py                 # 9 nodes, seeds 1-3, scale 200
    python bench/papers/lifetime.py --weeks 1 --seeds 1 --scale 2000 --out /tmp/l.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from paper import sweep_rows
from ratios import write_report

from motebase.emu.sweep import SweepSpec
from motebase.gateway.plan import TinySQLError, compile_query

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench" / "results" / "lifetime.json"
QUERY = "SELECT nodeid, light FROM sensors"
BATTERY_J = 27_000.0  # gateway/data/catalog.json: 2500 mAh x 3 V
HOURS_PER_WEEK = 168.0
PAPER_PERIOD_S = 15.2
#: The longest epoch the wire carries (gateway/plan/compile.py MAX_EPOCH_UNITS x 10 ms).
LONGEST_EPOCH_MS = 327_660


def planned_period_ms(weeks: float) -> float | None:
    """The planner's period for LIFETIME ``weeks`` on the full battery (None: refused)."""
    try:
        plan = compile_query(f"{QUERY} LIFETIME {weeks:g} weeks")
    except TinySQLError:
        return None
    assert plan.explanation.lifetime is not None
    return plan.explanation.lifetime.period_ms


def planned_epoch_ms(weeks: float) -> int | None:
    """The epoch the planner's LIFETIME query runs at: its period rounded up to the wire's
    10-ms units (SAMPLE PERIOD truncates: 4,096.35 ms would run at 4,090, where the
    schedule spends 17 % more than at 4,100)."""
    try:
        plan = compile_query(f"{QUERY} LIFETIME {weeks:g} weeks")
    except TinySQLError:
        return None
    return plan.epoch_units * 10


def spec(weeks: float, nodes: int, seeds: int, scale: float) -> SweepSpec:
    """One lifetime's points, a seed each. The drain runs past the scaled request by half
    again, and finds flat batteries to 1/400 of itself (emu/sweep.py DRAIN_STEPS): each
    lifetime has its own, so each is found to 0.4 % of 1.5 x its request (one drain for
    all, the longest's, measured a week to 9 %)."""
    epoch = planned_epoch_ms(weeks)
    ms = LONGEST_EPOCH_MS if epoch is None else epoch
    return SweepSpec(
        {
            "epochs": 2,
            "nodes": nodes,
            "link_model": "logistic",  # its radio_range makes the star
            "radio_range": 40.0,
            "battery_j": BATTERY_J / scale,
        },
        {
            "query": [f"{QUERY} SAMPLE PERIOD {ms}"],
            "drain_s": [1.5 * weeks * HOURS_PER_WEEK * 3600.0 / scale],
            "seed": list(range(1, seeds + 1)),
        },
    )


def summarize(
    rows: list[dict[str, Any]], weeks: list[float], queries: list[str], scale: float
) -> dict[str, Any]:
    failed = [r["error"] for r in rows if r["error"] is not None]
    if failed:
        raise SystemExit(f"{len(failed)} points failed: {failed[0]}")
    out: dict[str, Any] = {}
    for w, query in zip(weeks, queries, strict=True):
        # A median mote that outlived the drain counts as the drain (a lower bound).
        lives = [
            r["drain_s"] if r["lifetime_median_s"] is None else r["lifetime_median_s"]
            for r in rows
            if r["query"] == query
        ]
        requested_s = w * HOURS_PER_WEEK * 3600.0 / scale
        out[f"{w:g}w"] = {
            "planned_period_s": _period_s(w),
            "emulated_period_query": query,
            "emulated_median_lifetime_h_unscaled": statistics.median(lives) * scale / 3600.0,
            "emulated_over_requested": statistics.median(lives) / requested_s,
        }
    return out


def _period_s(weeks: float) -> float | None:
    period = planned_period_ms(weeks)
    return None if period is None else period / 1000.0


def table(cases: dict[str, Any]) -> str:
    lines = ["| LIFETIME | planned period | emulated median lifetime | emulated / requested |"]
    lines.append("|---|---|---|---|")
    for name, c in cases.items():
        period = "refused" if c["planned_period_s"] is None else f"{c['planned_period_s']:.3f} s"
        lines.append(
            f"| {name} | {period} | {c['emulated_median_lifetime_h_unscaled']:,.0f} h | "
            f"{c['emulated_over_requested']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weeks", type=float, nargs="+", default=[24.0, 4.0, 1.0])
    parser.add_argument("--nodes", type=int, default=9)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=200.0)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    specs = [spec(w, args.nodes, args.seeds, args.scale) for w in args.weeks]
    rows = sweep_rows([p for s in specs for p in s.points()], args.master, "lifetime")
    cases = summarize(rows, args.weeks, [s.grid["query"][0] for s in specs], args.scale)
    report: dict[str, Any] = {
        "query": QUERY,
        "nodes": args.nodes,
        "scale": args.scale,
        "battery_j": BATTERY_J,
        "paper_period_s": PAPER_PERIOD_S,
        "estimate_s_24w": _period_s(24.0),
        "cases": cases,
    }
    for name, case in cases.items():
        report[f"emulated_over_requested_{name}"] = case["emulated_over_requested"]
    write_report(args.out, report)
    print(table(cases))


if __name__ == "__main__":
    main()
