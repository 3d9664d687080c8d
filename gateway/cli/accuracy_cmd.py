"""`mote accuracy`: how close delivered results are to the ground truth of the same run."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table

from motebase.gateway.accuracy import (
    UNROUTED,
    AccuracyInputError,
    AccuracyReport,
    AggregateAccuracy,
    QueryAccuracy,
    TupleAccuracy,
    ValueStats,
    compare,
    load_jsonl,
)
from motebase.gateway.cli.plot_cmds import drawing, picture_option
from motebase.gateway.console import make_console

#: Nodes listed by name before "and N more": keeps a 1000-node report readable.
MAX_LISTED = 20
#: Partially delivered nodes shown in the lowest-yield line.
LOWEST_SHOWN = 6
#: Widest a heading rule is drawn.
RULE_WIDTH = 100
_TEXT_COLUMNS = frozenset({"column", "invariant", "examples"})


@click.command("accuracy")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("truth", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON document.")
@click.option(
    "--check", is_flag=True, help="Exit with status 1 if a soundness invariant is violated."
)
@picture_option(
    "Also draw the report (.svg or .png; the plot extra): yield by depth for a tuple "
    "query, exact fraction and absolute error per epoch for an aggregate one."
)
@click.pass_context
def accuracy_cmd(
    ctx: click.Context, results: Path, truth: Path, as_json: bool, check: bool, plot: Path | None
) -> None:
    """Compare RESULTS (`mote query --out` / `mote emulate --out`) with TRUTH (`mote emulate
    --truth`) of the same run: tuple yield by depth and node, aggregate exactness and
    errors, COUNT drift, soundness invariants, how the query spread and stopped.
    docs/accuracy.md explains the numbers."""
    try:
        report = compare(load_jsonl(results), load_jsonl(truth))
    except AccuracyInputError as exc:
        path = {"results": results, "truth": truth}.get(exc.source or "")
        raise click.ClickException(f"{path}: {exc}" if path else str(exc)) from None
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        render(report, make_console(highlight=False))
    if plot is not None:
        from motebase.gateway.plot.accuracy import draw_accuracy

        drawing(draw_accuracy, report, plot)
    if check and not report.sound:
        ctx.exit(1)


# --- the human report -----------------------------------------------------------------------


def render(report: AccuracyReport, console: Console) -> None:
    """One section per query of the truth, then the overall verdict."""
    for query in report.queries.values():
        _render_query(query, console)
    if report.ignored_queries:
        ids = ", ".join(map(str, report.ignored_queries))
        console.print(f"[dim]results of queries without truth, ignored: {ids}[/]")
    violations = report.violations()
    verdict = "[green]sound[/]" if violations == 0 else f"[red]{violations} violations[/]"
    console.print(f"soundness invariants: {verdict}")


def _render_query(query: QueryAccuracy, console: Console) -> None:
    # A heading as wide as a terminal, not as the unbounded width of a pipe.
    rule = Rule(f"query {query.query_id} · {query.kind}", align="left")
    console.print(rule, width=min(console.width, RULE_WIDTH))
    console.print(escape(query.sql), soft_wrap=True)
    epoch_ms = f"{query.epoch_ms} ms" if query.epoch_ms is not None else "once"
    console.print(
        f"[dim]{query.nodes} nodes · epoch {epoch_ms} · compared epochs "
        f"1..{query.complete_through} · {query.ignored_results} later records set aside[/]"
    )
    # Yield and exactness count against what the nodes sampled: say how much that was.
    sampled = f"sampled {_pct(query.sampled)} of node-epochs"
    console.print(sampled if (query.sampled or 0.0) >= 0.95 else f"[yellow]{sampled}[/]")
    if isinstance(query, TupleAccuracy):
        _render_tuples(query, console)
    elif isinstance(query, AggregateAccuracy):
        _render_aggregates(query, console)
    _render_invariants(query, console)
    _render_spread(query, console)
    console.print()


def _render_tuples(query: TupleAccuracy, console: Console) -> None:
    console.print(
        f"[bold]yield {_pct(query.tuple_yield)}[/] "
        f"({query.delivered_readings}/{query.truth_readings}) · wrong values "
        f"{query.wrong_values} · spurious {query.spurious} · duplicates {query.duplicates}"
    )
    if query.yield_by_depth:
        table = _table("depth", "expected", "delivered", "yield")
        for depth, stat in query.yield_by_depth.items():
            table.add_row(
                _depth(depth), str(stat.expected), str(stat.delivered), _pct(stat.fraction)
            )
        console.print(table)
    if query.zero_yield_nodes:
        console.print(f"nodes with nothing delivered: {_listed(query.zero_yield_nodes)}")
    if query.lag_epochs is not None:
        lag = query.lag_epochs
        console.print(
            f"lag behind their epoch's first reading, in epochs: median {lag.median:.1f} · "
            f"90 % {lag.p90:.1f} · latest {lag.latest:.1f}"
        )
    partial = sorted(
        (
            (s.fraction or 0.0, n)
            for n, s in query.yield_by_node.items()
            if 0 < s.delivered < s.expected
        )
    )
    if partial:
        lowest = ", ".join(f"{n} {_pct(f)}" for f, n in partial[:LOWEST_SHOWN])
        more = f" (+{len(partial) - LOWEST_SHOWN} more)" if len(partial) > LOWEST_SHOWN else ""
        console.print(f"lowest node yields: {lowest}{more}")


def _render_aggregates(query: AggregateAccuracy, console: Console) -> None:
    console.print(
        f"[bold]exact {_pct(query.exact_fraction)}[/] ({query.exact_values}/{query.values} values)"
        f" · abs err mean {_num(query.mean_abs_error)} max {_num(query.max_abs_error)}"
        f" · rel err mean {_pct(query.mean_rel_error)} max {_pct(query.max_rel_error)}"
    )
    console.print(
        f"rows: truth {query.truth_rows} · delivered {query.result_rows} · missing "
        f"{query.missing_rows} · spurious {query.spurious_rows} · duplicates {query.duplicates}"
    )
    counted = query.count_over_epochs + query.count_under_epochs + query.count_exact_epochs
    if counted:
        unit = "rows" if query.grouped else "epochs"
        console.print(
            f"COUNT ({unit}): over {query.count_over_epochs} · under {query.count_under_epochs}"
            f" · exact {query.count_exact_epochs} · max over {_num(query.count_max_over)}"
        )
    previous = query.previous_epoch_exact_fraction
    # Only telling when it beats the real thing: constant values match any epoch.
    if previous is not None and previous > (query.exact_fraction or 0.0):
        console.print(f"delivered values equal to the previous epoch's truth: {_pct(previous)}")
    console.print(_epoch_table(query))
    if len(query.columns) > 1:
        console.print(_column_table(query))
    if query.grouped:
        console.print(_group_table(query))


def _epoch_table(query: AggregateAccuracy) -> Table:
    with_count = any(e.count_truth is not None for e in query.epochs)
    headers = ["epoch", "rows", "got", "miss", "spur", "exact", "mean abs", "max abs", "max rel"]
    table = _table(*headers, *(["COUNT", "truth"] if with_count else []))
    for e in query.epochs:
        cells = [e.epoch, e.truth_rows, e.result_rows, e.missing_rows, e.spurious_rows]
        row = [str(c) for c in cells] + _error_cells(e)
        if with_count:
            row += [_num(e.count_delivered), _num(e.count_truth)]
        table.add_row(*row)
    return table


def _column_table(query: AggregateAccuracy) -> Table:
    table = _table("column", "values", "exact", "mean abs", "max abs", "max rel")
    for name, s in query.columns.items():
        table.add_row(escape(name), str(s.values), *_error_cells(s))
    return table


def _error_cells(s: ValueStats) -> list[str]:
    """exact, mean abs, max abs, max rel: the error columns of the epoch and column tables."""
    return [
        _pct(s.exact_fraction),
        _num(s.mean_abs_error),
        _num(s.max_abs_error),
        _pct(s.max_rel_error),
    ]


def _group_table(query: AggregateAccuracy) -> Table:
    table = _table("group", "values", "exact", "mean abs", "missing", "spurious")
    for group, g in query.groups.items():
        table.add_row(
            str(group),
            str(g.values),
            _pct(g.exact_fraction),
            _num(g.mean_abs_error),
            str(g.missing_rows),
            str(g.spurious_rows),
        )
    return table


def _render_invariants(query: QueryAccuracy, console: Console) -> None:
    broken = {name: n for name, n in query.invariant_violations.items() if n}
    if not broken:
        names = ", ".join(query.invariant_violations)
        console.print(f"invariants: [green]all hold[/] [dim]({names})[/]")
        return
    table = _table("invariant", "violations", "examples", title="[red]invariants violated[/]")
    for name, count in broken.items():
        examples = "\n".join(escape(e) for e in query.violation_examples.get(name, []))
        table.add_row(name, str(count), examples)
    console.print(table)


def _render_spread(query: QueryAccuracy, console: Console) -> None:
    d = query.dissemination
    line = f"dissemination: {d.nodes_reached}/{d.nodes} nodes reached"
    if d.all_reached_at_epoch is not None:
        line += f" · all by epoch {d.all_reached_at_epoch}, {d.epochs_before_all} after the first"
    else:
        line += f" · [yellow]{d.never_reached} never[/]"
    console.print(line)
    stop = query.stop
    if stop is not None:
        console.print(
            f"stop at epoch {stop.stopped_at_epoch}: stopped within 2 epochs "
            f"{_pct(stop.stopped_within_2)}, within 5 {_pct(stop.stopped_within_5)}"
        )
        console.print(
            f"  still sampling at epoch {stop.last_observed_epoch}: "
            f"{_listed(stop.still_sampling)} · never freed: {_listed(stop.not_freed)}"
        )
    anomalies = {k: v for k, v in query.anomalies.items() if v}
    shown = " ".join(f"{k} {v}" for k, v in sorted(anomalies.items())) if anomalies else "none"
    console.print(f"firmware anomalies: {shown}")


# --- formatting -----------------------------------------------------------------------------


def _table(*headers: str, title: str | None = None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", padding=(0, 1))
    for header in headers:
        table.add_column(header, justify="left" if header in _TEXT_COLUMNS else "right")
    return table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


def _depth(depth: int | None) -> str:
    if depth is None:
        return "unknown"
    return f"{depth} (unrouted)" if depth == UNROUTED else str(depth)


def _listed(nodes: Iterable[int]) -> str:
    nodes = list(nodes)
    if not nodes:
        return "none"
    shown = ", ".join(map(str, nodes[:MAX_LISTED]))
    return shown + (f" and {len(nodes) - MAX_LISTED} more" if len(nodes) > MAX_LISTED else "")


COMMANDS = [accuracy_cmd]
