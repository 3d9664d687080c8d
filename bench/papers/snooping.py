"""TODS 2005 §6.3.2, snooping: result messages per epoch of a MAX query, with and without
snooping, on a sparse and a dense grid, through `mote sweep`'s points on local Spark.

A node that overhears a sibling's MAX record above its own drops its own (firmware
ops/snoop.c; `records_suppressed`). The switch is the named command `snoop enabled=0|1`,
sent before the query. Sparse: logistic's default range, 1.5 x the 10 m spacing (8
neighbours). Dense: 3 x (28 neighbours). Each row is the mean over seeds, on `logistic`
(whose range sets the density; the default radio, `sinr`, has none), after the 30 s
warm-up; the reduction is 1 - with / without.

    python bench/papers/snooping.py                 # 49 nodes, 20 epochs, seeds 1-5
    python bench/papers/snooping.py --nodes 9 --epochs 3 --seeds 1 --out /tmp/s.json
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

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench" / "results" / "snooping.json"
QUERY = "SELECT MAX(light) FROM sensors SAMPLE PERIOD 2048"
DENSITIES = {"sparse": 15.0, "dense": 30.0}  # radio range (m) on the 10 m grid


def spec(nodes: int, epochs: int, seeds: int) -> SweepSpec:
    return SweepSpec(
        # logistic: its radio_range is the density knob (sinr's reach follows from power)
        {"query": QUERY, "epochs": epochs, "nodes": nodes, "link_model": "logistic"},
        {
            "radio_range": list(DENSITIES.values()),
            "snoop": [True, False],
            "seed": list(range(1, seeds + 1)),
        },
    )


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    failed = [r["error"] for r in rows if r["error"] is not None]
    if failed:
        raise SystemExit(f"{len(failed)} points failed: {failed[0]}")
    cases: dict[str, Any] = {}
    for name, reach in DENSITIES.items():
        for snoop in (True, False):
            mine = [r for r in rows if r["radio_range"] == reach and r["snoop"] == snoop]
            cases[f"{name}_{'snoop' if snoop else 'no_snoop'}"] = {
                "radio_range_m": reach,
                "snoop": snoop,
                "seeds": len(mine),
                "messages_per_epoch": statistics.mean(r["messages_per_epoch"] for r in mine),
                "records_suppressed": statistics.mean(r["records_suppressed"] for r in mine),
                "exact_fraction": statistics.mean(r["exact_fraction"] for r in mine),
            }
    reduction = {
        name: 1.0
        - cases[f"{name}_snoop"]["messages_per_epoch"]
        / cases[f"{name}_no_snoop"]["messages_per_epoch"]
        for name in DENSITIES
    }
    return {"cases": cases, "reduction": reduction}


def table(result: dict[str, Any]) -> str:
    lines = [
        "| grid | snooping | result messages per epoch | records suppressed | MAX exact |",
        "|---|---|---|---|---|",
    ]
    for name, case in result["cases"].items():
        lines.append(
            f"| {name.split('_')[0]} ({case['radio_range_m']:g} m) | "
            f"{'on' if case['snoop'] else 'off'} | {case['messages_per_epoch']:.1f} | "
            f"{case['records_suppressed']:.0f} | {case['exact_fraction']:.3f} |"
        )
    for name, cut in result["reduction"].items():
        lines.append(f"\n{name}: snooping cuts result messages by {cut:.1%}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=49)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    points = spec(args.nodes, args.epochs, args.seeds).points()
    rows = sweep_rows(points, args.master, "snooping")
    result = summarize(rows)
    write_report(args.out, {"nodes": args.nodes, "epochs": args.epochs, "query": QUERY, **result})
    print(table(result))


if __name__ == "__main__":
    main()
