"""`mote emulate`: run an emulated network and serve its root's UART (pty / SerialForwarder)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click
import numpy as np
from rich.console import Console
from rich.live import Live
from rich.table import Table

from motebase.emu.topology import DEFAULT_LINK_MODEL
from motebase.gateway.cli.params import Duration, platform_option, sql_error
from motebase.gateway.cli.plot_cmds import drawing, picture_option
from motebase.gateway.cli.signals import sigterm_calls
from motebase.gateway.console import end_live, make_console, throttled
from motebase.gateway.sinks import STDOUT

if TYPE_CHECKING:  # the emulator loads only when a command runs it
    from motebase.emu.topology import FileLayout


def require_emulator(command: str) -> None:
    """Refuse ``mote COMMAND`` at once, with what to install, where the emulator's C
    extension was not built (emu/native.py)."""
    from motebase.emu.native import EmulatorMissing, load, missing_message

    try:
        load()
    except EmulatorMissing:
        raise click.ClickException(missing_message(f"mote {command}")) from None


def _root_position(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not 'X,Y'") from None
    return (x, y)


def _progress(net, started: float, totals: dict[str, int], routing: RoutingProgress) -> str:
    elapsed = max(time.monotonic() - started, 1e-9)
    counters = net.counters()
    sent, received = int(counters["sent"].sum()), int(counters["received"].sum())
    totals.update(sent=sent, received=received)
    return (
        f"virtual {net.now_ms / 1000:9.1f} s | speed {net.now_ms / 1000 / elapsed:8.1f}x real"
        f" | sent {sent} received {received} collided {int(counters['collided'].sum())}"
        f" | alive {int(net.alive.sum())}/{net.present}\n{routing.update(net)}"
    )


class RoutingProgress:
    """How far the routing tree has formed, for the live display: a query sent before a
    node has a parent misses that node, and one sent while parents still change loses
    results on the way. On the emulator's grids every node has a parent within about 4 s of
    virtual time, but parents keep changing while the link estimates settle (more on lossy
    links), which is why queries wait 30 s by default (--query-after)."""

    def __init__(self) -> None:
        self._parents: np.ndarray | None = None
        self._changed_ms = 0.0

    def update(self, net) -> str:
        from motebase.emu.network import NO_DEPTH

        parent, depth = net.routing()
        first = self._parents is None
        if first or (parent != self._parents).any():
            self._changed_ms = net.now_ms
        self._parents = parent
        members = net.alive.copy()
        members[net.absent] = False
        members[0] = False  # the root: its parent is the serial port
        routed = members & (depth != NO_DEPTH)
        have, total = int(routed.sum()), int(members.sum())
        if have < total:
            return f"routing: {have}/{total} nodes have a parent (queries wait for the tree)"
        deepest = int(depth[routed].max()) if have else 0
        settled = f"routing: all {total} nodes have a parent, tree depth {deepest}"
        if first:  # nothing to compare with: how long the parents held is unknown
            return settled
        return f"{settled}, parents unchanged for {(net.now_ms - self._changed_ms) / 1000:.1f} s"


def _route_cells(parent: int, depth: int) -> tuple[str, str]:
    from motebase.emu.network import NO_DEPTH, NO_PARENT, UART_ADDR

    if parent == UART_ADDR:
        return "uart", str(depth)
    if parent == NO_PARENT or depth == NO_DEPTH:
        return "-", "-"
    return str(parent), str(depth)


def _summary(net, rows: int) -> Table:
    from motebase.emu.network import NO_DEPTH

    energy = net.energy()
    counters = net.counters()
    alive = net.alive
    absent = set(net.absent.tolist())
    parent, depth = net.routing()
    table = Table(title=f"{net.n} nodes after {net.now_ms / 1000:.1f} s virtual")
    columns = ("node", "alive", "parent", "depth", "energy J", "cpu J", "radio J")
    columns += ("sent", "recv", "collided")
    for column in columns:
        table.add_column(column, justify="right")
    radio = energy["listen"] + energy["transmit"]
    shown = np.arange(min(rows, net.n))
    for i in shown:
        table.add_row(
            str(i),
            "absent" if i in absent else "yes" if alive[i] else "no",
            *_route_cells(int(parent[i]), int(depth[i])),
            f"{energy['total'][i]:.3f}",
            f"{energy['cpu'][i]:.3f}",
            f"{radio[i]:.3f}",
            str(counters["sent"][i]),
            str(counters["received"][i]),
            str(counters["collided"][i]),
        )
    if net.n > rows:
        table.add_row("...", *[""] * (len(columns) - 1))
    routed = alive & (depth != NO_DEPTH)
    table.caption = f"{int(routed.sum())} of {net.n} nodes routed" + (
        f", tree depth {int(depth[routed].max())}" if routed.any() else ""
    )
    table.add_row(
        "all",
        str(int(alive.sum())),
        "",
        "",
        f"{energy['total'].sum():.3f}",
        f"{energy['cpu'].sum():.3f}",
        f"{radio.sum():.3f}",
        str(int(counters["sent"].sum())),
        str(int(counters["received"].sum())),
        str(int(counters["collided"].sum())),
    )
    return table


def _inject_queries(console: Console, bridge, sqls: tuple[str, ...], after_ms: float) -> None:
    """Runs the network (before the bridge serves it) until ``after_ms``, then sends each
    query's parts a second apart, as the gateway does."""
    from motebase.emu.queries import query_frames

    bridge.net.run_until(max(after_ms, bridge.net.now_ms))
    for qid, sql in enumerate(sqls, start=1):
        console.print(f"query {qid} after {bridge.net.now_ms / 1000:.0f} s of virtual time: {sql}")
        for frame in query_frames(sql, qid):
            bridge.write(frame)
            bridge.net.run_for(1000.0)


