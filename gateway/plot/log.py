"""One query of a result log over time, in one figure (`mote plot log`).

A tuple query gets two panels, one above the other: the delivery heatmap (a row per node
that delivered anything, a column per epoch, filled where that node's reading of that
epoch is in the log) and one attribute per node over the epochs (a line per node). An
aggregate query gets one panel per aggregate column, its value over the epochs (a line per
group for GROUP BY). In an SVG, ``delivery`` is the heatmap, ``series-NODE`` a node's line,
``aggregate-COLUMN-group-GROUP`` (COLUMN its position, from 0) an aggregate's line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from motebase.gateway.plot.figure import epoch_axis, picture
from motebase.gateway.plot.logdata import LoggedQuery

#: Attributes that describe the network rather than measure something: not the default
#: attribute of the time series.
ROUTING_FIELDS = ("nodeid", "parent", "depth")
#: Up to this many nodes each gets a legend entry and a heatmap row label.
MAX_LEGEND = 12
MAX_ROW_LABELS = 40


class LogPlotError(ValueError):
    """The query cannot be drawn as asked (no rows, an attribute it did not select)."""


def delivery_matrix(query: LoggedQuery) -> tuple[list[int], list[int], list[list[int]]]:
    """(nodes, epochs, cells): ``cells[i][j]`` is 1 if node ``nodes[i]`` delivered its
    reading of epoch ``epochs[j]``, else 0. Epochs run from the first to the last one
    delivered, those nobody delivered included."""
    nodes = query.nodes()
    delivered = query.epochs()
    epochs = list(range(delivered[0], delivered[-1] + 1)) if delivered else []
    have = {(r.node, r.epoch) for r in query.readings}
    return nodes, epochs, [[int((n, e) in have) for e in epochs] for n in nodes]


def default_attribute(query: LoggedQuery) -> str | None:
    """The first selected attribute that is a measurement (not nodeid, parent, depth)."""
    return next((f for f in query.fields if f not in ROUTING_FIELDS), None)


def series(query: LoggedQuery, attr: str) -> dict[int, tuple[list[int], list[float]]]:
    """Per node, the epochs and values of ``attr`` in its readings, by epoch."""
    points: dict[int, dict[int, float]] = {}
    for r in query.readings:
        value = r.values.get(attr)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            points.setdefault(r.node, {})[r.epoch] = value
    return {
        node: (sorted(by_epoch), [by_epoch[e] for e in sorted(by_epoch)])
        for node, by_epoch in sorted(points.items())
    }


def aggregate_series(
    query: LoggedQuery,
) -> dict[str, dict[int, tuple[list[int], list[float]]]]:
    """Per aggregate column and group, the epochs and values logged (NULLs left out)."""
    out: dict[str, dict[int, dict[int, float]]] = {c: {} for c in query.columns()}
    for a in query.aggregates:
        if a.value is not None:
            out[a.column].setdefault(a.group, {})[a.epoch] = a.value
    return {
        column: {
            group: (sorted(by_epoch), [by_epoch[e] for e in sorted(by_epoch)])
            for group, by_epoch in sorted(groups.items())
        }
        for column, groups in out.items()
    }


def draw_log(query: LoggedQuery, path: str | Path, attr: str | None = None) -> None:
    """Write the panels of ``query`` (see the module docstring) to ``path``.
    LogPlotError when there is nothing to draw or ``attr`` is not one of its fields."""
    if query.aggregate:
        if attr is not None:
            raise LogPlotError(
                f"query {query.query_id} is an aggregate query: its rows have no per-node "
                "attribute; leave out --attr"
            )
        _draw_aggregates(query, path)
        return
    if not query.readings:
        raise LogPlotError(f"query {query.query_id} has no readings in the log")
    if attr is not None and attr not in query.fields:
        raise LogPlotError(
            f"query {query.query_id} did not select {attr!r}; it selected {', '.join(query.fields)}"
        )
    _draw_tuples(query, path, attr or default_attribute(query))


def _title(query: LoggedQuery) -> str:
    return f"query {query.query_id}: {query.sql}"


def _draw_tuples(query: LoggedQuery, path: str | Path, attr: str | None) -> None:
    nodes, epochs, cells = delivery_matrix(query)
    panels = 2 if attr is not None else 1
    height = 2.0 + 0.12 * min(len(nodes), 60) + (3.2 if attr is not None else 0.0)
    with picture(path, (8.0, height)) as figure:
        figure.suptitle(_title(query), fontsize=9)
        ratios = [max(len(nodes), 6), 24][:panels]
        axes = figure.subplots(panels, 1, squeeze=False, height_ratios=ratios)[:, 0]
        _draw_heatmap(figure, axes[0], nodes, epochs, cells)
        if attr is not None:
            _draw_series(axes[1], series(query, attr), attr)


def _draw_heatmap(
    figure: Any, ax: Any, nodes: list[int], epochs: list[int], cells: list[list[int]]
) -> None:
    from matplotlib.colors import ListedColormap

    delivered = sum(map(sum, cells))
    # A log knows only the nodes that delivered something: say so, or the rows read as all.
    ax.set_title(
        f"readings delivered: {delivered} of {len(nodes)} nodes x {len(epochs)} epochs "
        "(nodes that delivered none are not in the log)"
    )
    image = ax.imshow(
        cells,
        cmap=ListedColormap(["#f0f0f0", "#1b7837"]),
        vmin=0,
        vmax=1,
        aspect="auto",
        interpolation="nearest",
        extent=(epochs[0] - 0.5, epochs[-1] + 0.5, len(nodes) - 0.5, -0.5),
        gid="delivery",
    )
    epoch_axis(ax)
    ax.set_ylabel("node")
    if len(nodes) <= MAX_ROW_LABELS:
        ax.set_yticks(range(len(nodes)), [str(n) for n in nodes], fontsize=6)
    else:
        step = -(-len(nodes) // MAX_ROW_LABELS)
        ax.set_yticks(range(0, len(nodes), step), [str(n) for n in nodes[::step]], fontsize=6)
    bar = figure.colorbar(image, ax=ax, ticks=[0.25, 0.75], shrink=0.8, aspect=10)
    bar.ax.set_yticklabels(["missing", "delivered"])


def _draw_series(ax: Any, lines: dict[int, tuple[list[int], list[float]]], attr: str) -> None:
    ax.set_title(f"{attr} per node")
    for node, (epochs, values) in lines.items():
        ax.plot(epochs, values, marker=".", ms=3, lw=0.9, label=str(node), gid=f"series-{node}")
    epoch_axis(ax)
    ax.set_ylabel(f"{attr} (raw)")
    if 0 < len(lines) <= MAX_LEGEND:
        ax.legend(title="node", fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _draw_aggregates(query: LoggedQuery, path: str | Path) -> None:
    columns = aggregate_series(query)
    if not columns:
        raise LogPlotError(f"query {query.query_id} has no aggregate rows in the log")
    with picture(path, (8.0, 1.2 + 2.4 * len(columns))) as figure:
        figure.suptitle(_title(query), fontsize=9)
        axes = figure.subplots(len(columns), 1, squeeze=False, sharex=True)[:, 0]
        for index, (ax, (column, groups)) in enumerate(zip(axes, columns.items(), strict=True)):
            ax.set_title(column)
            for group, (epochs, values) in groups.items():
                label = f"group {group}" if len(groups) > 1 else column
                gid = f"aggregate-{index}-group-{group}"
                ax.plot(epochs, values, marker=".", ms=4, lw=1.0, label=label, gid=gid)
            ax.set_ylabel(column)
            if 1 < len(groups) <= MAX_LEGEND:
                ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        epoch_axis(axes[-1])
