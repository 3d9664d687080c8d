"""How fast a stop reaches every mote: per case and seed, the stop report of `mote accuracy`
(gateway/accuracy.py, StopReport) over a long watch after the stop.

The experiment's own watch after the stop is 5 epochs (emu/experiment.py,
AFTER_STOP_EPOCHS): a mote that runs on longer shows only as still sampling. Here the
watch is --after epochs (run_experiment's ``after_stop_epochs``), so every mote's lag is
measured. A mote's lag is the epochs between the gateway's stop and its last sample
(accuracy._stop_lags); late readings are the samples taken more than two epochs after
the stop (readings nobody delivers, QueryOutcome.late_samples).

    python bench/stoplag.py --seeds 10 --out /tmp/stoplag.json
    python bench/stoplag.py --cases intel_31s --seeds 3 --after 20
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from motebase.emu.experiment import QueryRun, result_records, run_experiment, truth_records
from motebase.emu.network import Network, NetworkConfig
from motebase.gateway.accuracy import TupleAccuracy, compare

SELECT = "SELECT nodeid, light FROM sensors SAMPLE PERIOD {}"
CASES = {
    "select100_8s": (100, "grid", SELECT.format(8192), 12),
    "intel_31s": (54, "intel-lab", SELECT.format(31000), 12),
}


def measure(job: tuple[str, int, str, int]) -> dict[str, Any]:
    name, seed, link_model, after = job
    nodes, topology, sql, epochs = CASES[name]
    config = NetworkConfig(nodes=nodes, topology=topology, seed=seed, link_model=link_model)
    with Network(config) as net:
        experiment = run_experiment(net, [QueryRun(sql)], epochs=epochs, after_stop_epochs=after)
    (outcome,) = experiment.outcomes
    (query,) = compare(result_records(experiment), truth_records(experiment)).queries.values()
    assert isinstance(query, TupleAccuracy) and query.stop is not None
    stop = query.stop
    lags = list(stop.lag_by_node.values())
    return {
        "case": name,
        "seed": seed,
        "yield": query.tuple_yield,
        "max_lag": max(lags) if lags else 0,
        "lags": dict(sorted(collections.Counter(lags).items())),
        "slow_nodes": {n: v for n, v in stop.lag_by_node.items() if v > 2},
        "late_readings": outcome.late_samples,
        "within_2": stop.stopped_within_2,
        "still_sampling": stop.still_sampling,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first", type=int, default=1, help="first seed")
    parser.add_argument("--link-model", default="sinr")
    parser.add_argument("--after", type=int, default=40, help="epochs watched after the stop")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    work = [
        (name, seed, args.link_model, args.after)
        for name in args.cases.split(",")
        for seed in range(args.first, args.first + args.seeds)
    ]
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(measure, work):
            rows.append(row)
            print(
                f"{row['case']:13s} seed {row['seed']:2d} yield {row['yield']:.3f} max lag "
                f"{row['max_lag']:3d} late {row['late_readings']:4d} lags {row['lags']} "
                f"slow {row['slow_nodes']} still {row['still_sampling']}",
                file=sys.stderr,
            )
    for name in args.cases.split(","):
        mine = [r for r in rows if r["case"] == name]
        total: collections.Counter[int] = collections.Counter()
        for r in mine:
            total.update(r["lags"])
        print(
            f"{name}: yield {np.mean([r['yield'] for r in mine]):.3f}, max lag "
            f"{max(r['max_lag'] for r in mine)} (per seed {[r['max_lag'] for r in mine]}), "
            f"late readings {sum(r['late_readings'] for r in mine)}, still sampling "
            f"{sum(len(r['still_sampling']) for r in mine)}, lags {dict(sorted(total.items()))}"
        )
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