def _describe_layout(console: Console, path: str, layout: FileLayout) -> None:
    """Say what a positions file became where it is not the file itself: an added
    basestation, and skipped ids."""
    x, y = layout.root
    if not layout.root_listed:
        console.print(
            f"{path} has no mote 0: the basestation (node 0, the root of the routing tree) "
            f"is added at {x:g},{y:g}; --root-position X,Y places it"
        )
    if len(layout.absent):
        console.print(
            f"{len(layout.absent)} ids up to the file's highest are not in it: absent "
            "nodes (dead from the start, no links)"
        )


def _check_queries(sqls: tuple[str, ...]) -> None:
    """Refuse a bad --query before the network is built, as `mote query` would."""
    from motebase.gateway.plan import TinySQLError, compile_query

    for sql in sqls:
        try:
            compile_query(sql)
        except TinySQLError as exc:
            raise sql_error(sql, exc) from None


def _stop_points(specs: tuple[str, ...], queries: int) -> dict[int, int]:
    """``--stop-after`` values: ``K`` (the first query) or ``N:K`` (query N, 1-based)."""
    points: dict[int, int] = {}
    for spec in specs:
        index_text, _, epochs_text = spec.rpartition(":")
        try:
            index = int(index_text) if index_text else 1
            epochs = int(epochs_text)
        except ValueError:
            raise click.BadParameter(
                f"{spec!r} is not K or N:K", param_hint="--stop-after"
            ) from None
        if not 1 <= index <= queries or epochs < 1:
            raise click.BadParameter(
                f"{spec!r}: query {index} of {queries}, after at least 1 epoch",
                param_hint="--stop-after",
            )
        points[index - 1] = epochs
    return points


