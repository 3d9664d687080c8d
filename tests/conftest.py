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


def share_of(name: str, files: list[str], shares: int) -> int:
    """The share (1..shares) a test file belongs to: files are dealt out in name order."""
    return files.index(name) % shares + 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    share = config.getoption("--share")
    if not share:
        return
    k, _, n = share.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise pytest.UsageError(f"--share takes K/N with 1 <= K <= N, not {share!r}")
    files = suite_files()
    kept, dropped = [], []
    for item in items:
        in_share = item.path.parent != TESTS or share_of(item.path.name, files, int(n)) == int(k)
        (kept if in_share else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
