"""The CC1000 driver (firmware/avr/cc1000.c) on two simulated ATmega128s.

Builds a small AVR test image per node (tests/avr/sim/radio_test_main.c) and the
simavr harness with its CC1000 part (tests/avr/sim/), runs both nodes in lockstep
on one lossless air and checks what each node counted. Needs avr-gcc, avr-libc and
libsimavr: a missing toolchain fails the test (tox env ``avr`` installs it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flash_images import avr_tool as _tool
from simavr_harness import run as _run

pytestmark = pytest.mark.avr

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "tests" / "avr" / "sim"
F_CPU = 7372800
SECONDS = 20
SENDS = SECONDS * 10 - 1  # one every 100 ms from t = 100 ms
AVR_FLAGS = ["-mmcu=atmega128", f"-DF_CPU={F_CPU}UL", "-Os", "-std=c99", "-Wall", "-Wextra"]
AVR_FLAGS += ["-Werror", "-pedantic"]


def _image(out: Path, node: int, both_send: bool) -> Path:
    elf = out / f"radio{node}{'_both' if both_send else ''}.elf"
    sources = [
        ROOT / "firmware" / "avr" / "cc1000.c",
        ROOT / "firmware" / "net" / "crc16.c",
        SIM / "radio_test_main.c",
    ]
    defines = [f"-DNODE_ID={node}", f"-DBOTH_SEND={int(both_send)}"]
    _run([_tool("avr-gcc"), *AVR_FLAGS, *defines, *map(str, sources), "-o", str(elf)])
    return elf


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cc1000")
    exe = out / "radio_harness"
    sources = [SIM / "radio_harness.c", SIM / "cc1000_part.c"]
    cc = [_tool("gcc"), "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"]
    _run([*cc, *map(str, sources), "-o", str(exe), "-lsimavr"])
    return exe


def _simulate(harness: Path, both_send: bool) -> tuple[list[dict[str, int]], dict[str, int]]:
    out = harness.parent
    elves = [str(_image(out, node, both_send)) for node in (0, 1)]
    lines = [ln for ln in _run([str(harness), str(SECONDS), *elves]).splitlines() if ln[:1] == "{"]
    records = [json.loads(ln) for ln in lines]
    nodes = sorted((r for r in records if "node" in r), key=lambda r: r["node"])
    air = next(r for r in records if "air_overlap_bytes" in r)
    return nodes, air


def _check_radio_setup(node: dict[str, int]) -> None:
    assert node["magic"] == 0xC1C1
    assert node["part_cal"] == 2  # RX (frequency A) and TX (frequency B)
    assert node["cal_timeouts"] == 0
    assert node["rx_crc_fail"] == 0
    assert node["foreign"] == 0
    assert node["dups"] == 0


def test_unicasts_cross_the_air_and_are_acked(harness: Path) -> None:
    (rx, tx), air = _simulate(harness, both_send=False)
    _check_radio_setup(rx)
    _check_radio_setup(tx)
    assert tx["sent"] == SENDS
    assert rx["received"] >= 0.99 * tx["sent"]
    assert rx["gaps"] == 0
    assert tx["done"] == tx["sent"] + tx["retries"]
    assert tx["acked"] == tx["sent"]  # every unicast acked
    assert rx["acks_sent"] == rx["received"]
    assert tx["frame_starts"] == tx["tx_frames"] == tx["done"]
    assert tx["lost"] == 0 and tx["gave_up"] == 0
    assert air["air_overlap_bytes"] <= tx["sent"]  # at most an ack meeting a flush byte


def test_simultaneous_senders_are_separated_by_csma(harness: Path) -> None:
    nodes, air = _simulate(harness, both_send=True)
    for me, peer in ((nodes[0], nodes[1]), (nodes[1], nodes[0])):
        _check_radio_setup(me)
        assert me["sent"] >= SENDS - 1
        assert me["received"] >= 0.99 * peer["sent"]
        assert me["acked"] == me["sent"]
        assert me["lost"] == 0 and me["gave_up"] == 0
    # Both queue a frame at the same instants: carrier sense defers one of them...
    assert nodes[0]["busy_polls"] + nodes[1]["busy_polls"] > 0
    # ...and the starts CSMA cannot tell apart (same backoff +- a byte) collide,
    # go unacked and are sent again.
    assert air["air_overlap_bytes"] > 0
    assert nodes[0]["retries"] + nodes[1]["retries"] > 0
