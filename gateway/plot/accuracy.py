"""An accuracy report as pictures (`mote accuracy --plot`), a row per query of the truth.

A tuple query's row is its yield by depth: a bar per depth of the routing tree (the depth
the node had when it sampled), labelled delivered/expected. An aggregate query's row is
its error over time: per epoch, the fraction of values exactly right, and the mean and
largest absolute error of the values both sides have. In an SVG, ``yield-QID-depth-D`` is
a bar, ``exact-QID``, ``mean-abs-error-QID`` and ``max-abs-error-QID`` the lines.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from motebase.gateway.accuracy import UNROUTED, AccuracyReport, AggregateAccuracy, TupleAccuracy
from motebase.gateway.plot.figure import epoch_axis, picture

ROW_HEIGHT = 3.0


def depth_label(depth: int | None) -> str:
    if depth is None:
        return "unknown"
    return "no route" if depth == UNROUTED else str(depth)


def draw_accuracy(report: AccuracyReport, path: str | Path) -> None:
    """Write a row of panels per query of ``report`` to ``path``; ValueError if the report
    has no query."""
    queries = [report.queries[qid] for qid in sorted(report.queries)]
    if not queries:
        raise ValueError("the truth has no query: nothing to draw")
    with picture(path, (8.5, 0.4 + ROW_HEIGHT * len(queries))) as figure:
        rows = figure.subfigures(len(queries), 1, squeeze=False)[:, 0]
        for row, query in zip(rows, queries, strict=True):
            row.suptitle(f"query {query.query_id} · {query.kind}: {query.sql}", fontsize=9)
            if isinstance(query, TupleAccuracy):
                _draw_yield(row.subplots(), query)
            elif isinstance(query, AggregateAccuracy):
                _draw_errors(row.subplots(1, 2), query)


def _draw_yield(ax: Any, query: TupleAccuracy) -> None:
    depths = list(query.yield_by_depth.items())
    labels = [depth_label(d) for d, _ in depths]
    fractions = [stat.fraction or 0.0 for _, stat in depths]
    bars = ax.bar(labels, fractions, color="#2166ac", width=0.6)
    for bar, (depth, stat) in zip(bars, depths, strict=True):
        bar.set_gid(f"yield-{query.query_id}-depth-{depth_label(depth)}")
        ax.annotate(
            f"{stat.delivered}/{stat.expected}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
        )
    overall = "-" if query.tuple_yield is None else f"{100 * query.tuple_yield:.1f}%"
    ax.set_title(f"yield by depth (overall {overall})")
    ax.set_xlabel("depth in the routing tree when sampled")
    ax.set_ylabel("delivered / expected")
    ax.set_ylim(0.0, 1.12)


def _draw_errors(axes: Any, query: AggregateAccuracy) -> None:
    exact_ax, error_ax = axes
    epochs = [e.epoch for e in query.epochs]
    exact_ax.plot(
        epochs,
        [_nan(e.exact_fraction) for e in query.epochs],
        marker="o",
        ms=3,
        color="#1b7837",
        gid=f"exact-{query.query_id}",
    )
    exact_ax.set_ylim(-0.05, 1.05)
    exact_ax.set_title("values exactly right, per epoch")
    epoch_axis(exact_ax)
    exact_ax.set_ylabel("exact fraction")
    for name, label, colour in (
        ("mean_abs_error", "mean", "#2166ac"),
        ("max_abs_error", "max", "#b2182b"),
    ):
        error_ax.plot(
            epochs,
            [_nan(getattr(e, name)) for e in query.epochs],
            marker="o",
            ms=3,
            label=label,
            color=colour,
            gid=f"{label}-abs-error-{query.query_id}",
        )
    error_ax.set_title("absolute error, per epoch")
    epoch_axis(error_ax)
    error_ax.set_ylabel("|delivered - truth|")
    error_ax.legend(fontsize=7)


def _nan(value: float | None) -> float:
    return math.nan if value is None else value
