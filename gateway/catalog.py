"""The gateway's schema: attributes, aggregates and the per-node energy model.

The catalog plays the role of the Java tools' ``catalog.xml``: TinySQL names are resolved
against it (unknown attributes are an error at the gateway, although a mote would accept
them and report NULL), the FIELD messages take their type code from it, and the planner
takes value ranges (selectivity) and acquisition costs (paper Table III) from it. The data
lives in ``gateway/data/catalog.json`` so a deployment can ship its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

#: Bytes a value of each QueryField/TOSType code occupies in a result tuple (wire-format §10.1).
TYPE_SIZES: Mapping[int, int] = {1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 8: 8, 9: 8}


class CatalogError(ValueError):
    """The catalog data file is malformed."""


@dataclass(frozen=True)
class Attribute:
    """One sampleable attribute: wire type, value range and acquisition cost."""

    name: str
    type_code: int
    min_value: int
    max_value: int
    constant: bool
    energy_uj: float
    time_ms: float
    sensor: str = ""
    #: Where the reading comes from: "mote" (its own state or ADC), or a sensor board.
    board: str = ""
    #: What the numbers are: sensor readings are raw ADC counts.
    units: str = ""

    @property
    def size(self) -> int:
        return TYPE_SIZES[self.type_code]


@dataclass(frozen=True)
class AggregateDef:
    """One aggregate operator as the motes know it (wire-format §9.1)."""

    name: str
    op_id: int
    temporal: bool
    arg_count: int
    exemplary: bool = False
    aliases: tuple[str, ...] = ()
    #: Names of the constant arguments where their meaning is known.
    arg_names: tuple[str, ...] = ()

    def signature(self) -> str:
        """How a query writes it, attribute first: ``WINAVG(attr, window, slide)``."""
        names = self.arg_names or tuple(f"c{i + 1}" for i in range(self.arg_count))
        return f"{self.name}({', '.join(('attr', *names))})"


@dataclass(frozen=True)
class EnergyModel:
    """Per-node costs that are not attribute sampling (paper §3.6)."""

    radio_tx_uj_per_message: float
    radio_rx_uj_per_message: float
    cpu_uj_per_sample: float
    battery_mah: float
    battery_volts: float
    #: Whole mote awake, CPU active and radio listening (mW), and asleep (mW): the
    #: emulator's mica2 currents (emu/csrc/platform.h: 8.0 + 7.4 mA, 15 µA at 3 V). The
    #: defaults keep catalogs written before these terms loading.
    awake_mw: float = 46.2
    sleep_mw: float = 0.045


@dataclass(frozen=True)
class Catalog:
    attributes: Mapping[str, Attribute]
    aggregates: Mapping[str, AggregateDef]
    energy: EnergyModel
    _aggregate_names: Mapping[str, str] = field(default_factory=dict, repr=False)

    def attribute(self, name: str) -> Attribute | None:
        """Case-insensitive lookup, as the motes match attribute names."""
        return self.attributes.get(name.lower())

    def aggregate(self, name: str) -> AggregateDef | None:
        canonical = self._aggregate_names.get(name.upper())
        return None if canonical is None else self.aggregates[canonical]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Catalog:
        try:
            attributes = {a.name: a for a in map(_attribute, data["attributes"])}
            aggregates = {g.name: g for g in map(_aggregate, data["aggregates"])}
            energy = EnergyModel(**{k: float(v) for k, v in data["energy"].items() if k[0] != "_"})
        except (KeyError, TypeError, ValueError) as exc:
            raise CatalogError(f"malformed catalog: {exc!r}") from exc
        return cls(attributes, aggregates, energy, _alias_index(aggregates.values()))

    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        with open(path, encoding="utf-8") as fh:
            return cls.from_mapping(json.load(fh))


def default_catalog() -> Catalog:
    """The catalog shipped with the gateway (gateway/data/catalog.json)."""
    text = files("motebase.gateway").joinpath("data/catalog.json").read_text(encoding="utf-8")
    return Catalog.from_mapping(json.loads(text))


def _attribute(entry: Mapping[str, Any]) -> Attribute:
    type_code = int(entry["type"])
    if type_code not in TYPE_SIZES:
        raise CatalogError(f"attribute {entry['name']!r}: unknown type code {type_code}")
    return Attribute(
        name=str(entry["name"]).lower(),
        type_code=type_code,
        min_value=int(entry["min"]),
        max_value=int(entry["max"]),
        constant=bool(entry["constant"]),
        energy_uj=float(entry["energy_uj"]),
        time_ms=float(entry["time_ms"]),
        sensor=str(entry.get("sensor", "")),
        board=str(entry.get("board", "")),
        units=str(entry.get("units", "")),
    )


def _aggregate(entry: Mapping[str, Any]) -> AggregateDef:
    names = entry.get("arg_names", ())
    if names and len(names) != int(entry["args"]):
        raise CatalogError(f"aggregate {entry['name']!r}: arg_names do not match args")
    return AggregateDef(
        name=str(entry["name"]).upper(),
        op_id=int(entry["id"]),
        temporal=bool(entry["temporal"]),
        arg_count=int(entry["args"]),
        exemplary=bool(entry.get("exemplary", False)),
        aliases=tuple(str(a).upper() for a in entry.get("aliases", ())),
        arg_names=tuple(str(a) for a in entry.get("arg_names", ())),
    )


def _alias_index(aggregates: Iterable[AggregateDef]) -> dict[str, str]:
    index: dict[str, str] = {}
    for agg in aggregates:
        for name in (agg.name, *agg.aliases):
            index[name] = agg.name
    return index
