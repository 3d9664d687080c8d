"""Test-suite wiring.

The Spark tests need the ``spark`` extra (pyspark); the tox ``spark`` env has it and
runs only them (``-m spark``). Elsewhere they are not collected at all, rather than
collected and skipped, so a skip never hides a missing dependency where it matters: a
spark env without pyspark collects nothing and fails.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

collect_ignore_glob = (
    [] if importlib.util.find_spec("pyspark") else ["test_spark_*.py", "spark_fixtures.py"]
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--share",
        metavar="K/N",
        help="run only the test files of share K of N: tests/test_*.py in name order, "
        "dealt out in turn (tox.ini: py310, py312 and py313 take one share each, py311 all)",
    )


def suite_files() -> list[str]:
    """The suite's test files, tests/test_*.py, in name order: what the shares deal out."""
    return sorted(path.name for path in TESTS.glob("test_*.py"))


def shares_of(files: list[str], shares: int) -> dict[str, int]:
    """Each test file's share (1..shares): the files are dealt out in name order."""
    return {name: i % shares + 1 for i, name in enumerate(files)}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    share = config.getoption("--share")
    if not share:
        return
    k, _, n = share.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise pytest.UsageError(f"--share takes K/N with 1 <= K <= N, not {share!r}")
    share_by_file = shares_of(suite_files(), int(n))
    kept, dropped = [], []
    for item in items:
        in_share = item.path.parent != TESTS or share_by_file[item.path.name] == int(k)
        (kept if in_share else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
