"""TODS 2005 §6.1.1 / Fig 12: epochs until COUNT over a 10-node tree is complete, against
the tree's depth, with the slot schedule and without, through `mote sweep`'s points on local
Spark.

Each tree is a link table (the sweep's `link_table` key): a spine 0-1-...-d gives it depth
d, and the other nodes hang round-robin on the spine's first d nodes, so every level up to
d holds some (depth 9 is a chain). The radio is the lossless one: what differs is the
schedule alone. Slotted is the firmware's default; unslotted is the named command `slots
enabled=0`, sent before the query: every node transmits at the same moment of the epoch, so
a record climbs a level an epoch (firmware/core/runs.c). Epochs to complete: the number of
the first epoch whose COUNT equals the truth's (1: the epoch the readings were taken in).

    python bench/papers/slotting.py                   # depths 1-9, 12 epochs: docs/img/...
    python bench/papers/slotting.py --depths 1,3 --epochs 4 --out /tmp/s.json --svg /tmp/s.svg
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from paper import sweep_rows
from ratios import write_report
from svgplot import Axes, save

from motebase.emu.sweep import SweepSpec

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench" / "results" / "slotting.json"
FIGURE = ROOT / "docs" / "img" / "slotting.svg"
NODES = 10
QUERY = "SELECT COUNT(*) FROM sensors EPOCH DURATION 4096"
DEPTHS = tuple(range(1, NODES))
SCHEDULES = {"slotted": True, "unslotted": False}


def tree(nodes: int, depth: int) -> dict[int, int]:
    """child -> parent: the spine 0-1-...-depth, the rest hung on spine nodes 0..depth-1."""
    parent = {i: i - 1 for i in range(1, depth + 1)}
    for k, node in enumerate(range(depth + 1, nodes)):
        parent[node] = k % depth
    return parent


def write_tree(path: Path, nodes: int, depth: int) -> Path:
    """The tree's links as a CSV link table, both ways, p = 1."""
    links = [f"{c},{p},1.0\n{p},{c},1.0" for c, p in tree(nodes, depth).items()]
    path.write_text("src,dst,prob\n" + "\n".join(links) + "\n")
    return path


def points(depths: list[int], epochs: int, tables: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for depth in depths:
        table = write_tree(tables / f"depth{depth}.csv", NODES, depth)
        fixed = {
            "query": QUERY,
            "epochs": epochs,
            "nodes": NODES,
            "lossless": True,
            "link_table": str(table),
        }
        for point in SweepSpec(fixed, {"slots": list(SCHEDULES.values())}).points():
            out.append({**point, "depth": depth})
    return out


def counts(row: dict[str, Any]) -> list[tuple[int, float | None, float | None]]:
    """(epoch, COUNT delivered, COUNT true) of every epoch the comparison covers."""
    (report,) = json.loads(row["accuracy"]).values()
    return [(e["epoch"], e["count_delivered"], e["count_truth"]) for e in report["epochs"]]


def complete_epoch(row: dict[str, Any]) -> int | None:
    """The first epoch whose COUNT is the truth's; None: none in the run."""
    return next((e for e, got, true in counts(row) if got is not None and got == true), None)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    failed = [r["error"] for r in rows if r["error"] is not None]
    if failed:
        raise SystemExit(f"{len(failed)} points failed: {failed[0]}")
    by_depth: dict[str, Any] = {}
    for row in rows:
        name = "slotted" if row["slots"] else "unslotted"
        entry = by_depth.setdefault(str(row["depth"]), {"nodes_at_depth": {}})
        entry[name] = {
            "epochs_to_complete": complete_epoch(row),
            "counts": [got for _, got, _ in counts(row)],
            "exact_fraction": row["exact_fraction"],
        }
        levels = {0: 0}
        for child, parent in sorted(tree(NODES, row["depth"]).items()):
            levels[child] = levels[parent] + 1
        for level in sorted(set(levels.values())):
            entry["nodes_at_depth"][str(level)] = sum(1 for v in levels.values() if v == level)
    return {"depths": by_depth}


def table(result: dict[str, Any]) -> str:
    lines = [
        "| tree depth | slotted: epochs to complete | unslotted: epochs to complete "
        "| unslotted COUNT, epochs 1.. |",
        "|---|---|---|---|",
    ]
    for depth, entry in result["depths"].items():
        slotted, unslotted = entry["slotted"], entry["unslotted"]
        first = unslotted["counts"][: int(depth) + 1]
        lines.append(
            f"| {depth} | {slotted['epochs_to_complete']} | {unslotted['epochs_to_complete']} "
            f"| {', '.join(f'{c:g}' for c in first)}, ... |"
        )
    return "\n".join(lines)


COLOURS = {"slotted": "#1f4e99", "unslotted": "#c62828"}


def svg(result: dict[str, Any]) -> str:
    depths = [int(d) for d in result["depths"]]
    got = {
        name: [
            (float(d), float(result["depths"][str(d)][name]["epochs_to_complete"] or 0))
            for d in depths
        ]
        for name in SCHEDULES
    }
    x_max = max(depths) + 1.5
    y_max = max(y for line in got.values() for _, y in line) + 1.0
    axes = Axes(x_max=x_max, y_max=y_max).begin()
    for name, xy in got.items():
        axes.polyline(xy, COLOURS[name], name)
    return axes.end(
        [float(v) for v in range(0, int(x_max) + 1)],
        [float(v) for v in range(0, int(y_max) + 1)],
        f"tree depth ({NODES} nodes, lossless radio)",
        "epochs until COUNT is complete",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--svg", type=Path, default=FIGURE)
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]

    with tempfile.TemporaryDirectory(prefix="slotting-") as tables:
        rows = sweep_rows(points(depths, args.epochs, Path(tables)), args.master, "slotting")
    result = summarize(rows)
    write_report(args.out, {"nodes": NODES, "query": QUERY, "epochs": args.epochs, **result})
    save(args.svg, svg(result))
    print(table(result))


if __name__ == "__main__":
    main()
