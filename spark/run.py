"""`mote run`: the main job, end to end: emulated network → gateway → result log → Spark.

This is the one module that composes all three layers (design.md §3). Each keeps its own
boundary: the emulator serves its root's UART on a pty exactly as a Mica2 on a MIB510
would, the gateway drives that pty through its ordinary serial transport and appends
rows to the durable result log, and Spark streams only that log into Parquet.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from motebase.emu.cli import require_emulator
from motebase.emu.topology import DEFAULT_LINK_MODEL
from motebase.gateway.cli.params import Duration, platform_option
from motebase.gateway.console import make_console
from motebase.spark.errors import spark_boundary

if TYPE_CHECKING:
    from collections.abc import Sequence

    from motebase.emu.bridge import SerialBridge
    from motebase.gateway.assembly import Row
    from motebase.gateway.session import RegisteredQuery
    from motebase.spark.pipeline import BatchProgress

DEFAULT_QUERY = "SELECT nodeid, light, temp FROM sensors SAMPLE PERIOD 2s"
#: Virtual time the network runs (as fast as it can) before the query, so that the
#: routing tree has formed when the first query part arrives.
TREE_FORMATION_MS = 30_000.0
#: After the gateway stops, how long the log must stay unchanged (with Spark caught up
#: to its end) before the streams are stopped.
DRAIN_IDLE_S = 3.0
STATUS_EVERY_S = 5.0


@dataclass
class GatewayProgress:
    """What the gateway thread reports to the status line (updated by one writer)."""

    query_id: int | None = None
    rows: int = 0
    last_epoch: int = 0
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)
    #: time.monotonic() when the query started and when the gateway stopped: the span
    #: the rows were delivered in, the rate's time base.
    started: float | None = None
    stopped: float | None = None

    # A RowSink: counts what goes into the log.
    def start(self, query: RegisteredQuery) -> None:
        self.query_id = query.query_id
        self.started = time.monotonic()

    def rate(self) -> float:
        """Rows per second of the query's run so far (0 before its start)."""
        if self.started is None:
            return 0.0
        end = self.stopped if self.stopped is not None else time.monotonic()
        return self.rows / (end - self.started) if end > self.started else 0.0

    def write(self, rows: Sequence[Row]) -> None:
        self.rows += len(rows)
        self.last_epoch = max([self.last_epoch, *(row.epoch for row in rows)])

    def close(self) -> None:
        pass


def _start_network(
    nodes: int, topology: str, platform: str, seed: int, link_model: str
) -> SerialBridge:
    from motebase.emu import Network, NetworkConfig, serve

    config = NetworkConfig(
        nodes=nodes, topology=topology, platform=platform, seed=seed, link_model=link_model
    )
    net = Network(config)
    net.run_for(TREE_FORMATION_MS)
    return serve(net, pty=True, realtime=True)


def _run_gateway(
    port: str, sql: str, log_dir: Path, duration_s: float, progress: GatewayProgress
) -> None:
    """The gateway, exactly as `mote query SQL --port PTY --log DIR` runs it."""
    from motebase.gateway.plan import compile_query
    from motebase.gateway.resultlog import ResultLog
    from motebase.gateway.session import QuerySession, RunLimits, run_query
    from motebase.gateway.sinks import ResultLogSink
    from motebase.gateway.transport import open_link

    try:
        session = QuerySession(open_link(port, "mica2", None))
        try:
            sinks = [ResultLogSink(ResultLog(log_dir)), progress]
            run_query(session, compile_query(sql), sql, sinks, RunLimits(duration_s=duration_s))
        finally:
            session.close()
    except BaseException as exc:  # reported by the main thread, which owns the console
        progress.error = exc
    finally:
        progress.stopped = time.monotonic()
        progress.done.set()


def _status_line(bridge: SerialBridge, gateway: GatewayProgress, started: float) -> str:
    # The rate is over the gateway's own run, not since Spark streams: the query may
    # have run (and even ended) before the streams started.
    elapsed = time.monotonic() - started
    virtual_s = bridge.net.now_ms / 1000.0
    return (
        f"[dim]{elapsed:6.0f}s[/] network t={virtual_s:7.1f}s  "
        f"gateway query {gateway.query_id} epoch {gateway.last_epoch}: "
        f"{gateway.rows} rows ({gateway.rate():.1f}/s)"
    )


def _show_batch(console: Console, batch: BatchProgress) -> None:
    if batch.rows:
        console.print(
            f"[dim]spark[/] {batch.query:>13} batch {batch.batch_id:<4} {batch.rows:>6} rows "
            f"in {batch.duration_ms} ms"
        )


