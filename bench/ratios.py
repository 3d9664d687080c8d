"""What every side-by-side benchmark reports: rates of interleaved runs, best and median,
and the JSON report written where the stage's results live (bench/results/<stage>.json)."""

from __future__ import annotations

import argparse
import json
import platform
import statistics
from pathlib import Path
from typing import Any


def rates(count: int, seconds: list[float], unit: str) -> dict[str, float]:
    """``count`` items in each run of ``seconds``: the best and the median rate."""
    return {
        f"best_{unit}_per_s": round(count / min(seconds)),
        f"median_{unit}_per_s": round(count / statistics.median(seconds)),
    }


def median_ratio(measured: list[float], baseline: list[float]) -> float:
    """The measured stage's speed over the baseline's, from the median run times."""
    return round(statistics.median(baseline) / statistics.median(measured), 4)


def arguments(doc: str, size: str, default: int, results: Path) -> argparse.Namespace:
    """``--SIZE N --repeat K --out PATH``, as every benchmark takes them."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(f"--{size}", type=int, default=default)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each")
    parser.add_argument("--out", type=Path, default=results)
    return parser.parse_args()


def write_report(out: Path, report: dict[str, Any]) -> None:
    report = {**report, "machine": platform.machine(), "python": platform.python_version()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
