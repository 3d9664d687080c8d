"""`mote query`, `mote stop`, `mote command`, `mote queries`, `mote sf`: commands that talk
to a running mote network."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import click

from motebase.gateway.assembly import RegisteredQuery, Row
from motebase.gateway.capture import (
    CaptureError,
    CaptureWriter,
    query_to_replay,
    read_capture,
    replay,
)
from motebase.gateway.cli.params import Duration, group_option, platform_option, sql_error
from motebase.gateway.cli.protocol_cmds import capture_for
from motebase.gateway.cli.signals import sigterm_calls
from motebase.gateway.console import make_console
from motebase.gateway.plan import StopQuery, TinySQLError, compile_query, parse_statement
from motebase.gateway.protocol.command import (
    ALL_NODES,
    KNOWN_COMMANDS,
    CommandParamError,
    ParamType,
)
from motebase.gateway.protocol.sf import LOOPBACK, IPNetwork
from motebase.gateway.resultlog import LogCorruptError, LogLockedError
from motebase.gateway.session import (
    QuerySession,
    RowSink,
    RunLimits,
    SendError,
    SessionConfig,
    run_query,
)
from motebase.gateway.sfserver import SerialForwarder
from motebase.gateway.sinks import STDOUT, LiveTableSink, file_sinks
from motebase.gateway.transport import ReconnectingEndpoint, open_link

_F = TypeVar("_F", bound=Callable[..., Any])


def _port_options(command: _F) -> _F:
    options = [
        click.option(
            "--port",
            required=True,
            help="Device path, pty path, pyserial URL (socket://, loop://) or sf://host:port.",
        ),
        platform_option("Sets the baud rate of a device path (mica2 57600, mica/mica2dot 19200)."),
        click.option("--baud", type=int, default=None, help="Override the platform's baud rate."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


#: --group of the commands that send to the motes (the session's SessionConfig.group).
_group_option = group_option(
    "AM group byte of the packets sent. TinyDB and motebase basestations ignore it on the "
    "serial hop; a bridge that forwards packets as they are needs the network's group."
)


def _open_link(
    port: str, platform: str, baud: int | None, tap: Callable[[bytes], None] | None = None
) -> ReconnectingEndpoint:
    """The port, reopened with backoff whenever it drops; drops are reported on stderr.
    ``tap`` sees every byte read (a capture)."""
    console = make_console(stderr=True)

    def dropped(exc: BaseException) -> None:
        console.print(f"[yellow]link to {port} dropped ({exc}); reconnecting")

    def reconnected() -> None:
        console.print(f"[green]link to {port} is back")

    try:
        return ReconnectingEndpoint(
            lambda: open_link(port, platform, baud, tap), on_drop=dropped, on_reconnect=reconnected
        )
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"cannot open {port}: {exc}") from exc


def _warn(message: str) -> None:
    click.echo(message, err=True)


@contextlib.contextmanager
def _session(
    port: str,
    platform: str,
    baud: int | None,
    config: SessionConfig,
    capture: CaptureWriter | None = None,
) -> Iterator[QuerySession]:
    tap = None if capture is None else capture.received
    session = QuerySession(_open_link(port, platform, baud, tap), config=config, notify=_warn)
    try:
        yield session
    except (SendError, LogLockedError, LogCorruptError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        session.close()


def _sinks(out: Path | None, log: Path | None, table: bool, session: QuerySession) -> list[RowSink]:
    try:
        sinks: list[RowSink] = list(file_sinks(out, log))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--out") from None
    if table:
        # With the rows on stdout (--out -) the table is a diagnostic: stderr.
        console = make_console(stderr=out == STDOUT)
        sinks.append(LiveTableSink(console, stats=lambda: session.assembler.stats))
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


@contextlib.contextmanager
def _signals_stop(stop: threading.Event) -> Iterator[None]:
    """Inside the block Ctrl-C and SIGTERM set ``stop``: the run ends between two polls
    (DEL sent, every assembled row written, summary), so `kill` or a service manager ends
    it as Ctrl-C does instead of killing the process and leaving the query running on
    the motes. An interrupt raised mid-poll would lose the rows it had assembled. A
    second signal interrupts for good."""
    if threading.current_thread() is not threading.main_thread():
        # Only the main thread may set handlers; a program embedding the CLI in another
        # thread keeps whatever signal handling it has.
        yield
        return

    def request(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, request) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            # None: a handler set outside Python, which cannot be reinstalled; the
            # default is the closest.
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


@click.command("query")
@click.argument("sql")
@_port_options
@_group_option
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="Results as .jsonl or .csv; - writes JSON lines to stdout (the table goes to stderr).",
)
@click.option(
    "--log", type=click.Path(path_type=Path, file_okay=False), help="Durable result log directory."
)
@click.option(
    "--epochs", type=click.IntRange(min=1), help="Stop after this many epochs of results."
)
@click.option(
    "--duration", type=Duration(positive=True), help="Stop after this long (30s, 2m, 1h, 90)."
)
@click.option(
    "--qid", type=click.IntRange(0, 254), help="Query id (default: next after the running ones)."
)
@click.option(
    "--keep-running/--stop-at-end", default=False, help="Leave the query running on the motes."
)
@click.option("--table/--no-table", default=True, help="Show the live result table.")
@click.option(
    "--save",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also record the serial bytes received, and the query, as a capture for "
    "`mote replay` (docs/capture.md).",
)
@click.option(
    "--silence-epochs",
    type=click.IntRange(min=0),
    default=SessionConfig.silence_epochs,
    show_default=True,
    help="Warn when the query delivers no result for this many epochs (0: never).",
)
@click.option(
    "--adapt-rate",
    is_flag=True,
    help="Lower a SELECT's sample rate (RATE) when the network delivers too little of it, "
    'and say so (docs/radio.md, "Beyond capacity").',
)
def query_cmd(
    sql: str,
    port: str,
    platform: str,
    baud: int | None,
    group: int,
    out: Path | None,
    log: Path | None,
    epochs: int | None,
    duration: float | None,
    qid: int | None,
    keep_running: bool,
    table: bool,
    save: Path | None,
    silence_epochs: int,
    adapt_rate: bool,
) -> None:
    """Run a TinySQL query on the network behind PORT and collect its results.

    Ctrl-C or SIGTERM ends the run: the query is stopped (unless --keep-running), the rows
    already assembled are written, the exit status is 0. `STOP QUERY n` as SQL stops
    query n instead. When a dropped link comes back and the basestation no longer runs
    the query (it rebooted), the query is sent again under the same id.
    """
    if epochs is not None and duration is not None:
        raise click.UsageError("give --epochs or --duration, not both")
    try:
        statement = parse_statement(sql)
        if isinstance(statement, StopQuery):
            with _session(port, platform, baud, SessionConfig(group=group)) as session:
                session.stop_query(statement.qid)
            click.echo(f"sent stop for query {statement.qid}", err=True)
            return
        plan = compile_query(sql)
    except TinySQLError as exc:
        raise sql_error(sql, exc) from None
    stop = threading.Event()
    limits = RunLimits(epochs=epochs, duration_s=duration, stop=stop)
    config = SessionConfig(
        group=group, silence_epochs=silence_epochs or None, adapt_rate=adapt_rate
    )
    capture = capture_for(save, port, platform, baud)
    with contextlib.ExitStack() as cleanup:
        if capture is not None:
            cleanup.callback(capture.close)
        session = cleanup.enter_context(_session(port, platform, baud, config, capture))
        sinks = _sinks(out, log, table, session)
        sinks.append(_Announcer(keep_running))
        if capture is not None:
            sinks.append(capture)
        with _signals_stop(stop), contextlib.suppress(KeyboardInterrupt):
            run_query(session, plan, sql, sinks, limits, qid=qid, stop_at_end=not keep_running)
        stats = session.assembler.stats
        click.echo(
            f"{stats.tuples} tuples, {stats.aggregate_records} aggregate records, "
            f"{stats.duplicates} duplicates, {stats.late} late, "
            f"{stats.filtered_by_having} groups filtered by HAVING",
            err=True,
        )


@click.command("replay")
@click.argument(
    "capture_path", metavar="CAPTURE", type=click.Path(path_type=Path, dir_okay=False, exists=True)
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="Results as .jsonl or .csv; - writes JSON lines to stdout.",
)
@click.option(
    "--log", type=click.Path(path_type=Path, file_okay=False), help="Durable result log directory."
)
@click.option(
    "--sql",
    help="The query whose results the capture holds [default: the one `mote query --save` "
    "recorded in it].",
)
@click.option(
    "--qid",
    type=click.IntRange(0, 254),
    help="Its query id [default: the recorded query's, or the only one the results carry].",
)
@click.option(
    "--tinydb-states",
    is_flag=True,
    help="With --sql: the motes are unmodified TinyDB motes (16-bit aggregate states), "
    "not motebase motes (32-bit).",
)
def replay_cmd(
    capture_path: Path,
    out: Path | None,
    log: Path | None,
    sql: str | None,
    qid: int | None,
    tinydb_states: bool,
) -> None:
    """Turn CAPTURE, a serial capture (`mote listen --save`, `mote query --save`), into rows
    and result-log records, as `mote query --out/--log` would have written them live."""
    try:
        capture = read_capture(capture_path)
        query = query_to_replay(capture, sql, qid, wide_states=not tinydb_states)
    except CaptureError as exc:
        raise click.ClickException(str(exc)) from None
    except TinySQLError as exc:
        raise sql_error(sql or "", exc) from None
    try:
        sinks = list(file_sinks(out, log))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--out") from None
    try:
        session = replay(capture, query, sinks)
    except (LogLockedError, LogCorruptError) as exc:
        raise click.ClickException(str(exc)) from exc
    stats = session.assembler.stats
    click.echo(
        f"query {query.query_id}: {stats.tuples} tuples, {stats.aggregate_records} aggregate "
        f"records, {stats.duplicates} duplicates, {stats.late} late, "
        f"{session.counters.undecodable} undecodable packets",
        err=True,
    )


@click.command("stop")
@click.argument("qid", type=click.IntRange(0, 254))
@_port_options
@_group_option
def stop_cmd(qid: int, port: str, platform: str, baud: int | None, group: int) -> None:
    """Stop query QID on the network behind PORT (DEL message, sent 5 times)."""
    with _session(port, platform, baud, SessionConfig(group=group)) as session:
        session.stop_query(qid)
    click.echo(f"sent stop for query {qid}", err=True)


def _command_params(name: str, assignments: Sequence[str]) -> dict[str, int | str]:
    """``policy=delta`` style arguments, typed and checked against the command's table
    (``KNOWN_COMMANDS``), so a value the motes would ignore is never sent."""
    spec = KNOWN_COMMANDS.get(name)
    if spec is None:
        known = ", ".join(sorted(KNOWN_COMMANDS))
        raise click.BadParameter(f"unknown command {name!r} (known: {known})", param_hint="NAME")
    param_types = dict(spec.params)
    typed: dict[str, int | str] = {}
    for item in assignments:
        param, equals, text = item.partition("=")
        if not equals or param not in param_types or param in typed:
            raise click.BadParameter(f"{name} takes {spec.usage()}", param_hint="PARAMS")
        value: int | str = text
        if param_types[param] is not ParamType.STRING:
            # Left as text when not a number: the check below then names the parameter
            # and its range, as for a number out of range.
            with contextlib.suppress(ValueError):
                value = int(text, 0)
        typed[param] = value
    if len(typed) != len(param_types):
        raise click.BadParameter(f"{name} takes {spec.usage()}", param_hint="PARAMS")
    try:
        spec.check(typed)
    except CommandParamError as exc:
        hint = f"{exc.param!r}" if exc.param else "PARAMS"
        raise click.BadParameter(exc.reason, param_hint=hint) from None
    return typed


@click.command("command")
@click.argument("name")
@click.argument("params", nargs=-1)
@_port_options
@_group_option
@click.option(
    "--node",
    type=click.IntRange(0, 0x7FFF),  # CommandMsg.nodeid is a signed short, -1 = every node
    default=None,
    help="Target node id 0..32767 [default: every node].",
)
def command_cmd(
    name: str,
    params: tuple[str, ...],
    port: str,
    platform: str,
    baud: int | None,
    group: int,
    node: int | None,
) -> None:
    """Send the command NAME with its PARAMS (name=value ...) as a CommandMsg (AM 103) to
    the network behind PORT, e.g.
    `mote command qpolicy policy=delta` (naive|winavg|delta), `qlen length=3` (1..8),
    `nointerleave enabled=1` (0|1), `snoop enabled=0` (0|1: MIN/MAX suppression by
    overheard siblings), `slots enabled=0` (0|1: the slot schedule; 0 pipelines records
    an epoch a level, for comparison), `setrate qid=1 epochDuration=200` (qid 0..254,
    epochDuration 1..32766 in 10 ms), `reset`. Other values are refused before sending.
    Unmodified TinyDB motes ignore these commands."""
    typed = _command_params(name, params)
    with _session(port, platform, baud, SessionConfig(group=group)) as session:
        session.send_command(name, typed, target=ALL_NODES if node is None else node)
    click.echo(f"sent {name} to {'every node' if node is None else f'node {node}'}", err=True)


@click.command("queries")
@_port_options
@_group_option
@click.option(
    "--wait",
    type=Duration(positive=True),
    default="1s",
    show_default=True,
    help="How long to wait for the root's answer and listen for results (2s, 500ms, ...).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print {"running": [...], "heard": [...], "wait_s": S} on stdout instead.',
)
def queries_cmd(
    port: str, platform: str, baud: int | None, group: int, wait: float, as_json: bool
) -> None:
    """List the query ids the network behind PORT runs, one per line, as its root reports
    them (StatusMessage, AM 106); stderr also says which ids were heard in results during
    --wait (a stopped query is heard until its DEL has crossed the network)."""
    with _session(port, platform, baud, SessionConfig(group=group)) as session:
        running, heard = session.survey(wait)
    if as_json:
        click.echo(json.dumps({"running": sorted(running), "heard": sorted(heard), "wait_s": wait}))
        return
    # Ids alone on stdout, so scripts can loop over them; the prose goes to stderr.
    for qid in sorted(running):
        click.echo(qid)
    if not running:
        click.echo("no running queries", err=True)
    listened = f"in {wait:g}s"
    if heard:
        ids = ", ".join(str(qid) for qid in sorted(heard))
        click.echo(f"heard results of {ids} {listened}", err=True)
    else:
        click.echo(f"heard no results {listened}", err=True)


def _networks(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[IPNetwork, ...]:
    try:
        return tuple(ipaddress.ip_network(value, strict=False) for value in values)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _client_networks(host: str, allow: tuple[IPNetwork, ...]) -> tuple[IPNetwork, ...] | None:
    """Which clients `mote sf` serves: --allow's networks; without them, loopback on a
    loopback address and anyone elsewhere (None), with a warning: the protocol has no
    authentication, so anyone who reaches the port may command the motes."""
    if allow:
        return allow
    if _is_loopback(host):
        return LOOPBACK
    click.echo(
        f"warning: serving on {host} to any client: the SerialForwarder protocol has no "
        "authentication; restrict clients with --allow CIDR or tunnel over ssh "
        "(ssh -L 9002:localhost:9002 HOST)",
        err=True,
    )
    return None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: whatever it resolves to, not known to be loopback


@click.command("sf")
@_port_options
@click.option("--listen", type=int, default=9002, show_default=True, help="TCP port to serve on.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; another than loopback serves the network (see --allow).",
)
@click.option(
    "--allow",
    multiple=True,
    metavar="CIDR",
    callback=_networks,
    help="Serve only clients in this network (repeatable) [default: loopback on a loopback "
    "--host, any client otherwise].",
)
@click.option(
    "--max-clients",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Clients served at once; more are refused (closed at once, counted).",
)
def sf_cmd(
    port: str,
    platform: str,
    baud: int | None,
    listen: int,
    host: str,
    allow: tuple[IPNetwork, ...],
    max_clients: int,
) -> None:
    """Serve the mote on PORT to SerialForwarder clients (several may share it).

    The SerialForwarder protocol has no authentication: serve on loopback (the default)
    and reach it from elsewhere through ssh (`ssh -L 9002:localhost:9002 HOST`).
    Ctrl-C or SIGTERM stops the server; the exit status is 0.
    """
    console = make_console(stderr=True)
    clients = _client_networks(host, allow)
    try:
        forwarder = SerialForwarder(
            _open_link(port, platform, baud),
            host=host,
            port=listen,
            allow=clients,
            max_clients=max_clients,
        ).start()
    except OSError as exc:
        raise click.ClickException(f"cannot serve on {host}:{listen}: {exc}") from None
    try:
        with sigterm_calls(forwarder.stop):
            # Said once SIGTERM is handled: a supervisor that waits for it may stop us at once.
            console.print(f"serving {port} on {host}:{forwarder.port} (Ctrl-C to stop)")
            forwarder.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        forwarder.close()
    refused = forwarder.refused
    # click, not rich: one line however narrow the terminal, for logs and scripts
    click.echo(
        f"stopped; {forwarder.packets_to_clients} packets to clients, "
        f"{forwarder.packets_to_mote} to the mote; refused {refused.not_allowed} clients "
        f"not allowed, {refused.over_limit} over --max-clients",
        err=True,
    )


COMMANDS: list[click.Command] = [query_cmd, stop_cmd, command_cmd, queries_cmd, sf_cmd, replay_cmd]
