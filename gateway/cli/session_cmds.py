"""`mote query`, `mote stop`, `mote sf`: commands that talk to a running mote network."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from gateway.assembly import RegisteredQuery, Row
from gateway.cli.params import parse_duration
from gateway.plan import StopQuery, TinySQLError, compile_query, parse_statement
from gateway.protocol.command import ALL_NODES, KNOWN_COMMANDS, ParamType
from gateway.resultlog import LogLockedError, ResultLog
from gateway.session import (
    QuerySession,
    RowSink,
    RunLimits,
    SendError,
    SessionConfig,
    run_query,
)
from gateway.sfserver import SerialForwarder
from gateway.sinks import CsvSink, JsonLinesSink, LiveTableSink, ResultLogSink
from gateway.transport import ReconnectingEndpoint, open_link

_F = TypeVar("_F", bound=Callable[..., Any])


def _port_options(command: _F) -> _F:
    options = [
        click.option(
            "--port",
            required=True,
            help="Device path, pty path, pyserial URL (socket://, loop://) or sf://host:port.",
        ),
        click.option(
            "--platform",
            type=click.Choice(["mica2", "mica", "mica2dot"]),
            default="mica2",
            show_default=True,
            help="Sets the baud rate of a device path (mica2 57600, mica/mica2dot 19200).",
        ),
        click.option("--baud", type=int, default=None, help="Override the platform's baud rate."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _open_link(port: str, platform: str, baud: int | None) -> ReconnectingEndpoint:
    """The port, reopened with backoff whenever it drops; drops are reported on stderr."""
    console = Console(stderr=True)

    def dropped(exc: BaseException) -> None:
        console.print(f"[yellow]link to {port} dropped ({exc}); reconnecting")

    def reconnected() -> None:
        console.print(f"[green]link to {port} is back")

    try:
        return ReconnectingEndpoint(
            lambda: open_link(port, platform, baud), on_drop=dropped, on_reconnect=reconnected
        )
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot open {port}: {exc}") from exc


@contextlib.contextmanager
def _session(port: str, platform: str, baud: int | None) -> Iterator[QuerySession]:
    session = QuerySession(_open_link(port, platform, baud), config=SessionConfig())
    try:
        yield session
    except (SendError, LogLockedError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        session.close()


def _sinks(out: Path | None, log: Path | None, table: bool, session: QuerySession) -> list[RowSink]:
    sinks: list[RowSink] = []
    if log is not None:
        sinks.append(ResultLogSink(ResultLog(log)))
    if out is not None:
        if out.suffix == ".csv":
            sinks.append(CsvSink(out))
        elif out.suffix in (".jsonl", ".json", ".ndjson"):
            sinks.append(JsonLinesSink(out))
        else:
            raise click.BadParameter("--out must end in .jsonl or .csv", param_hint="--out")
    if table:
        sinks.append(LiveTableSink(Console(), stats=lambda: session.assembler.stats))
    return sinks


class _Announcer:
    """Tells the user which query id the run got (needed for `mote stop`)."""

    def __init__(self, keep_running: bool) -> None:
        self._keep_running = keep_running
        self._qid: int | None = None

    def start(self, query: RegisteredQuery) -> None:
        self._qid = query.query_id
        click.echo(f"query {query.query_id} started", err=True)

    def write(self, rows: Sequence[Row]) -> None:
        pass

    def close(self) -> None:
        state = "left running" if self._keep_running else "stopped"
        click.echo(f"query {self._qid} {state}", err=True)


@click.command("query")
@click.argument("sql")
@_port_options
@click.option(
    "--out", type=click.Path(path_type=Path, dir_okay=False), help="Results as .jsonl or .csv."
)
@click.option(
    "--log", type=click.Path(path_type=Path, file_okay=False), help="Durable result log directory."
)
@click.option(
    "--epochs", type=click.IntRange(min=1), help="Stop after this many epochs of results."
)
@click.option("--duration", help="Stop after this long (30s, 2m, ...).")
@click.option(
    "--qid", type=click.IntRange(0, 254), help="Query id (default: next after the running ones)."
)
@click.option(
    "--keep-running/--stop-at-end", default=False, help="Leave the query running on the motes."
)
@click.option("--table/--no-table", default=True, help="Show the live result table.")
def query_cmd(
    sql: str,
    port: str,
    platform: str,
    baud: int | None,
    out: Path | None,
    log: Path | None,
    epochs: int | None,
    duration: str | None,
    qid: int | None,
    keep_running: bool,
    table: bool,
) -> None:
    """Run a TinySQL query on the network behind PORT and collect its results.

    `STOP QUERY n` as SQL stops query n instead.
    """
    if epochs is not None and duration is not None:
        raise click.UsageError("give --epochs or --duration, not both")
    try:
        statement = parse_statement(sql)
        if isinstance(statement, StopQuery):
            with _session(port, platform, baud) as session:
                session.stop_query(statement.qid)
            click.echo(f"sent stop for query {statement.qid}", err=True)
            return
        plan = compile_query(sql)
    except TinySQLError as exc:
        raise click.ClickException(str(exc)) from exc
    limits = RunLimits(epochs=epochs, duration_s=parse_duration(duration) if duration else None)
    with _session(port, platform, baud) as session:
        sinks = _sinks(out, log, table, session)
        sinks.append(_Announcer(keep_running))
        with contextlib.suppress(KeyboardInterrupt):
            run_query(session, plan, sql, sinks, limits, qid=qid, stop_at_end=not keep_running)
        stats = session.assembler.stats
        click.echo(
            f"{stats.tuples} tuples, {stats.aggregate_records} aggregate records, "
            f"{stats.duplicates} duplicates, {stats.late} late, "
            f"{stats.filtered_by_having} groups filtered by HAVING",
            err=True,
        )


@click.command("stop")
@click.argument("qid", type=click.IntRange(0, 254))
@_port_options
def stop_cmd(qid: int, port: str, platform: str, baud: int | None) -> None:
    """Stop query QID on the network behind PORT (DEL message, sent 5 times)."""
    with _session(port, platform, baud) as session:
        session.stop_query(qid)
    click.echo(f"sent stop for query {qid}", err=True)


def _command_params(name: str, assignments: Sequence[str]) -> dict[str, int | str]:
    """``policy=delta`` style arguments, typed by the command's parameter table."""
    spec = KNOWN_COMMANDS.get(name)
    if spec is None:
        known = ", ".join(sorted(KNOWN_COMMANDS))
        raise click.BadParameter(f"unknown command {name!r} (known: {known})", param_hint="NAME")
    given = dict(item.partition("=")[::2] for item in assignments)
    expected = dict(spec.params)
    if set(given) != set(expected):
        usage = " ".join(f"{p}=<{t.value}>" for p, t in spec.params) or "(no parameters)"
        raise click.BadParameter(f"{name} takes {usage}", param_hint="PARAMS")
    try:
        return {
            param: value if expected[param] is ParamType.STRING else int(value, 0)
            for param, value in given.items()
        }
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="PARAMS") from exc


