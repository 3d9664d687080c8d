"""Issue 10's table: every network it sets a target for, on the default radio, over seeds.

Each case is one query on one emulated network (`mote accuracy`'s comparison against the
emulator's ground truth, after the 30 s warm-up). SELECT cases report the tuple yield,
aggregate cases the share of epochs exactly right and the COUNT the root delivered (its
median over the epochs of a run). Beside each, the share of node-epochs that ran the query
(`sampled`, worst seed): the metrics count what nodes sampled, so a query that reached
only the root would score a perfect yield. A row is the mean over seeds, with the median of the
per-seed values where issue 10 states a median; the per-seed values go to stderr and to
the JSON (bench/results/issue10.json, docs/radio.md's table).

    python bench/issue10.py                           # every case, seeds 1-5
    python bench/issue10.py --cases count25,max25 --seeds 10 --jobs 2
    python bench/issue10.py --cases select25_2s --seeds 1 --epochs 4 --out /tmp/t.json
    python bench/issue10.py --link-model sinr --out /tmp/sinr.json  # another radio
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratios import measure_over_seeds, seeded_cases, write_report

from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
from motebase.emu.network import Network, NetworkConfig
from motebase.gateway.accuracy import AggregateAccuracy, TupleAccuracy, compare

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "issue10.json"
SELECT = "SELECT nodeid, light FROM sensors SAMPLE PERIOD {}"


@dataclass(frozen=True)
class Case:
    nodes: int
    topology: str
    sql: str
    epochs: int
    metric: str  # "yield", "exact" or "count"
    target: float | None
    over: str = "mean"  # how seeds combine for the target: "mean" or "median"
    adapt: bool = False  # the gateway lowers a rate the network cannot carry (ratecontrol)


CASES = {
    "select25_2s": Case(25, "grid", SELECT.format(2048), 30, "yield", 0.95),
    "select25_8s": Case(25, "grid", SELECT.format(8192), 15, "yield", None),
    "select49_4s": Case(49, "grid", SELECT.format(4096), 20, "yield", 0.95),
    "select100_8s": Case(100, "grid", SELECT.format(8192), 12, "yield", 0.90),
    "intel_31s": Case(54, "intel-lab", SELECT.format(31000), 12, "yield", 0.95),
    "intel_4s": Case(54, "intel-lab", SELECT.format(4096), 20, "yield", 0.95),
    # Past capacity on `logistic`: what the gateway's rate governor makes of it (§3).
    "intel_4s_adapt": Case(54, "intel-lab", SELECT.format(4096), 20, "yield", None, adapt=True),
    "count25": Case(
        25, "grid", "SELECT COUNT(*) FROM sensors SAMPLE PERIOD 2048", 30, "count", 24, "median"
    ),
    "max25": Case(
        25, "grid", "SELECT MAX(light) FROM sensors SAMPLE PERIOD 2048", 30, "exact", 0.95
    ),
    "count100": Case(
        100, "grid", "SELECT COUNT(*) FROM sensors SAMPLE PERIOD 4096", 20, "count", 95
    ),
    "maxcount1000": Case(
        1000,
        "grid",
        "SELECT MAX(light), COUNT(*) FROM sensors SAMPLE PERIOD 8192",
        12,
        "count",
        900,
        "median",
    ),
}


def measure(
    name: str, seed: int, epochs: int | None, link_model: str | None = None
) -> tuple[float, float]:
    """One case on one seed (on ``link_model``, else the default radio): its metric, and
    the share of node-epochs that ran the query (``sampled``): a yield counts what the
    nodes sampled, so a query that reached only the root has a perfect yield, and shows
    here."""
    case = CASES[name]
    radio = {"link_model": link_model} if link_model else {}
    config = NetworkConfig(nodes=case.nodes, topology=case.topology, seed=seed, **radio)
    with Network(config) as net:
        experiment = run_experiment(
            net, [QueryRun(case.sql)], epochs=epochs or case.epochs, adapt_rate=case.adapt
        )
    (query,) = compare(result_records(experiment), truth_records(experiment)).queries.values()
    reach = query.sampled or 0.0
    if case.metric == "yield":
        assert isinstance(query, TupleAccuracy) and query.tuple_yield is not None
        return query.tuple_yield, reach
    assert isinstance(query, AggregateAccuracy)
    if case.metric == "exact":
        return query.exact_fraction or 0.0, reach
    counts = [e.count_delivered for e in query.epochs if e.count_delivered is not None]
    return (statistics.median(counts) if counts else 0.0), reach


def run(
    names: Sequence[str], seeds: int, epochs: int | None, jobs: int, link_model: str | None = None
) -> dict[str, Any]:
    measured = measure_over_seeds(
        measure, names, seeds, epochs, jobs, link_model, lambda m: f"{m[0]:.3f}  sampled {m[1]:.3f}"
    )
    return {
        name: summary(
            CASES[name],
            {seed: value for seed, (value, _) in by_seed.items()},
            {seed: sampled for seed, (_, sampled) in by_seed.items()},
        )
        for name, by_seed in measured.items()
    }


def summary(case: Case, by_seed: dict[int, float], reach: dict[int, float]) -> dict[str, Any]:
    per_seed = [by_seed[s] for s in sorted(by_seed)]
    mean, median = statistics.mean(per_seed), statistics.median(per_seed)
    judged = median if case.over == "median" else mean
    return {
        "sql": case.sql,
        "nodes": case.nodes,
        "topology": case.topology,
        "metric": case.metric,
        "per_seed": per_seed,
        "mean": mean,
        "median": median,
        "target": case.target,
        "target_over": case.over,
        "met": None if case.target is None else judged >= case.target,
        "sampled_per_seed": [reach[s] for s in sorted(reach)],
        "sampled_min": min(reach.values()),
    }


def table(rows: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| case | metric | mean | median | target | met | sampled, worst seed |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        digits = 1 if r["metric"] == "count" else 3
        target = "" if r["target"] is None else f"≥ {r['target']:g} ({r['target_over']})"
        met = "" if r["met"] is None else ("yes" if r["met"] else "no")
        lines.append(
            f"| {name} | {r['metric']} | {r['mean']:.{digits}f} | {r['median']:.{digits}f}"
            f" | {target} | {met} | {r['sampled_min']:.3f} |"
        )
    return "\n".join(lines)


def main() -> None:
    args, names = seeded_cases(__doc__, list(CASES), RESULTS)
    rows = run(names, args.seeds, args.epochs, args.jobs, args.link_model)
    link_model = args.link_model or NetworkConfig(nodes=1).link_model
    write_report(args.out, {"seeds": args.seeds, "link_model": link_model, "cases": rows})
    print(table(rows))


if __name__ == "__main__":
    main()
