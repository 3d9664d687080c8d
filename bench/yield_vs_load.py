"""SELECT tuple yield against offered load, on the lossless radio and the lossy ones.

An every-tuple query on an N-node grid offers N / P tuples a second. Each point is the
yield `mote accuracy` reports (delivered readings over the readings the nodes took, after
the warm-up) for one period, averaged over the seeds; the line for each radio is drawn
into docs/img/yield_vs_load.svg and printed as a table. (Lossless capacity is set by the
busiest root child's subtree, gateway/plan/capacity.py, not by the total load.)

    python bench/yield_vs_load.py                 # 25 nodes, seeds 1-3: docs/img/...
    python bench/yield_vs_load.py --nodes 49 --seeds 2 --out /tmp/y49.svg
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from svgplot import Axes, save

from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
from motebase.emu.network import Network, NetworkConfig
from motebase.gateway.accuracy import compare

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "yield_vs_load.svg"
PERIODS_MS = (1024, 2048, 4096, 8192, 16384)
RADIOS = {"lossless": "#2e7d32", "logistic": "#1f4e99", "sinr": "#c62828"}


def tuple_yield(nodes: int, period_ms: int, radio: str, seed: int, epochs: int) -> float:
    config = NetworkConfig(
        nodes=nodes,
        seed=seed,
        lossless=radio == "lossless",
        link_model="logistic" if radio == "lossless" else radio,
    )
    sql = f"SELECT nodeid, light FROM sensors EPOCH DURATION {period_ms}"
    with Network(config) as net:
        experiment = run_experiment(net, [QueryRun(sql)], epochs=epochs)
    report = compare(result_records(experiment), truth_records(experiment))
    (query,) = report.queries.values()
    assert query.tuple_yield is not None
    return query.tuple_yield


def measure(nodes: int, seeds: int, epochs: int) -> dict[str, list[tuple[float, float]]]:
    """Per radio, (offered tuples/s, mean yield) for every period, heaviest load first."""
    lines: dict[str, list[tuple[float, float]]] = {}
    for radio in RADIOS:
        for period in PERIODS_MS:
            yields = [tuple_yield(nodes, period, radio, s, epochs) for s in range(1, seeds + 1)]
            load = nodes * 1000.0 / period
            lines.setdefault(radio, []).append((load, statistics.mean(yields)))
            print(
                f"{radio:9s} {period / 1000:5g} s  {load:6.1f} tuples/s  yield "
                + " ".join(f"{y:.3f}" for y in yields),
                file=sys.stderr,
            )
    return lines


def svg(lines: dict[str, list[tuple[float, float]]], nodes: int, seeds: int) -> str:
    x_max = max(load for points in lines.values() for load, _ in points) * 1.15
    axes = Axes(x_max=x_max).begin()
    for radio, points in lines.items():
        axes.polyline(sorted(points), RADIOS[radio], radio)
    step = 5 if x_max <= 40 else 10
    return axes.end(
        [float(v) for v in range(0, int(x_max) + 1, step)],
        (0.0, 0.25, 0.5, 0.75, 1.0),
        f"offered load (tuples/s): {nodes}-node grid, SELECT nodeid, light at 16-1 s, "
        f"mean of {seeds} seeds",
        "tuple yield",
    )


def table(lines: dict[str, list[tuple[float, float]]], nodes: int) -> str:
    rows = ["| period | offered tuples/s | " + " | ".join(RADIOS) + " |"]
    rows.append("|---" * (len(RADIOS) + 2) + "|")
    for i, period in enumerate(PERIODS_MS):
        cells = " | ".join(f"{lines[r][i][1]:.3f}" for r in RADIOS)
        rows.append(f"| {period / 1000:g} s | {nodes * 1000 / period:.1f} | {cells} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=25)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    lines = measure(args.nodes, args.seeds, args.epochs)
    save(args.out, svg(lines, args.nodes, args.seeds))
    print(table(lines, args.nodes))


if __name__ == "__main__":
    main()