@click.command("run")
@click.option(
    "--nodes",
    type=click.IntRange(2, 10_000),
    default=25,
    show_default=True,
    help="Network size, the basestation (node 0) included.",
)
@click.option(
    "--topology",
    type=click.Choice(["grid", "random"]),
    default="grid",
    show_default=True,
    help="Node layout of the emulated network (see `mote emulate --help`).",
)
@platform_option("Mote platform of the emulated network.")
@click.option(
    "--seed",
    type=int,
    default=1,
    show_default=True,
    help="Seed of the emulated network's random draws: same seed, same network.",
)
@click.option(
    "--link-model",
    type=click.Choice(["logistic", "sinr", "disc"]),
    default=DEFAULT_LINK_MODEL,
    show_default=True,
    help="Radio model of the emulated network (see `mote emulate --help`).",
)
@click.option("--query", "sql", default=DEFAULT_QUERY, show_default=True, help="TinySQL.")
@click.option(
    "--duration",
    type=Duration(positive=True),
    default="60s",
    show_default=True,
    help="How long the query runs (30s, 2m, 1h, 90).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out/run"),
    show_default=True,
    help="Result log in OUT/log, Parquet tables in OUT/parquet/<table>.",
)
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@spark_boundary("run")
def run_cmd(
    nodes: int,
    topology: str,
    platform: str,
    seed: int,
    link_model: str,
    sql: str,
    duration: float,
    out: Path,
    master: str,
) -> None:
    """Emulated network -> gateway -> Spark -> Parquet, live, then a summary from Spark.

    Rerunning with the same --out appends to the log and resumes Spark from its
    checkpoints, so every logged row is in Parquet exactly once.
    """
    require_emulator("run")
    from motebase.gateway.cli.params import sql_error
    from motebase.gateway.plan import TinySQLError, compile_query
    from motebase.spark.cli import print_summary
    from motebase.spark.pipeline import (
        PipelineConfig,
        ProgressWatcher,
        raise_if_failed,
        run_until,
        start_pipeline,
        wait_for_query_record,
    )
    from motebase.spark.session import build_session
    from motebase.spark.sinklog import MovedTableError, check_tables_in_place
    from motebase.spark.summary import summarize

    try:
        compile_query(sql)
    except TinySQLError as exc:
        raise sql_error(sql, exc) from None
    console = make_console()
    log_dir, parquet_dir = out / "log", out / "parquet"
    try:
        # Before the network runs: a rerun would append to the log, then fail at the end.
        rebuild = f"remove {parquet_dir} and rerun; it is rebuilt from {log_dir}, every row once"
        check_tables_in_place(parquet_dir, rebuild)
    except MovedTableError as exc:
        raise click.ClickException(str(exc)) from None
    log_dir.mkdir(parents=True, exist_ok=True)

    with console.status("starting Spark"):
        spark = build_session(master)
    console.print(f"Spark {spark.version} on {master}")
    with console.status(f"forming the routing tree of {nodes} {platform} nodes"):
        bridge = _start_network(nodes, topology, platform, seed, link_model)
    console.print(f"emulated {nodes}-node {topology} ({platform}) serving {bridge.pty_path}")

    gateway = GatewayProgress()
    threading.Thread(
        target=_run_gateway,
        args=(bridge.pty_path, sql, log_dir, duration, gateway),
        name="gateway",
        daemon=True,
    ).start()
    console.print(f"gateway: {sql}")
    try:
        if not wait_for_query_record(log_dir, timeout_s=60.0):
            raise click.ClickException(f"the gateway did not start the query: {gateway.error}")
        queries = start_pipeline(spark, PipelineConfig(log_dir=log_dir, out_dir=parquet_dir))
        watcher = ProgressWatcher(queries)
        started = last_status = time.monotonic()
        while not gateway.done.wait(0.5):
            raise_if_failed(queries)
            for batch in watcher.poll():
                _show_batch(console, batch)
            if time.monotonic() - last_status >= STATUS_EVERY_S:
                console.print(_status_line(bridge, gateway, started))
                last_status = time.monotonic()
        if gateway.error is not None:
            raise click.ClickException(f"gateway failed: {gateway.error}")
        console.print(_status_line(bridge, gateway, started))
        console.print("query stopped; letting Spark catch up with the log")
        run_until(queries, log_dir, idle_s=DRAIN_IDLE_S, on_batch=lambda b: _show_batch(console, b))
    finally:
        bridge.stop()
    print_summary(console, summarize(spark, parquet_dir))
    spark.stop()


COMMANDS: list[click.Command] = [run_cmd]
