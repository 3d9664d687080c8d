"""Makes ``format("motebase")`` work in any PySpark 4 session, with no registration.

When a session first looks up a data source name, Spark 4 starts a Python worker that
imports every top-level module whose name starts with ``pyspark_`` and registers each
one's ``DefaultSource`` under its ``name()`` (``pyspark/sql/worker/lookup_data_sources.py``).
This module is that entry point; the source itself is :mod:`motebase.spark.source`.

The worker is the interpreter named by ``PYSPARK_DRIVER_PYTHON`` or ``PYSPARK_PYTHON`` in
the session's environment, else ``python3`` on PATH; only that interpreter's installed
packages are discovered (see spark/README.md).
"""

from __future__ import annotations

import sys

from pyspark.sql.datasource import DataSource

try:
    from motebase.spark.source import MotebaseDataSource as DefaultSource
except ImportError as _exc:
    # The lookup imports every pyspark_* module in one go, and one that raises hides all
    # the others' sources too. So never raise here: register a stand-in that names the
    # real problem when a query uses it.
    _REASON = (
        f"the motebase data source cannot be imported in Spark's Python worker "
        f"({sys.executable}): {_exc}. Install motebase with its spark extra in that "
        "interpreter, or point PYSPARK_PYTHON at the one where it is installed"
    )

    class DefaultSource(DataSource):  # type: ignore[no-redef]
        @classmethod
        def name(cls) -> str:
            return "motebase"

        def __init__(self, options: dict[str, str]) -> None:
            raise ImportError(_REASON)


__all__ = ["DefaultSource"]
