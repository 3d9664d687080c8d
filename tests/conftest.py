"""Test-suite wiring.

The Spark tests need the ``spark`` extra (pyspark); the tox ``spark`` env has it and
runs only them (``-m spark``). Elsewhere they are not collected at all, rather than
collected and skipped, so a skip never hides a missing dependency where it matters: a
spark env without pyspark collects nothing and fails.
"""

from __future__ import annotations

import importlib.util

collect_ignore_glob = (
    [] if importlib.util.find_spec("pyspark") else ["test_spark_*.py", "spark_fixtures.py"]
)
