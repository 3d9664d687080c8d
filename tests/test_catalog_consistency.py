"""The firmware's attribute table (C, what motes sample and what the emulator charges)
and the gateway's catalog (what the planner costs and the decoder types) describe the
same attributes: same names, wire types, constancy and per-sample costs."""

from __future__ import annotations

from typing import Any

from motebase.emu._motesim import ffi, lib
from motebase.gateway.catalog import default_catalog


def _firmware_attributes() -> dict[str, Any]:
    entries = {}
    for attr in range(lib.CATALOG_COUNT):
        entry = lib.catalog_get(attr)
        entries[ffi.string(entry.name).decode()] = entry
    return entries


def test_both_catalogs_list_the_same_attributes() -> None:
    assert set(_firmware_attributes()) == set(default_catalog().attributes)


def test_wire_types_constancy_and_costs_agree() -> None:
    gateway = default_catalog()
    for name, entry in _firmware_attributes().items():
        attribute = gateway.attributes[name]
        assert entry.type == attribute.type_code, name
        assert bool(entry.constant) == attribute.constant, name
        assert entry.energy_nj == round(attribute.energy_uj * 1000), name
        assert entry.time_us == round(attribute.time_ms * 1000), name
