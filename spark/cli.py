"""Subcommands registered with the `mote` host (see pyproject.toml, group motebase.commands).

PySpark is imported inside the command: `mote` must start (and `mote --help` work) in
an environment without the ``spark`` extra, and `mote spark` there says what to install
(spark/errors.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click
from rich.console import Console
from rich.table import Table

from motebase.gateway.cli.params import Duration
from motebase.gateway.cli.signals import sigterm_calls
from motebase.gateway.console import make_console
from motebase.gateway.resultlog import LogCorruptError
from motebase.spark.errors import spark_boundary

if TYPE_CHECKING:
    from motebase.spark.pipeline import BatchProgress
    from motebase.spark.summary import TableSummary

_T = TypeVar("_T")

#: How long `mote spark` waits for the gateway's first query record (the readings schema).
QUERY_RECORD_WAIT_S = 60.0


def _parse_nodes(text: str | None) -> tuple[int | None, int | None]:
    if text is None:
        return None, None
    try:
        left, right = (int(part) for part in text.split(","))
    except ValueError:
        raise click.BadParameter("expected two node ids: LEFT,RIGHT") from None
    return left, right


def spark_interval(seconds: float) -> str:
    """A duration as a Spark interval string (window and watermark lengths): whole
    seconds when it is, else milliseconds, the finest unit Spark's event-time windows
    take."""
    if seconds == int(seconds):
        return f"{int(seconds)} seconds"
    return f"{round(seconds * 1000)} milliseconds"


def _renamed(name: str, value: _T | None, old_name: str, old: _T | None) -> _T | None:
    """The value of an option given under its name or its old one (a hidden alias)."""
    if value is not None and old is not None and value != old:
        raise click.UsageError(f"{name} and {old_name} (its old name) disagree")
    return value if value is not None else old


@click.command("spark")
@click.option(
    "--log",
    "log_dir",
    required=True,
    # Must exist: a mistyped path would otherwise be waited on for a query record.
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The gateway's result log directory (mote query --log DIR).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Parquet output: OUT/<table>, checkpoints in OUT/_checkpoints/<table>.",
)
@click.option(
    "--master",
    default="local[*]",
    show_default=True,
    help="Spark master URL. For a cluster (spark://host:7077, yarn, k8s://...) the log and "
    "OUT must be on a filesystem every executor sees, with motebase installed there.",
)
@click.option(
    "--until-idle",
    type=Duration(positive=True),
    help="Stop once the log has not grown for this long (10s, 2m, 90).",
)
@click.option(
    "--duration", type=Duration(positive=True), help="Stop after this long (30s, 2m, 1h, 90)."
)
@click.option(
    "--positions",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Node positions file, as `mote emulate --positions` reads it (moteid x y, the "
    "Intel-lab mote-locs format) or CSV node_id,x,y.",
)
@click.option(
    "--topology",
    "positions_alias",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    hidden=True,  # the old name of --positions, kept for scripts
)
@click.option("--qid", type=click.IntRange(0, 254), help="Only this query's results.")
@click.option(
    "--query-id",
    "qid_alias",
    type=click.IntRange(0, 254),
    hidden=True,  # the old name of --qid, kept for scripts
)
@click.option(
    "--window",
    type=Duration(positive=True),
    default="1m",
    show_default=True,
    help="Averaging window (event time).",
)
@click.option(
    "--watermark",
    type=Duration(),
    default="30s",
    show_default=True,
    help="Event-time lateness allowed before a window is written.",
)
@click.option("--join/--no-join", default=True, show_default=True, help="Run the window join.")
@click.option("--join-attribute", help="Attribute to join [default: first sensor attribute].")
@click.option("--join-right-attribute", help="Second attribute [default: the same].")
@click.option("--join-nodes", help="LEFT,RIGHT node ids [default: every pair of nodes].")
@click.option(
    "--join-within",
    type=Duration(),
    default="1s",
    show_default=True,
    help="w: join readings at most this far apart in event time (1s, 500ms).",
)
@click.option(
    "--trigger",
    type=Duration(positive=True),
    default="1s",
    show_default=True,
    help="Micro-batch interval (1s, 500ms).",
)
@spark_boundary("spark")
def spark_cmd(
    log_dir: Path,
    out_dir: Path,
    master: str,
    until_idle: float | None,
    duration: float | None,
    positions: Path | None,
    positions_alias: Path | None,
    qid: int | None,
    qid_alias: int | None,
    window: float,
    watermark: float,
    join: bool,
    join_attribute: str | None,
    join_right_attribute: str | None,
    join_nodes: str | None,
    join_within: float,
    trigger: float,
) -> None:
    """Stream the gateway's result log into Parquet with Spark, exactly once.

    Runs until --duration or --until-idle (or Ctrl-C), restartable: a rerun with the
    same --out resumes from its checkpoints.
    """
    from motebase.spark.pipeline import (
        PipelineConfig,
        WindowJoinSpec,
        default_join_attribute,
        has_query_record,
        read_log,
        run_until,
        start_pipeline,
        wait_for_query_record,
    )
    from motebase.spark.session import build_session
    from motebase.spark.sinklog import MovedTableError, check_tables_in_place
    from motebase.spark.summary import summarize

    console = make_console()
    query_id = _renamed("--qid", qid, "--query-id", qid_alias)
    topology = _renamed("--positions", positions, "--topology", positions_alias)
    left_node, right_node = _parse_nodes(join_nodes)
    try:
        check_tables_in_place(
            out_dir, f"remove {out_dir} and rerun; every row of {log_dir} lands in it once"
        )
    except MovedTableError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        if not has_query_record(log_dir):
            console.print(
                f"waiting up to {QUERY_RECORD_WAIT_S:g} s for the gateway's first query "
                f"record in {log_dir}"
            )
        found = wait_for_query_record(log_dir, QUERY_RECORD_WAIT_S)
    except LogCorruptError as exc:
        raise click.ClickException(str(exc)) from None
    if not found:
        raise click.ClickException(f"no query record in {log_dir} after {QUERY_RECORD_WAIT_S}s")
    started = time.monotonic()
    spark = build_session(master)
    console.print(f"Spark {spark.version} ({master}) up in {time.monotonic() - started:.1f}s")

    join_spec = None
    if join:
        attribute = join_attribute or default_join_attribute(
            read_log(spark, log_dir, "readings", query_id, streaming=False)
        )
        if attribute is not None:
            join_spec = WindowJoinSpec(
                attribute, join_within, left_node, right_node, join_right_attribute
            )
    config = PipelineConfig(
        log_dir=log_dir,
        out_dir=out_dir,
        topology=topology,
        window=spark_interval(window),
        watermark=spark_interval(watermark),
        join=join_spec,
        trigger_s=trigger,
        query_id=query_id,
    )
    queries = start_pipeline(spark, config)

    def show(batch: BatchProgress) -> None:
        if batch.rows or batch.batch_id == 0:
            console.print(
                f"[bold]{batch.query:>13}[/] batch {batch.batch_id:<4} {batch.rows:>7} rows "
                f"{batch.duration_ms:>6} ms {batch.rows_per_s:>7.0f}/s  "
                f"offset {max(batch.end_offsets, default=0)}"
            )

    terminated = threading.Event()
    try:
        # SIGTERM while streaming ends it as Ctrl-C does: the summary, exit 0.
        with sigterm_calls(terminated.set):
            # Said once SIGTERM is handled: a supervisor that waits for it may stop us at once.
            console.print(f"streaming {', '.join(q.name for q in queries)} from {log_dir}")
            console.file.flush()
            run_until(
                queries,
                log_dir,
                duration_s=duration,
                idle_s=until_idle,
                on_batch=show,
                stop=terminated,
            )
    except KeyboardInterrupt:
        terminated.set()
    except LogCorruptError as exc:  # the log's end became unreadable while streaming
        raise click.ClickException(str(exc)) from None
    if terminated.is_set():
        console.print("interrupted; checkpoints are consistent, rerun to resume")
    print_summary(console, summarize(spark, out_dir))


def print_summary(console: Console, summaries: Sequence[TableSummary]) -> None:
    if not summaries:
        console.print("no Parquet output yet")
        return
    console.print(f"Parquet tables in {summaries[0].path.parent}")
    table = Table()
    for column in ("table", "rows", "queries", "nodes", "first event", "last event"):
        table.add_column(column)
    for s in summaries:
        table.add_row(
            s.table,
            str(s.rows),
            ",".join(map(str, s.queries)),
            "" if s.nodes is None else str(s.nodes),
            (s.first_event or "")[:19],
            (s.last_event or "")[:19],
        )
    console.print(table)


COMMANDS: list[click.Command] = [spark_cmd]