@click.command("command")
@click.argument("name")
@click.argument("params", nargs=-1)
@_port_options
@click.option("--node", type=int, default=ALL_NODES, help="Target node id [default: every node].")
def command_cmd(
    name: str, params: tuple[str, ...], port: str, platform: str, baud: int | None, node: int
) -> None:
    """Send a named command (AM 103) to the network behind PORT, e.g.
    `mote command qpolicy policy=delta`, `qlen length=3`, `nointerleave enabled=1`,
    `setrate qid=1 epochDuration=200`, `reset`. Unmodified TinyDB motes ignore them."""
    typed = _command_params(name, params)
    with _session(port, platform, baud) as session:
        session.send_command(name, typed, target=node)
    click.echo(f"sent {name} to {'every node' if node == ALL_NODES else f'node {node}'}", err=True)


@click.command("sf")
@_port_options
@click.option("--listen", type=int, default=9002, show_default=True, help="TCP port to serve on.")
@click.option("--host", default="0.0.0.0", show_default=True, help="Address to bind.")
def sf_cmd(port: str, platform: str, baud: int | None, listen: int, host: str) -> None:
    """Serve the mote on PORT to SerialForwarder clients (several may share it)."""
    console = Console(stderr=True)
    forwarder = SerialForwarder(_open_link(port, platform, baud), host=host, port=listen).start()
    console.print(f"serving {port} on {host}:{forwarder.port} (Ctrl-C to stop)")
    try:
        forwarder.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        forwarder.close()


COMMANDS: list[click.Command] = [query_cmd, stop_cmd, command_cmd, sf_cmd]
