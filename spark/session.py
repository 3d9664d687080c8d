"""The SparkSession motebase runs in: embedded (``local[*]``) unless given a master URL.

Tuned for small, fast-starting jobs on a laptop: two shuffle partitions, no UI, no
console progress bars, WARN logging, UTC session time (Parquet date partitions and
event-time windows then do not depend on the host's zone). Nothing is downloaded:
the source is pure Python and ships with motebase.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from motebase.spark.source import MotebaseDataSource

DEFAULT_MASTER = "local[*]"
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")


def build_session(master: str = DEFAULT_MASTER, app_name: str = "motebase") -> SparkSession:
    """A session in which ``format("motebase")`` works.

    For a cluster pass its URL (``spark://host:7077``, ``yarn``, ``k8s://...``); the
    executors then need motebase installed and the result log on a shared filesystem.
    """
    # Python workers (which run the source's readers) must be this interpreter, the one
    # that can import motebase, not whatever `python3` is first on PATH.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J_CONFIG}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    register_source(spark)
    return spark


def register_source(spark: SparkSession) -> None:
    """Register the source unless Spark found it by itself (pyspark_motebase, installed
    with motebase): registering a name Spark already knows is an error. The explicit
    registration covers running from a source tree that the workers cannot import
    pyspark_motebase from."""
    try:
        spark.dataSource.register(MotebaseDataSource)
    except AnalysisException as exc:
        if exc.getCondition() != "DATA_SOURCE_ALREADY_EXISTS":
            raise
