"""`mote explain` and `mote encode-query`: look at what a TinySQL query becomes."""

from __future__ import annotations

import click

from motebase.gateway.catalog import Catalog, default_catalog
from motebase.gateway.cli.catalog_cmd import catalog_cmd
from motebase.gateway.cli.params import group_option, sql_error
from motebase.gateway.console import make_console
from motebase.gateway.encoder import encode_query
from motebase.gateway.plan import BatteryState, QueryPlan, TinySQLError, compile_query
from motebase.gateway.plan.capacity import capacity
from motebase.gateway.plan.explain import explain
from motebase.gateway.session import query_packet


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
@group_option("AM group in the packets' TOS header.")
@click.option(
    "--message-only",
    is_flag=True,
    help="Print the bare 40-byte QueryMessages, without the TOS header (not for `mote decode`).",
)
def encode_query_cmd(sql: str, qid: int, no_optimize: bool, group: int, message_only: bool) -> None:
    """Print the AM 101 packets the gateway sends for SQL, one per line, lowercase hex:
    TOS header (broadcast, AM 101, --group, length 40) and a 40-byte QueryMessage, the
    form `mote decode` reads (`mote encode-query SQL | mote decode`)."""
    for message in encode_query(_compile(sql, not no_optimize), qid):
        click.echo(message.hex() if message_only else query_packet(message, group).hex())


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
    make_console(highlight=False, soft_wrap=True).print(text, markup=False)


def _catalog() -> Catalog:
    return default_catalog()


COMMANDS: list[click.Command] = [encode_query_cmd, explain_cmd, catalog_cmd]