def _run_experiment(
    console: Console,
    net,
    sqls: tuple[str, ...],
    stop_after: tuple[str, ...],
    epochs: int,
    warmup_ms: float,
    out: Path | None,
    truth: Path | None,
    log: Path | None,
    adapt_rate: bool = False,
) -> None:
    """The gateway in this process, in virtual time: results, and the truth beside them."""
    from motebase.emu.experiment import (
        QueryRun,
        aggregate_agreement,
        run_experiment,
        write_truth,
    )
    from motebase.gateway.resultlog import LogCorruptError, LogLockedError
    from motebase.gateway.sinks import file_sinks
    from motebase.gateway.tinysql import TinySQLError

    stops = _stop_points(stop_after, len(sqls))
    runs = [QueryRun(sql, stops.get(i)) for i, sql in enumerate(sqls)]
    try:
        # afresh, as the truth beside them is: rows of an earlier run would count as
        # duplicates and wrong values against this run's truth
        sinks = file_sinks(out, log, fresh=True)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--out") from None
    with console.status("running") as status:
        try:
            experiment = run_experiment(
                net,
                runs,
                epochs=epochs,
                warmup_ms=warmup_ms,
                sinks=sinks,
                progress=throttled(status.update),
                adapt_rate=adapt_rate,
            )
        except (TinySQLError, LogLockedError, LogCorruptError) as exc:
            raise click.ClickException(str(exc)) from None
    for notice in experiment.notices:
        console.print(f"[yellow]{notice}[/]")
    if truth is not None:
        write_truth(sys.stdout if truth == STDOUT else truth, experiment)
    for outcome in experiment.outcomes:
        assert outcome.truth is not None
        console.print(
            f"query {outcome.query.query_id}: {len(outcome.rows)} rows delivered, "
            f"{len(outcome.truth.rows)} in the truth, complete through epoch "
            f"{outcome.complete_through}: {outcome.query.sql}"
        )
        agreement = aggregate_agreement(experiment, outcome)
        if agreement is not None and agreement.values:
            # Row counts alone hid a COUNT of 5 where 100 nodes sampled (past capacity).
            console.print(
                f"  values exact: {agreement.exact_values} of {agreement.values} "
                f"({agreement.exact_fraction or 0.0:.1%}), mean absolute error "
                f"{agreement.mean_abs_error or 0.0:g} (`mote accuracy` has the rest)"
            )
    written = ["stdout" if p == STDOUT else str(p) for p in (out, truth, log) if p is not None]
    console.print(f"{experiment.virtual_s:.1f} s of virtual time; wrote {', '.join(written)}")


