"""An aggregate beside a tuple query: how right the aggregate stays, against the truth.

Each case runs two queries at once on one emulated network, as docs/pictures.md's and a
user's dashboards do: a SELECT of tuples and an aggregate. For the aggregate it reports
the share of epochs exactly right and, where it has a COUNT(*), the mean absolute error of
the count; for the SELECT its yield; for both the share of node-epochs that ran them
(`sampled`: a query part lost in the flood leaves nodes without the query for a while).
Every figure is `mote accuracy`'s (gateway/accuracy.py) after the 30 s warm-up. A row is
the mean over seeds; the per-seed values go to stderr and to the JSON
(bench/results/beside.json, docs/accuracy.md's "Two queries at once").

    python bench/beside.py                          # every case, seeds 1-5
    python bench/beside.py --cases pair25 --seeds 10
    python bench/beside.py --link-model logistic --out /tmp/logistic.json
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ratios import measure_over_seeds, seeded_cases, write_report

from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
from motebase.emu.network import Network, NetworkConfig
from motebase.gateway.accuracy import AggregateAccuracy, TupleAccuracy, compare

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "beside.json"


@dataclass(frozen=True)
class Case:
    nodes: int
    tuples: str
    aggregate: str
    epochs: int  # of the query with the longer epoch


CASES = {
    "pair25": Case(
        25, "SELECT nodeid, light SAMPLE PERIOD 4s", "SELECT COUNT(*) SAMPLE PERIOD 4s", 20
    ),
    "pictures25": Case(
        25,
        "SELECT nodeid, parent, depth, light SAMPLE PERIOD 4s",
        "SELECT AVG(light), MAX(light), COUNT(*) SAMPLE PERIOD 4s",
        20,
    ),
    "max25_2s": Case(
        25, "SELECT nodeid, light SAMPLE PERIOD 2s", "SELECT MAX(light) SAMPLE PERIOD 2s", 20
    ),
    "count49_8s": Case(
        49, "SELECT nodeid, light SAMPLE PERIOD 8s", "SELECT COUNT(*) SAMPLE PERIOD 4s", 20
    ),
    "grid100_8s": Case(
        100, "SELECT nodeid SAMPLE PERIOD 8s", "SELECT COUNT(*), MAX(light) SAMPLE PERIOD 4s", 30
    ),
    "grid100_32s": Case(
        100, "SELECT nodeid SAMPLE PERIOD 32s", "SELECT COUNT(*), MAX(light) SAMPLE PERIOD 4s", 30
    ),
}

METRICS = ("exact", "count_error", "aggregate_sampled", "tuple_yield", "tuple_sampled")


def measure(
    name: str, seed: int, epochs: int | None, link_model: str | None
) -> dict[str, float | None]:
    """One case on one seed: the aggregate's exact share and COUNT error (None without a
    COUNT), the SELECT's yield, and the share of node-epochs that ran each."""
    case = CASES[name]
    radio = {"link_model": link_model} if link_model else {}
    with Network(NetworkConfig(nodes=case.nodes, seed=seed, **radio)) as net:
        experiment = run_experiment(
            net, [QueryRun(case.tuples), QueryRun(case.aggregate)], epochs=epochs or case.epochs
        )
    tuples, aggregate = compare(
        result_records(experiment), truth_records(experiment)
    ).queries.values()
    assert isinstance(tuples, TupleAccuracy) and isinstance(aggregate, AggregateAccuracy)
    count = aggregate.columns.get("COUNT(*)")
    return {
        "exact": aggregate.exact_fraction or 0.0,
        "count_error": None if count is None else count.mean_abs_error or 0.0,
        "aggregate_sampled": aggregate.sampled or 0.0,
        "tuple_yield": tuples.tuple_yield or 0.0,
        "tuple_sampled": tuples.sampled or 0.0,
    }


def run(
    names: list[str], seeds: int, epochs: int | None, jobs: int, link_model: str | None
) -> dict[str, Any]:
    measured = measure_over_seeds(measure, names, seeds, epochs, jobs, link_model, _shown)
    return {name: summary(name, by_seed) for name, by_seed in measured.items()}


def _shown(got: dict[str, float | None]) -> str:
    return "  ".join(f"{k} {v:.3f}" for k, v in got.items() if v is not None)


def summary(name: str, by_seed: dict[int, dict[str, float | None]]) -> dict[str, Any]:
    case = CASES[name]
    seeds = sorted(by_seed)
    row: dict[str, Any] = {"nodes": case.nodes, "tuples": case.tuples, "aggregate": case.aggregate}
    for metric in METRICS:
        per_seed = [by_seed[s][metric] for s in seeds]
        known = [v for v in per_seed if v is not None]
        row[metric] = {"per_seed": per_seed, "mean": statistics.mean(known) if known else None}
    return row


def table(rows: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| case | aggregate exact | COUNT error | aggregate sampled | SELECT yield"
        " | SELECT sampled |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in rows.items():
        means = [r[m]["mean"] for m in METRICS]
        cells = [
            "" if v is None else f"{v:.1f}" if m == "count_error" else f"{v:.3f}"
            for m, v in zip(METRICS, means, strict=True)
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    args, names = seeded_cases(__doc__, list(CASES), RESULTS)
    rows = run(names, args.seeds, args.epochs, args.jobs, args.link_model)
    link_model = args.link_model or NetworkConfig(nodes=1).link_model
    write_report(args.out, {"seeds": args.seeds, "link_model": link_model, "cases": rows})
    print(table(rows))


if __name__ == "__main__":
    main()
