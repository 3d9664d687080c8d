"""`mote plot topology|log`: pictures of a result log; and the picture-file option that
`mote emulate --plot` and `mote accuracy --plot` share with them.

The pictures need the plot extra (matplotlib). Without it every command that would draw
says what to install before doing any work, and `mote` itself starts as usual: nothing
here imports matplotlib until a picture is drawn.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from motebase.gateway.logfiles import LogCorruptError
from motebase.gateway.plot import INSTALL_PLOT, PlotExtraMissing, picture_format, require_matplotlib
from motebase.gateway.plot.logdata import LoggedQuery, read_log

_F = TypeVar("_F", bound=Callable[..., Any])
_LOG_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


class PictureFile(click.ParamType):
    """A picture to write, PNG or SVG by its suffix. Converting it checks that the plot
    extra is installed, so a command refuses at once rather than after a long run."""

    name = "picture"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> Path:
        path = Path(str(value))
        try:
            picture_format(path)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
        try:
            require_matplotlib()
        except PlotExtraMissing as exc:
            raise click.ClickException(_missing_extra(ctx, param, exc)) from None
        return path


def _missing_extra(
    ctx: click.Context | None, param: click.Parameter | None, exc: PlotExtraMissing
) -> str:
    """What `mote emulate --plot` (or `mote plot log`) says without matplotlib."""
    command = ctx.command_path if ctx is not None else "mote"
    # `--plot` adds pictures to a command that does something else: name it.
    if isinstance(param, click.Option) and param.opts[0] == "--plot":
        command += " --plot"
    return (
        f"{command} needs the plot extra (matplotlib), which is not installed here: "
        f"{exc.module} cannot be imported. Install it with\n  {INSTALL_PLOT}"
    )


def picture_option(help_text: str, *, name: str = "--plot", required: bool = False) -> Any:
    """An option naming a picture file (.svg or .png); None when not given."""
    return click.option(name, type=PictureFile(), default=None, required=required, help=help_text)


def drawing(draw: Callable[..., None], *args: Any) -> None:
    """Run ``draw(*args)``, turning what the user can fix (a bad input, a file that cannot
    be written) into a one-line error."""
    try:
        draw(*args)
    except (ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None


def _load(directory: Path) -> dict[int, LoggedQuery]:
    try:
        queries = read_log(directory)
    except LogCorruptError as exc:
        raise click.ClickException(f"{exc} (`mote log verify {directory}` lists it)") from None
    if not queries:
        raise click.ClickException(f"{directory}: no query in the log")
    return queries


def _chosen(
    queries: dict[int, LoggedQuery], qid: int | None, default: Callable[[LoggedQuery], bool]
) -> LoggedQuery:
    if qid is not None:
        if qid not in queries:
            known = ", ".join(map(str, sorted(queries)))
            message = f"no query {qid} in the log (it has {known})"
            raise click.BadParameter(message, param_hint="--qid")
        return queries[qid]
    fitting = [queries[q] for q in sorted(queries) if default(queries[q])]
    return fitting[0] if fitting else queries[min(queries)]


@click.group("plot")
def plot_group() -> None:
    """Pictures of a result log (the directory `--log` writes), PNG or SVG by the output
    file's suffix. Needs the plot extra: pip install "motebase[plot]". `mote emulate
    --plot` draws an emulated network, `mote accuracy --plot` a report."""


@plot_group.command("topology")
@click.argument("directory", type=_LOG_DIR)
@picture_option("Picture to write: a .svg or .png file.", name="--out", required=True)
@click.option(
    "--qid",
    type=click.IntRange(0, 254),
    default=None,
    help="Query whose readings give the tree (default: the first that selected parent).",
)
@click.option(
    "--positions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="'moteid x y' file (header line first), as `mote emulate --positions` reads it "
    "(default: the motes on the grid of `mote emulate --topology grid`).",
)
@click.option(
    "--spacing",
    type=click.FloatRange(min=0.0, min_open=True),
    default=10.0,
    show_default=True,
    help="Grid spacing in metres, without --positions.",
)
def topology_cmd(
    directory: Path, out: Path, qid: int | None, positions: Path | None, spacing: float
) -> None:
    """Draw the routing tree the readings in DIRECTORY report: each node's latest parent
    (the query must select parent; depth too, or it is counted from the parents) over the
    motes' positions, nodes coloured by depth. Link qualities are not in a log: `mote
    emulate --plot` draws them for an emulated network."""
    from motebase.gateway.plot.topology import draw_topology, read_positions, topology_from_log

    query = _chosen(_load(directory), qid, lambda q: "parent" in q.fields)
    try:
        places = None if positions is None else read_positions(positions)
        view = topology_from_log(query, places, spacing)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    drawing(draw_topology, view, out)
    routed = len(view.routed())
    click.echo(
        f"wrote {out}: query {query.query_id}, {len(view.nodes)} motes, {routed} with a parent"
    )


@plot_group.command("log")
@click.argument("directory", type=_LOG_DIR)
@picture_option("Picture to write: a .svg or .png file.", name="--out", required=True)
@click.option(
    "--qid", type=click.IntRange(0, 254), default=None, help="Query to draw (default: the first)."
)
@click.option(
    "--attr",
    default=None,
    help="Attribute of the per-node time series (tuple queries; default: the first "
    "selected one other than nodeid, parent, depth).",
)
def log_cmd(directory: Path, out: Path, qid: int | None, attr: str | None) -> None:
    """Draw one query of the result log DIRECTORY in one figure. A tuple query: a node x
    epoch heatmap of the readings delivered, above an attribute per node over the epochs.
    An aggregate query: each aggregate column over the epochs, a line per group."""
    from motebase.gateway.plot.log import draw_log

    query = _chosen(_load(directory), qid, lambda q: True)
    drawing(draw_log, query, out, attr.lower() if attr else None)
    epochs = query.epochs()
    span = f"epochs {epochs[0]}..{epochs[-1]}" if epochs else "no epochs"
    kind = "aggregate" if query.aggregate else "tuple"
    click.echo(f"wrote {out}: query {query.query_id} ({kind}, {span})")


COMMANDS: list[click.Command] = [plot_group]