@click.command("emulate")
@click.option(
    "--nodes",
    type=click.IntRange(1, 65534),
    default=100,
    show_default=True,
    help="Network size, the basestation (node 0) included; ignored with --positions and "
    "intel-lab, whose files give the motes.",
)
@click.option(
    "--topology",
    type=click.Choice(["grid", "random", "intel-lab", "intel", "file"]),
    default="grid",
    show_default=True,
    help="Node layout: a grid, random positions, the 54-mote Intel Berkeley lab "
    "(intel-lab, alias intel: node i is mote i, node 0 the basestation at the centroid), "
    "or a --positions file.",
)
@platform_option("Mote platform: radio (mica: TR1000; mica2, mica2dot: CC1000), timing, energy.")
@click.option(
    "--seed",
    type=int,
    default=1,
    show_default=True,
    help="Seed of every random draw (positions, links, radio, sensors): same seed, same run.",
)
@click.option(
    "--sf",
    "sf_port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve SerialForwarder on this TCP port (0: any free port).",
)
@click.option(
    "--pty", "use_pty", is_flag=True, help="Expose the root's UART as a pty and print its path."
)
@click.option(
    "--duration",
    type=Duration(positive=True),
    default=None,
    help="Virtual time to run (10m, 30s, 1h, 90); default: until Ctrl-C.",
)
@click.option("--realtime", is_flag=True, help="Pace virtual time to the wall clock.")
@click.option(
    "--positions",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="'moteid x y' file (header line first). Each mote keeps its id; mote 0 is the "
    "basestation, added at --root-position when the file has none; ids the file skips are "
    "absent nodes (dead, no links).",
)
@click.option(
    "--root-position",
    default=None,
    help="X,Y of the basestation with --positions when the file has no mote 0 (default: "
    "the motes' centroid).",
)
@click.option(
    "--spacing", type=float, default=10.0, show_default=True, help="Grid spacing, metres."
)
@click.option(
    "--range",
    "radio_range",
    type=float,
    default=None,
    help="Radio range of the logistic and disc link models (and --lossless), metres "
    "(default 1.5 x spacing).",
)
@click.option(
    "--link-model",
    type=click.Choice(["logistic", "sinr", "disc"]),
    default=DEFAULT_LINK_MODEL,
    show_default=True,
    help="sinr: path loss, shadowing and hardware variance give each link a power; "
    "receptions by SINR with capture, energy carrier sense (emu/README.md, Radio model; "
    "docs/radio.md). logistic/disc: a reception probability by distance (--range), any "
    "overlap collides.",
)
@click.option(
    "--link-table",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Links from a file instead of the model: CSV src,dst,prob; TOSSIM 1.x lossy.nss "
    "(src:dst:bit_error); or TOSSIM 2 gain/noise lines (feeds the sinr reception).",
)
@click.option("--lossless", is_flag=True, help="Ideal radio: no loss, no collisions.")
@click.option(
    "--battery-j", type=float, default=0.0, help="Battery per node in joules (0: unlimited)."
)
@click.option(
    "--query",
    "sqls",
    multiple=True,
    help="A TinySQL query to run (repeat for concurrent queries). With --out, --truth or "
    "--log the gateway runs in this process in virtual time; otherwise the parts are "
    "injected into the served root, a second apart.",
)
@click.option(
    "--query-after",
    type=Duration(),
    default="30s",
    show_default=True,
    help="Virtual time run before the first query, so the routing tree forms first.",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="With --out/--truth/--log: epochs each query runs (counted at the root).",
)
@click.option(
    "--stop-after",
    multiple=True,
    help="Stop a query mid-run: K (the first query after K epochs) or N:K (query N).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    default=None,
    help="Results as `mote query --out` writes them (.jsonl or .csv; - for JSON lines on "
    "stdout, everything else then on stderr).",
)
@click.option(
    "--truth",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    default=None,
    help="Ground truth JSONL: the rows a perfect network would deliver (for `mote accuracy`; "
    "- for stdout).",
)
@click.option(
    "--log",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Durable result log directory, as `mote query --log` writes it.",
)
@click.option(
    "--adapt-rate",
    is_flag=True,
    help="With --out/--truth/--log: the gateway lowers a SELECT's sample rate the network "
    "cannot carry, and says so (`mote query --adapt-rate`).",
)
@picture_option(
    "Draw the network when the run ends (.svg or .png; the plot extra): positions, links "
    "coloured by reception probability, the routing tree, each node's depth."
)
@click.option(
    "--summary-rows",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Nodes listed in the summary table at the end (the totals row is always there).",
)
def emulate_cmd(
    nodes: int,
    topology: str,
    platform: str,
    seed: int,
    sf_port: int | None,
    use_pty: bool,
    duration: float | None,
    realtime: bool,
    positions: str | None,
    root_position: str | None,
    spacing: float,
    radio_range: float | None,
    link_model: str,
    link_table: str | None,
    lossless: bool,
    battery_j: float,
    sqls: tuple[str, ...],
    query_after: float,
    epochs: int,
    stop_after: tuple[str, ...],
    out: Path | None,
    truth: Path | None,
    log: Path | None,
    adapt_rate: bool,
    plot: Path | None,
    summary_rows: int,
) -> None:
    """Run an emulated mote network; its root's UART speaks TinyOS 1.x serial.

    Serving (--pty, --sf), it runs until --duration or Ctrl-C or SIGTERM, then prints its
    summary and exits 0.
    """
    require_emulator("emulate")
    from motebase.emu.bridge import SerialBridge
    from motebase.emu.network import ConfigError, Network, NetworkConfig

    if out == STDOUT and truth == STDOUT:
        raise click.UsageError("--out - and --truth - would mix on stdout: give one a file")
    # With rows on stdout, what the command says goes to stderr.
    console = make_console(stderr=STDOUT in (out, truth))
    until_ms = duration * 1000.0 if duration is not None else None
    _check_queries(sqls)
    try:
        config = NetworkConfig(
            nodes=nodes,
            topology="file" if positions else topology,
            platform=platform,
            seed=seed,
            lossless=lossless,
            spacing=spacing,
            radio_range=radio_range,
            link_model=link_model,
            positions_file=positions,
            root_position=_root_position(root_position),
            link_table=link_table,
            battery_j=battery_j,
        )
        net = Network(config)
    except (ConfigError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    if positions:
        _describe_layout(console, positions, config.file_layout())
    if out is not None or truth is not None or log is not None:
        if not sqls:
            raise click.UsageError("--out, --truth and --log need at least one --query")
        if use_pty or sf_port is not None or realtime:
            raise click.UsageError(
                "--out/--truth/--log run in virtual time: no --pty, --sf, --realtime"
            )
        _run_experiment(
            console,
            net,
            sqls,
            stop_after,
            epochs,
            query_after * 1000.0,
            out,
            truth,
            log,
            adapt_rate,
        )
        _draw_network(console, net, plot)
        return
    if stop_after:
        raise click.UsageError("--stop-after needs --out, --truth or --log")
    if adapt_rate:
        raise click.UsageError("--adapt-rate needs --out, --truth or --log")
    bridge = SerialBridge(
        net, pty=use_pty, sf_port=sf_port, realtime=realtime, until_ms=until_ms, slice_ms=100.0
    )
    layout = "positions file" if positions else topology
    console.print(
        f"[bold]{net.n} {platform} nodes[/], {layout}, seed {seed}, {len(net.links.dst)} links"
    )
    started = time.monotonic()
    terminated = threading.Event()
    totals: dict[str, int] = {}
    routing = RoutingProgress()
    try:
        with sigterm_calls(terminated.set):
            # Said once SIGTERM is handled: a supervisor that waits for it may stop us at once.
            if bridge.pty_path:
                console.print(f"pty: [bold]{bridge.pty_path}[/]")
            if bridge.sf_port is not None:
                console.print(f"SerialForwarder: [bold]127.0.0.1:{bridge.sf_port}[/]")
            # A pipe holds it back otherwise, and whoever waits for the path waits for ever.
            console.file.flush()
            if sqls:
                _inject_queries(console, bridge, sqls, query_after * 1000.0)
            bridge.start()
            with Live(console=console, refresh_per_second=4, transient=False) as live:
                while not bridge.finished.wait(0.25) and not terminated.is_set():
                    live.update(_progress(net, started, totals, routing))
                live.update(_progress(net, started, totals, routing))
            end_live(console)
    except KeyboardInterrupt:
        pass
    finally:
        bridge.stop()
    console.print(_summary(net, summary_rows))
    wall = max(time.monotonic() - started, 1e-9)
    console.print(
        f"events: {net.events}, wall {wall:.1f} s,"
        f" {net.n * net.now_ms / 1000 / wall:,.0f} node-seconds per wall second,"
        f" UART bytes out {bridge.stats.uart_bytes_out}"
    )
    _draw_network(console, net, plot)


def _draw_network(console: Console, net, plot: Path | None) -> None:
    """The --plot picture of the network as the run left it."""
    if plot is None:
        return
    from motebase.emu.plotting import topology_view
    from motebase.gateway.plot.topology import draw_topology

    drawing(draw_topology, topology_view(net), plot)
    console.print(f"wrote {plot}")


COMMANDS: list[click.Command] = [emulate_cmd]
