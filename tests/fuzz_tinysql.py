"""Grammar fuzzing of TinySQL with a large budget (``make fuzz``): generated bad queries
(grammar queries with at least one mutation) through parse -> plan -> encode -> explain.

    python tests/fuzz_tinysql.py --cases 10000 [--seed N]

Every query must compile or be refused with a TinySQLError pointing inside it; anything
else is a traceback. Prints the counts, the first few tracebacks, and exits 1 if any.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
import traceback
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tinysql_grammar import check_no_traceback, sql_strings

SHOWN = 5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="queries to generate")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed")
    args = parser.parse_args()
    outcomes: collections.Counter[str] = collections.Counter()
    tracebacks: list[tuple[str, str]] = []

    @settings(
        max_examples=args.cases,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(sql=sql_strings(at_least_mutations=1))
    def run(sql: str) -> None:
        try:
            outcomes["compiled" if check_no_traceback(sql) else "refused"] += 1
        except Exception as exc:  # counted, not raised: the run goes on to the end
            outcomes[f"traceback {type(exc).__name__}"] += 1
            tracebacks.append((sql, traceback.format_exc()))

    if args.seed is not None:
        run = seed(args.seed)(run)
    started = time.monotonic()
    run()
    elapsed = time.monotonic() - started
    total = sum(outcomes.values())
    failed = len(tracebacks)
    print(f"{total} queries in {elapsed:.1f} s: {dict(sorted(outcomes.items()))}")
    print(f"tracebacks: {failed}")
    for sql, text in tracebacks[:SHOWN]:
        print(f"--- {sql[:300]!r}\n{text}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
