"""The differential test with a large budget (``make fuzz``): keeps looking for a case whose
answers differ from the ground truth, shrinks it, and records it in
data/differential_regressions.json, which every ``make test`` replays.

    python tests/fuzz_differential.py --cases 500 [--lossy] [--seed N]

Prints how many cases ran and the shrunk counterexamples it recorded.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, find, settings
from hypothesis.errors import NoSuchExample

sys.path.insert(0, str(Path(__file__).resolve().parent))

from differential import (
    Case,
    cases,
    exactness_failures,
    record_regression,
    run_case,
    soundness_failures,
)


def failures(case: Case) -> list[str]:
    report = run_case(case)
    if case.lossless:
        return exactness_failures(report, case.topology)
    return soundness_failures(report)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300, help="cases to run in all")
    parser.add_argument("--lossy", action="store_true", help="the default radio (soundness)")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed")
    args = parser.parse_args()
    strategy = cases(lossless=not args.lossy, max_nodes=100 if not args.lossy else 49)
    ran, found, started = 0, 0, time.monotonic()

    def failing(case: Case) -> bool:
        nonlocal ran
        ran += 1
        if ran % 25 == 0:
            print(f"{ran} cases, {time.monotonic() - started:.0f} s", file=sys.stderr)
        return bool(failures(case))

    remaining = args.cases
    rng = random.Random(args.seed)
    while remaining > 0:
        budget = settings(
            max_examples=remaining,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        before = ran
        try:
            case = find(strategy, failing, settings=budget, random=rng)
        except NoSuchExample:
            break
        found += 1
        record_regression(case)
        print(f"counterexample: {case}", file=sys.stderr)
        for line in failures(case):
            print(f"  {line}", file=sys.stderr)
        remaining -= max(1, ran - before)
    print(f"{ran} cases run, {found} counterexamples recorded ({time.monotonic() - started:.0f} s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
