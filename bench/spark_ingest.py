"""Spark ingest throughput: the motebase source into Parquet, against plain spark.read.json.

Issue 14 measures the readings path from the gateway's result log into Parquet, in
``local[2]``, side by side with plain PySpark reading the same rows. The input is one
result log of N readings (one query, 100 nodes, three 2-byte attributes), written with
the gateway's own ResultLog, and the same readings as a JSON-lines file. Two runs, each
into a fresh directory, interleaved:

  motebase  readStream.format("motebase") -> date column -> Parquet file sink with a
            checkpoint, trigger availableNow: the pipeline's readings sink, once
  plain     spark.read.schema(...).json(the JSON lines) -> date column -> Parquet

    python bench/spark_ingest.py                  # 1,000,000 readings, 3 runs of each
    python bench/spark_ingest.py --rows 2000 --repeat 1 --out /tmp/si.json

The Spark session starts once, before the first run; its start is not timed.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from ratios import arguments, children_cpu_s, median_ratio, rates, write_report
from spark_baseline import plain_readings

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "spark_ingest.json"
NODES = 100
FIELDS = [{"name": "nodeid", "type": 4}, {"name": "light", "type": 4}, {"name": "temp", "type": 4}]


def query_record() -> dict:
    return {
        "kind": "query",
        "query_id": 1,
        "sql": "SELECT nodeid, light, temp FROM sensors SAMPLE PERIOD 1s",
        "epoch_ms": 1024,
        "fields": FIELDS,
        "aggregates": [],
        "group_by": None,
        "start_time": 1_700_000_000.0,
    }


def reading(i: int) -> dict:
    epoch, node = divmod(i, NODES)
    t = 1_700_000_000.0 + epoch * 1.024
    return {
        "kind": "reading",
        "query_id": 1,
        "epoch": epoch + 1,
        "node_id": node,
        "epoch_time": t,
        "receive_time": t + 0.25,
        "node_time": None,
        "values": {"nodeid": node, "light": 400 + (i * 7) % 300, "temp": 500 + i % 50},
    }


def write_inputs(rows: int, log_dir: Path, json_path: Path) -> None:
    from motebase.gateway.resultlog import ResultLog

    with ResultLog(log_dir) as log, json_path.open("w") as lines:
        log.append_batch([query_record()])
        for start in range(0, rows, 10_000):
            batch = [reading(i) for i in range(start, min(rows, start + 10_000))]
            log.append_batch(batch)
            lines.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in batch)


def run_motebase(spark, log_dir: Path, out: Path) -> float:
    from motebase.spark.pipeline import read_log, with_date

    start = time.perf_counter()
    readings = with_date(read_log(spark, log_dir, "readings"), "epoch_time")
    query = (
        readings.writeStream.format("parquet")
        .option("path", str(out / "readings"))
        .option("checkpointLocation", str(out / "checkpoint"))
        .partitionBy("query_id", "date")
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    return time.perf_counter() - start


def run_plain(spark, json_path: Path, out: Path) -> float:
    from motebase.spark.pipeline import with_date

    schema = (
        "kind STRING, query_id INT, epoch INT, node_id INT, epoch_time DOUBLE, "
        "receive_time DOUBLE, node_time LONG, values STRUCT<nodeid: INT, light: INT, temp: INT>"
    )
    start = time.perf_counter()
    frame = spark.read.schema(schema).json(str(json_path))
    readings = plain_readings(frame)
    with_date(readings, "epoch_time").write.partitionBy("query_id", "date").parquet(
        str(out / "readings")
    )
    return time.perf_counter() - start


def parquet_rows(spark, out: Path) -> int:
    return spark.read.parquet(str(out / "readings")).count()


def main() -> None:
    args = arguments(__doc__, "rows", 1_000_000, RESULTS)
    from motebase.spark.session import build_session

    spark = build_session("local[2]", app_name="motebase-bench-ingest")
    spark.sparkContext.setLogLevel("ERROR")
    times: dict[str, list[float]] = {"motebase": [], "plain": []}
    cpu: dict[str, list[float]] = {"motebase": [], "plain": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            log_dir, json_path = work / "log", work / "readings.jsonl"
            write_inputs(args.rows, log_dir, json_path)
            for run in range(args.repeat):
                for name, runner, source in (
                    ("motebase", run_motebase, log_dir),
                    ("plain", run_plain, json_path),
                ):
                    out = work / f"{name}-{run}"
                    used = children_cpu_s()
                    times[name].append(runner(spark, source, out))
                    cpu[name].append(children_cpu_s() - used)
                    assert parquet_rows(spark, out) == args.rows
    finally:
        spark.stop()
    report = {
        "rows": args.rows,
        "repeat": args.repeat,
        "master": "local[2]",
        "motebase": rates(args.rows, times["motebase"], "rows"),
        "plain_json": rates(args.rows, times["plain"], "rows"),
        "motebase_over_plain_median": median_ratio(times["motebase"], times["plain"]),
        # CPU seconds of Spark's processes (JVM, Python workers) per run: what a run
        # costs whatever else the machine runs.
        "motebase_cpu_s": [round(c, 2) for c in cpu["motebase"]],
        "plain_cpu_s": [round(c, 2) for c in cpu["plain"]],
        "motebase_over_plain_cpu_median": median_ratio(cpu["motebase"], cpu["plain"]),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    write_report(args.out, report)


if __name__ == "__main__":
    main()
