"""`snoop enabled=0|1` (AM 103): MIN/MAX suppression by overheard siblings, paper §6.3.2.

The paper compares messages per epoch with and without snooping; the switch is what such a
comparison needs. On a lossless, seeded grid the answer is known either way: MAX is the
largest reading in every epoch. Only the traffic differs.
"""

from __future__ import annotations

from emulated import LIGHT_BASE, light_by_node

from motebase.emu import Network, NetworkConfig
from motebase.emu.experiment import QueryRun, run_experiment
from motebase.gateway.protocol.framing import frame_packet
from motebase.gateway.session import command_packet

NODES = 16
LARGEST = LIGHT_BASE + NODES - 1  # every node reads LIGHT_BASE + its id
MAX = "SELECT MAX(light) FROM sensors EPOCH DURATION 2048"
EPOCHS = 12


def run_max(snoop: int | None) -> tuple[list[int], int, int]:
    """(MAX per epoch, records suppressed, radio frames sent) over the grid."""
    sensors = {"light": light_by_node(NODES)}
    with Network(NetworkConfig(nodes=NODES, lossless=True, seed=3, sensors=sensors)) as net:
        net.run_for(20_000.0)
        if snoop is not None:
            net.uart_write(frame_packet(command_packet("snoop", {"enabled": snoop}, 1)))
            net.run_for(2_000.0)
            assert net.mote_stats(0)["commands_executed"] == 1
        ex = run_experiment(net, [QueryRun(MAX)], epochs=EPOCHS)
        suppressed = sum(net.mote_stats(i)["records_suppressed"] for i in range(NODES))
        sent = int(net.counters()["sent"].sum())
        values = [int(row.columns["MAX(light)"]) for row in ex.outcomes[0].rows]
    return values, suppressed, sent


def test_max_is_exact_with_snooping_off_and_nothing_is_suppressed() -> None:
    on_values, on_suppressed, on_sent = run_max(None)
    off_values, off_suppressed, off_sent = run_max(0)
    assert len(on_values) >= EPOCHS and set(on_values) == {LARGEST}
    assert len(off_values) >= EPOCHS and set(off_values) == {LARGEST}
    assert on_suppressed > 0
    assert off_suppressed == 0
    # the suppressed records are what the comparison measures: with snooping off,
    # every one of them is sent
    assert off_sent > on_sent


def test_snoop_enabled_1_turns_it_back_on() -> None:
    _, suppressed, _ = run_max(1)
    assert suppressed > 0
