"""What every side-by-side benchmark reports: rates of interleaved runs, best and median,
and the JSON report written where the stage's results live (bench/results/<stage>.json)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def rates(count: int, seconds: list[float], unit: str) -> dict[str, float]:
    """``count`` items in each run of ``seconds``: the best and the median rate."""
    return {
        f"best_{unit}_per_s": round(count / min(seconds)),
        f"median_{unit}_per_s": round(count / statistics.median(seconds)),
    }


def median_ratio(measured: list[float], baseline: list[float]) -> float:
    """The measured stage's speed over the baseline's, from the median run times."""
    return round(statistics.median(baseline) / statistics.median(measured), 4)


def arguments(
    doc: str, size: str, default: int, results: Path, cases: str | None = None
) -> argparse.Namespace:
    """``--SIZE N --repeat K --out PATH``, as every benchmark takes them; ``--cases A,B``
    (default ``cases``) where a benchmark can run some of its cases only."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(f"--{size}", type=int, default=default)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each")
    parser.add_argument("--out", type=Path, default=results)
    if cases is not None:
        parser.add_argument("--cases", default=cases, help="comma-separated, in run order")
    return parser.parse_args()


def seeded_cases(doc: str, cases: list[str], results: Path) -> tuple[argparse.Namespace, list[str]]:
    """``--cases A,B --seeds N --epochs E --jobs J --link-model M --out PATH``, as the
    benchmarks that run emulated networks over seeds take them, and the case names asked
    for (an unknown one is an error that lists the known)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(cases), help="comma-separated case names")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=None, help="override every case's")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--link-model", default=None, help="a radio other than the default")
    parser.add_argument("--out", type=Path, default=results)
    args = parser.parse_args()
    names = [n for n in args.cases.split(",") if n]
    unknown = sorted(set(names) - set(cases))
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(cases)}")
    return args, names


def _measure_job(job: tuple[Callable[..., T], str, int, int | None, str | None]) -> T:
    measure, *asked = job
    return measure(*asked)


def measure_over_seeds(
    measure: Callable[[str, int, int | None, str | None], T],
    names: Sequence[str],
    seeds: int,
    epochs: int | None,
    jobs: int,
    link_model: str | None,
    show: Callable[[T], str],
) -> dict[str, dict[int, T]]:
    """``measure(case, seed, epochs, link_model)`` for every case named and seeds 1..N, in
    ``jobs`` processes (``measure`` a module-level function, which they import), each
    result shown on stderr as it comes: by case, then by seed."""
    work = [(measure, n, s, epochs, link_model) for n in names for s in range(1, seeds + 1)]
    results: dict[str, dict[int, T]] = {name: {} for name in names}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for (_, name, seed, _, _), got in zip(work, pool.map(_measure_job, work), strict=True):
            results[name][seed] = got
            print(f"{name:14s} seed {seed:3d}  {show(got)}", file=sys.stderr)
    return results


def write_report(out: Path, report: dict[str, Any]) -> None:
    report = {**report, "machine": platform.machine(), "python": platform.python_version()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


def children_cpu_s() -> float:
    """CPU seconds used so far by this process's descendants (Spark's JVM, its Python
    workers), those alive and those they reaped; 0.0 where /proc is not there.

    On a shared machine a run's wall time depends on what else runs; the CPU time it
    needs does much less, so a benchmark reports both."""
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # gone since the listing
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry.name)] = int(fields[1])
        used[int(entry.name)] = sum(int(x) for x in fields[11:15]) / tick  # u, s, cu, cs
    tree, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - tree
        tree |= frontier
    return sum(used[pid] for pid in tree)
