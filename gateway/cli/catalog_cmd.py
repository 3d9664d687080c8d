"""`mote catalog`: the attributes a query can read and the aggregates it can compute, as
the gateway's catalog (gateway/data/catalog.json) defines them, with what the numbers
mean."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from motebase.gateway.catalog import AggregateDef, Attribute, Catalog, default_catalog
from motebase.gateway.protocol.aggregates import state_struct

#: The catalog's type codes (QueryField / TOSType) as C types.
TYPE_NAMES = {
    1: "int8",
    2: "uint8",
    3: "int16",
    4: "uint16",
    5: "int32",
    6: "uint32",
    7: "timestamp",
    8: "string",
    9: "bytes",
}
#: What every sensor reading is: the catalog defines no conversion, and none is applied
#: anywhere between the mote and the Parquet files.
READINGS_NOTE = (
    "Sensor readings are raw ADC counts of the mote's 10-bit ADC (0..1023), as the motes "
    "send them; no conversion to physical units is defined or applied."
)
#: Window arguments for asking the decoder whether a windowed state has a layout: the
#: answer does not depend on their values.
_PROBE_ARGS = (2, 1)


def _states(agg: AggregateDef) -> list[str]:
    """The partial-state layouts the gateway can decode for ``agg``: TinyDB's 16-bit one
    (unmodified motes) and motebase's 32-bit one."""
    layouts = []
    if state_struct(agg.op_id, _PROBE_ARGS, wide=False) is not None:
        layouts.append("16-bit")
    if state_struct(agg.op_id, _PROBE_ARGS, wide=True) is not None:
        layouts.append("32-bit")
    return layouts


def _aggregates(catalog: Catalog) -> list[AggregateDef]:
    # NOOP (op 0) is the query message's "no aggregate", not something a query can name.
    return [agg for agg in catalog.aggregates.values() if agg.op_id]


def attribute_json(attr: Attribute) -> dict[str, Any]:
    return {
        "name": attr.name,
        "type": TYPE_NAMES[attr.type_code],
        "type_code": attr.type_code,
        "board": attr.board,
        "source": attr.sensor,
        "units": attr.units,
        "min": attr.min_value,
        "max": attr.max_value,
        "constant": attr.constant,
        "energy_uj": attr.energy_uj,
        "time_ms": attr.time_ms,
    }


def aggregate_json(agg: AggregateDef) -> dict[str, Any]:
    return {
        "name": agg.name,
        "signature": agg.signature(),
        "aliases": list(agg.aliases),
        "args": list(agg.arg_names) or [f"c{i + 1}" for i in range(agg.arg_count)],
        "temporal": agg.temporal,
        "states": _states(agg),
    }


def catalog_json(catalog: Catalog) -> dict[str, Any]:
    return {
        "note": READINGS_NOTE,
        "attributes": [attribute_json(a) for a in catalog.attributes.values()],
        "aggregates": [aggregate_json(a) for a in _aggregates(catalog)],
    }


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell; the last column is not padded."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in (header, *rows)
    ]


def _cost(attr: Attribute) -> str:
    return f"{attr.energy_uj:g} uJ, {attr.time_ms:g} ms"


def attribute_lines(catalog: Catalog) -> list[str]:
    rows = [
        (a.name, TYPE_NAMES[a.type_code], a.board, a.sensor, _cost(a), a.units)
        for a in catalog.attributes.values()
    ]
    return _table(("name", "type", "board", "source", "cost/sample", "units"), rows)


def aggregate_lines(catalog: Catalog) -> list[str]:
    rows = []
    for agg in _aggregates(catalog):
        also = ", ".join(f"{alias}(attr)" for alias in agg.aliases)
        if agg.arg_count:  # the TinyDB tools' order: constants first
            names = agg.arg_names or tuple(f"c{i + 1}" for i in range(agg.arg_count))
            also = f"{agg.name}({', '.join((*names, 'attr'))})"
        if agg.name == "CNT":  # the binder takes '*' for CNT alone
            also += ", COUNT(*)"
        states = " and ".join(_states(agg)) or "none (results not decoded)"
        rows.append(
            (agg.signature(), "temporal" if agg.temporal else "per epoch", states, also or "-")
        )
    return _table(("aggregate", "over", "states decoded", "also written"), rows)


@click.command("catalog")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the catalog as one JSON object instead."
)
def catalog_cmd(as_json: bool) -> None:
    """List the attributes a query can read (type, where the reading comes from, its cost
    per sample, what its numbers mean) and the aggregates it can compute, with their
    arguments."""
    catalog = default_catalog()
    if as_json:
        click.echo(json.dumps(catalog_json(catalog), indent=2))
        return
    click.echo("attributes")
    for line in attribute_lines(catalog):
        click.echo(f"  {line}")
    click.echo(f"\n{READINGS_NOTE}\n")
    click.echo("aggregates")
    for line in aggregate_lines(catalog):
        click.echo(f"  {line}")
