"""`mote catalog` (issue 13 §3): the attributes with type, board, source, cost and units,
the note that readings are raw ADC counts, and the aggregates with their arguments, in
both argument orders, and which partial-state layouts the gateway decodes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from motebase.gateway.catalog import default_catalog
from motebase.gateway.cli.main import build_cli
from motebase.gateway.plan import compile_query


def _catalog(*args: str) -> str:
    result = CliRunner().invoke(build_cli(), ["catalog", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_attribute_rows() -> None:
    lines = _catalog().splitlines()
    assert lines[0] == "attributes"
    assert lines[1].split() == ["name", "type", "board", "source", "cost/sample", "units"]
    count = len(default_catalog().attributes)
    rows = {line.split()[0]: line for line in lines[2 : 2 + count]}
    assert set(rows) == set(default_catalog().attributes)
    assert rows["light"] == (
        "  light    uint16  MTS300/MTS310  photo resistor (micasb)      0.09 uJ, 0.9 ms    "
        "raw ADC count (10-bit, 0..1023); no conversion defined"
    )
    assert rows["mag_x"] == (
        "  mag_x    uint16  MTS310         HMC1002 magnetometer         259.5 uJ, 17.9 ms  "
        "raw ADC count (10-bit, 0..1023); no conversion defined"
    )
    assert rows["nodeid"] == (
        "  nodeid   uint16  mote           TOS_LOCAL_ADDRESS            0 uJ, 0 ms         mote id"
    )
    assert lines[2 + count : 5 + count] == [
        "",
        "Sensor readings are raw ADC counts of the mote's 10-bit ADC (0..1023), as the motes "
        "send them; no conversion to physical units is defined or applied.",
        "",
    ]


def test_aggregate_rows() -> None:
    lines = _catalog().splitlines()
    start = lines.index("aggregates")
    assert lines[start + 1].split() == ["aggregate", "over", "states", "decoded", "also", "written"]
    rows = {line.split("(")[0].strip(): line for line in lines[start + 2 :]}
    assert len(rows) == 15  # every aggregate but NOOP, "no aggregate" on the wire
    assert rows["WINAVG"] == (
        "  WINAVG(attr, window, slide)  temporal   16-bit and 32-bit           "
        "WINAVG(window, slide, attr)"
    )
    assert rows["CNT"] == (
        "  CNT(attr)                    per epoch  16-bit and 32-bit           "
        "COUNT(attr), COUNT(*)"
    )
    assert rows["EXPAVG"] == (
        "  EXPAVG(attr, new_bits)       temporal   16-bit and 32-bit           "
        "EXPAVG(new_bits, attr)"
    )
    assert rows["TREND"] == (
        "  TREND(attr, c1, c2, c3)      temporal   16-bit                      "
        "TREND(c1, c2, c3, attr)"
    )
    assert rows["WINRAND"] == (
        "  WINRAND(attr, c1, c2)        temporal   none (results not decoded)  "
        "WINRAND(c1, c2, attr)"
    )


def test_every_listed_signature_compiles_in_both_orders() -> None:
    for entry in json.loads(_catalog("--json"))["aggregates"]:
        constants = ["4", "2", "1"][: len(entry["args"])]
        for args in (["light", *constants], [*constants, "light"]):
            compile_query(f"SELECT {entry['name']}({', '.join(args)}) FROM sensors")


def test_json() -> None:
    data = json.loads(_catalog("--json"))
    assert data["note"].startswith("Sensor readings are raw ADC counts")
    light = next(a for a in data["attributes"] if a["name"] == "light")
    assert light == {
        "name": "light",
        "type": "uint16",
        "type_code": 4,
        "board": "MTS300/MTS310",
        "source": "photo resistor (micasb)",
        "units": "raw ADC count (10-bit, 0..1023); no conversion defined",
        "min": 0,
        "max": 1023,
        "constant": False,
        "energy_uj": 0.09,
        "time_ms": 0.9,
    }
    winavg = next(a for a in data["aggregates"] if a["name"] == "WINAVG")
    assert winavg == {
        "name": "WINAVG",
        "signature": "WINAVG(attr, window, slide)",
        "aliases": [],
        "args": ["window", "slide"],
        "temporal": True,
        "states": ["16-bit", "32-bit"],
    }
    assert [a["name"] for a in data["attributes"]] == list(default_catalog().attributes)
