"""Spark live latency: a reading appended to the result log until it is visible in Parquet.

Issue 14 asks for epoch-to-Parquet latency p50 <= 3 s at 50 rows/s. A writer thread
appends one epoch of 50 readings a second (one query, 50 nodes, three attributes) with
the gateway's own ResultLog, as the gateway does; a watcher polls the readings sink's
``_spark_metadata`` log every 50 ms, and a row is visible when the sink's commit that
lists its Parquet file appears (what ``spark.read.parquet`` honours). Latency is that
moment minus the moment ``append_batch`` returned (the record committed). Runs,
interleaved, each for ``--seconds`` into a fresh directory, 1 s trigger:

  pipeline  the live pipeline (``mote spark``'s start_pipeline: readings, aggregates
            and node_averages, three streaming queries); the readings table's latency
  readings  the motebase source into the readings Parquet sink alone
  plain     plain PySpark: readStream.json of a directory the writer drops one
            JSON-lines file per epoch into -> date column -> Parquet sink

    python bench/spark_latency.py                     # 30 s per run, 3 runs of each
    python bench/spark_latency.py --seconds 5 --repeat 1 --out /tmp/sl.json

Quantiles are over the rows of every run of a case, after each run's first
``WARMUP_S`` seconds (Spark compiles and starts its Python workers then), and over all
rows. The Spark session starts once, before the first run.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ratios import arguments, write_report
from spark_baseline import plain_readings

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "spark_latency.json"
NODES = 50  # one epoch a second: 50 rows/s
WARMUP_S = 10.0
POLL_S = 0.05
PLAIN_SCHEMA = (
    "log_offset LONG, query_id INT, epoch INT, node_id INT, epoch_time DOUBLE, "
    "receive_time DOUBLE, values STRUCT<nodeid: INT, light: INT, temp: INT>"
)


def epoch_rows(epoch: int, now: float) -> list[dict]:
    from spark_ingest import reading

    rows = [reading(epoch * NODES + node) for node in range(NODES)]
    for row in rows:  # event time now, so that the pipeline's windows close as it runs
        row["epoch_time"], row["receive_time"] = now, now
    return rows


class Writer(threading.Thread):
    """Appends one epoch a second; ``appended`` maps each row's key to when it was
    committed (to the log, or renamed into the plain source's directory)."""

    def __init__(self, append: Callable[[int, list[dict]], None], seconds: float) -> None:
        super().__init__(daemon=True)
        self.append = append
        self.seconds = seconds
        self.appended: dict[int, float] = {}
        self.started = 0.0

    def run(self) -> None:
        self.started = time.monotonic()
        epoch = 0
        while (due := self.started + epoch) < self.started + self.seconds:
            time.sleep(max(0.0, due - time.monotonic()))
            rows = epoch_rows(epoch, time.time())
            self.append(epoch, rows)
            done = time.monotonic()
            self.appended.update((epoch * NODES + i, done) for i in range(len(rows)))
            epoch += 1


def log_appender(log_dir: Path) -> tuple[Callable[[int, list[dict]], None], Callable[[], None]]:
    from spark_ingest import query_record

    from motebase.gateway.resultlog import ResultLog

    log = ResultLog(log_dir)
    log.append_batch([query_record()])  # offset 0; reading i is at offset i + 1
    return (lambda epoch, rows: log.append_batch(rows)), log.close


def json_appender(in_dir: Path) -> Callable[[int, list[dict]], None]:
    in_dir.mkdir(parents=True)

    def append(epoch: int, rows: list[dict]) -> None:
        # Written beside, then renamed in: the file source must never see half a file.
        tmp = in_dir.parent / f"epoch-{epoch}.tmp"
        text = "".join(
            json.dumps({**row, "log_offset": epoch * NODES + i + 1}) + "\n"
            for i, row in enumerate(rows)
        )
        tmp.write_text(text)
        tmp.rename(in_dir / f"epoch-{epoch:06d}.json")

    return append


def visible_times(sink: Path, seen: dict[int, float], files: set[str]) -> None:
    """Record, for every row in a Parquet file the sink committed since the last call,
    now as the moment it became visible (keyed by log offset - 1: the reading's index)."""
    import pyarrow.parquet as pq

    from motebase.spark.sinklog import batch_paths, sink_batches

    now = time.monotonic()
    for batch in sink_batches(sink):
        if batch.name in files:
            continue
        files.add(batch.name)
        for path in batch_paths(batch):
            for offset in pq.read_table(path, columns=["log_offset"])["log_offset"].to_pylist():
                seen.setdefault(offset - 1, now)


def run_case(spark, case: str, work: Path, seconds: float) -> dict[str, list[float]]:
    """One run of ``case``; the latencies of its rows, all and after the warm-up."""
    from motebase.spark.pipeline import (
        PipelineConfig,
        read_log,
        start_parquet_sink,
        start_pipeline,
        with_date,
    )

    work.mkdir()
    config = PipelineConfig(log_dir=work / "log", out_dir=work / "out", trigger_s=1.0)
    close = None
    if case == "plain":
        append = json_appender(work / "in")
        frame = spark.readStream.schema(PLAIN_SCHEMA).json(str(work / "in"))
        queries = [
            start_parquet_sink(
                with_date(plain_readings(frame, "log_offset"), "epoch_time"),
                config,
                "readings",
                ["query_id", "date"],
            )
        ]
    else:
        append, close = log_appender(config.log_dir)
        if case == "pipeline":
            queries = start_pipeline(spark, config)
        else:
            readings = with_date(read_log(spark, config.log_dir, "readings"), "epoch_time")
            queries = [start_parquet_sink(readings, config, "readings", ["query_id", "date"])]
    writer = Writer(append, seconds)
    writer.start()
    seen: dict[int, float] = {}
    files: set[str] = set()
    try:
        # The last rows' grace. It ends as soon as every row is seen, so it costs nothing
        # when Spark keeps up; 30 s was too short for a pipeline starting next to another
        # tox env's tests (CI, stop 39: rows never became visible).
        deadline = time.monotonic() + seconds + 120.0
        while time.monotonic() < deadline:
            visible_times(config.table_dir("readings"), seen, files)
            if not writer.is_alive() and len(seen) >= len(writer.appended):
                break
            time.sleep(POLL_S)
    finally:
        for query in queries:
            query.stop()
        if close is not None:
            close()
    writer.join()
    missing = set(writer.appended) - set(seen)
    assert not missing, f"{case}: {len(missing)} rows never became visible"
    latencies = {key: seen[key] - at for key, at in writer.appended.items()}
    warm = [
        latency
        for key, latency in latencies.items()
        if writer.appended[key] - writer.started >= min(WARMUP_S, seconds / 2)
    ]
    return {"all": list(latencies.values()), "warm": warm}


def quantiles(latencies: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(latencies, n=20, method="inclusive")
    return {
        "rows": len(latencies),
        "p50_s": round(statistics.median(latencies), 3),
        "p95_s": round(cuts[18], 3),
        "max_s": round(max(latencies), 3),
    }


CASES = ("pipeline", "readings", "plain")


def main() -> None:
    args = arguments(__doc__, "seconds", 30, RESULTS, cases=",".join(CASES))
    cases = args.cases.split(",")
    from motebase.spark.session import build_session

    spark = build_session("local[2]", app_name="motebase-bench-latency")
    spark.sparkContext.setLogLevel("ERROR")
    runs: dict[str, dict[str, list[float]]] = {case: {"all": [], "warm": []} for case in cases}
    medians: dict[str, list[float]] = {case: [] for case in cases}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for run in range(args.repeat):
                for case in cases:
                    found = run_case(spark, case, Path(tmp) / f"{case}-{run}", args.seconds)
                    for part in ("all", "warm"):
                        runs[case][part] += found[part]
                    medians[case].append(statistics.median(found["warm"]))
    finally:
        spark.stop()
    report = {
        "seconds": args.seconds,
        "repeat": args.repeat,
        "rows_per_s": NODES,
        "trigger_s": 1.0,
        "master": "local[2]",
        "warmup_s": WARMUP_S,
        "load_average_1m": round(os.getloadavg()[0], 2),
        **{
            case: {
                "warm": quantiles(runs[case]["warm"]),
                "all": quantiles(runs[case]["all"]),
                "run_p50_s": [round(m, 3) for m in medians[case]],
            }
            for case in cases
        },
    }
    write_report(args.out, report)


if __name__ == "__main__":
    main()
