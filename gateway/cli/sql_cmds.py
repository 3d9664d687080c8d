"""`mote explain` and `mote encode-query`: look at what a TinySQL query becomes."""

from __future__ import annotations

import click
from rich.console import Console

from gateway.catalog import Catalog, default_catalog
from gateway.cli.params import sql_error
from gateway.encoder import encode_query
from gateway.plan import BatteryState, QueryPlan, TinySQLError, compile_query
from gateway.plan.capacity import capacity
from gateway.plan.explain import explain


def _compile(
    sql: str, optimize: bool, battery: BatteryState | None = None, children: int = 0
) -> QueryPlan:
    try:
        return compile_query(sql, optimize=optimize, battery=battery, children=children)
    except TinySQLError as exc:
        raise sql_error(sql, exc) from None


@click.command("encode-query")
@click.argument("sql")
@click.option(
    "--qid",
    type=click.IntRange(0, 254),
    default=1,
    show_default=True,
    help="Query id to put in byte 0.",
)
@click.option(
    "--no-optimize",
    is_flag=True,
    help="Keep the TinyDB tools' expression order (byte-identical to them).",
)
def encode_query_cmd(sql: str, qid: int, no_optimize: bool) -> None:
    """Print the AM 101 QueryMessages (40 bytes each, lowercase hex) for SQL, one per line."""
    for message in encode_query(_compile(sql, not no_optimize), qid):
        click.echo(message.hex())


@click.command("explain")
@click.argument("sql")
@click.option("--no-optimize", is_flag=True, help="Show the plan with the tools' order.")
@click.option(
    "--battery-mah",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Battery capacity for LIFETIME (default: the catalog's 2 AA cells).",
)
@click.option(
    "--volts",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Battery voltage for LIFETIME (default: the catalog's).",
)
@click.option(
    "--remaining",
    type=click.FloatRange(0, 1, min_open=True),
    default=1.0,
    show_default=True,
    help="Fraction of the battery left.",
)
@click.option(
    "--children",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Result messages a node receives from its subtree per epoch (LIFETIME).",
)
@click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=None,
    help="Network size, for the channel capacity (docs/accuracy.md).",
)
def explain_cmd(
    sql: str,
    no_optimize: bool,
    battery_mah: float | None,
    volts: float | None,
    remaining: float,
    children: int,
    nodes: int | None,
) -> None:
    """Show the plan for SQL: fields, expressions, selection order and costs, pushdown,
    LIFETIME arithmetic, and what the query asks of the radio channel."""
    energy = _catalog().energy
    battery = BatteryState(
        battery_mah or energy.battery_mah, volts or energy.battery_volts, remaining
    )
    plan = _compile(sql, not no_optimize, battery, children)
    text = explain(plan)
    load = capacity(plan, nodes)
    if load is not None:
        text += "\nchannel capacity (docs/accuracy.md):\n"
        text += "\n".join(f"  {line}" for line in load.describe())
    Console(highlight=False, soft_wrap=True).print(text, markup=False)


def _catalog() -> Catalog:
    return default_catalog()


COMMANDS: list[click.Command] = [encode_query_cmd, explain_cmd]
