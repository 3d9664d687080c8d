"""`mote sweep SPEC.toml --out DIR`: a grid of emulations spread over Spark (issue 15, §1).

Each point of the spec (motebase.emu.sweep) runs as one Spark task: the emulator is
in-process and deterministic per seed, so a task needs nothing but motebase on its
executor. The rows, one a point, go to DIR/parquet/sweep; DIR/summary.json holds each
group of points that differ only by seed, with the mean and median of their scores. A
point that fails is a row with its ``error``; the sweep goes on.

Locally it runs in ``local[*]``. On a cluster, ship the wheel to the executors::

    spark-submit --master spark://host:7077 --py-files motebase-0.1.0-*.whl \\
        $(python -c 'import motebase.spark.sweep as s; print(s.__file__)') SPEC.toml --out DIR

(the executors also need motebase's dependencies, numpy and cffi, installed).
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from motebase.emu.sweep import METRICS, SweepSpec, SweepSpecError, load_spec, run_point
from motebase.spark.errors import spark_boundary

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import DataType, StructType

#: Scores summarised over the seeds of each group.
SCORES = ("tuple_yield", "exact_fraction", "count_median", "held_rms", "sampled", "wall_s")


def _column_type(values: Sequence[Any]) -> DataType:
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return BooleanType()
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return LongType()
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return DoubleType()
    return StringType()


def sweep_schema(spec: SweepSpec, points: Sequence[dict[str, Any]]) -> StructType:
    """The parameters, typed by their values, then the scores (emu/sweep.py, METRICS)."""
    from pyspark.sql.types import (
        BooleanType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    metric_types: dict[str, DataType] = {
        "error": StringType(),
        "kind": StringType(),
        "sound": BooleanType(),
        "rows": LongType(),
        "rate_changes": LongType(),
        "accuracy": StringType(),
        "series": StringType(),
        "samples": StringType(),
    }
    fields = [StructField("point", LongType(), False)]
    fields += [StructField(k, _column_type([p.get(k) for p in points])) for k in spec.keys]
    fields += [StructField(m, metric_types.get(m, DoubleType())) for m in METRICS]
    return StructType(fields)


def _typed(row: dict[str, Any], schema: StructType) -> tuple[Any, ...]:
    from pyspark.sql.types import DoubleType, StringType

    out = []
    for f in schema.fields:
        value = row.get(f.name)
        if value is not None and isinstance(f.dataType, DoubleType):
            value = float(value)
        elif value is not None and isinstance(f.dataType, StringType):
            value = value if isinstance(value, str) else json.dumps(value)
        out.append(value)
    return tuple(out)


def run_points(
    spark: SparkSession,
    points: Sequence[dict[str, Any]],
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every point as one Spark task; the rows in point order. ``progress(done, total)``
    is called as tasks finish."""
    sc = spark.sparkContext
    indexed = [{**p, "point": i} for i, p in enumerate(points)]
    job = sc.parallelize(indexed, numSlices=max(1, len(indexed)))
    result: list[list[dict[str, Any]]] = []
    failure: list[BaseException] = []

    def collect() -> None:
        try:
            result.append(job.map(run_point).collect())  # a row keeps its point's "point"
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    group = f"motebase-sweep-{id(job)}"
    sc.setJobGroup(group, "mote sweep")
    worker = threading.Thread(target=collect, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.5)
        if progress is not None:
            progress(_tasks_done(spark, group), len(indexed))
    if failure:
        raise failure[0]
    return sorted(result[0], key=lambda r: r["point"])


def _tasks_done(spark: SparkSession, group: str) -> int:
    tracker = spark.sparkContext.statusTracker()
    done = 0
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job is not None else ():
            stage = tracker.getStageInfo(stage_id)
            done += stage.numCompletedTasks if stage is not None else 0
    return done


def summarize(spec: SweepSpec, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Points, failures, and per group of points that differ only by seed: how many, and
    the mean and median of each score."""
    keys = [k for k in spec.keys if k != "seed"]
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        label = json.dumps({k: row.get(k) for k in keys}, sort_keys=True)
        groups.setdefault(label, []).append(row)
    out = []
    for label, members in groups.items():
        entry: dict[str, Any] = {"params": json.loads(label), "points": len(members)}
        entry["failed"] = sum(1 for m in members if m["error"] is not None)
        for score in SCORES:
            values = [m[score] for m in members if m.get(score) is not None]
            if values:
                entry[score] = {
                    "mean": statistics.mean(values),
                    "median": statistics.median(values),
                }
        out.append(entry)
    failed = [r for r in rows if r["error"] is not None]
    return {
        "points": len(rows),
        "failed": len(failed),
        "errors": {str(r["point"]): r["error"] for r in failed},
        "groups": out,
    }


def write_sweep(
    spark: SparkSession, spec: SweepSpec, rows: Sequence[dict[str, Any]], out: Path
) -> Path:
    """The rows as Parquet at out/parquet/sweep (replacing an earlier sweep's), and
    out/summary.json; returns the Parquet directory."""
    schema = sweep_schema(spec, rows)
    frame = spark.createDataFrame([_typed(r, schema) for r in rows], schema)
    target = out / "parquet" / "sweep"
    frame.coalesce(1).write.mode("overwrite").parquet(str(target))
    (out / "summary.json").write_text(json.dumps(summarize(spec, rows), indent=2) + "\n")
    return target


@click.command("sweep")
@click.argument(
    "spec_path", metavar="SPEC", type=click.Path(path_type=Path, dir_okay=False, exists=True)
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Directory for parquet/sweep (one row a point) and summary.json.",
)
@click.option(
    "--master",
    default="local[*]",
    show_default=True,
    help="Spark master URL (the executors need motebase installed: module docstring).",
)
@spark_boundary("sweep")
def sweep_cmd(spec_path: Path, out: Path, master: str) -> None:
    """Run every point of a sweep SPEC (TOML: fixed keys, and a [grid] of lists) as one
    emulation in a Spark task, and write one row a point with its accuracy scores."""
    from motebase.gateway.console import make_console
    from motebase.spark.session import build_session

    try:
        spec = load_spec(spec_path)
    except SweepSpecError as exc:
        raise click.BadParameter(str(exc), param_hint="SPEC") from None
    points = spec.points()
    console = make_console(stderr=True)
    started = time.monotonic()
    with console.status(f"starting Spark ({master})") as status:
        spark = build_session(master, app_name="motebase-sweep")
        try:
            rows = run_points(
                spark, points, lambda done, total: status.update(f"{done}/{total} points run")
            )
            target = write_sweep(spark, spec, rows, out)
        finally:
            spark.stop()
    failed = sum(1 for r in rows if r["error"] is not None)
    console.print(
        f"{len(rows)} points ({failed} failed) in {time.monotonic() - started:.1f} s: "
        f"{target}, {out / 'summary.json'}"
    )
    for row in rows:
        if row["error"] is not None:
            console.print(f"[red]point {row['point']}[/]: {row['error']}")


COMMANDS: list[click.Command] = [sweep_cmd]
