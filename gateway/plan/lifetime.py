"""Sample period from a requested lifetime (TODS 2005 §3.6).

For one node with remaining energy c_rem (J) and a lifetime goal l (hours):

    p_h = c_rem / l                                  energy the node may spend per hour
    e_s = sum of sensor energies + cpu               energy of one sample ...
          + n_rx * e_rx + n_tx * e_tx                ... including the radio
    T   = p_h / e_s                                  samples per hour it can afford
    period = 3600 s / T

Radio messages per sample: the node receives one result per child message (``children``)
and sends its own result plus, for a tuple query, every child result it forwards; an
aggregate query merges children into one record. Sensor energy counts every attribute the
query samples (no credit for predicates that may skip some), so the estimate errs on the
long-lived side. The period is rounded up to the wire's 10-ms units, which can only
lengthen the lifetime.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from motebase.gateway.catalog import Attribute, EnergyModel

HOURS_PER_MS = 1.0 / 3_600_000.0


@dataclass(frozen=True)
class BatteryState:
    """Energy left in a node's battery; the default is the catalog's two AA cells."""

    capacity_mah: float
    volts: float
    remaining_fraction: float = 1.0

    @property
    def remaining_joules(self) -> float:
        return self.capacity_mah / 1000.0 * 3600.0 * self.volts * self.remaining_fraction

    @classmethod
    def full(cls, energy: EnergyModel) -> BatteryState:
        return cls(energy.battery_mah, energy.battery_volts)


@dataclass(frozen=True)
class LifetimeEstimate:
    lifetime_h: float
    battery: BatteryState
    sensors: tuple[tuple[str, float], ...]
    """(attribute, µJ per sample) for each sampled attribute."""
    cpu_uj: float
    messages_rx: int
    messages_tx: int
    rx_uj: float
    tx_uj: float
    min_rate_period_ms: float | None

    @property
    def c_rem_j(self) -> float:
        return self.battery.remaining_joules

    @property
    def p_h(self) -> float:
        """Joules available per hour."""
        return self.c_rem_j / self.lifetime_h

    @property
    def e_s_uj(self) -> float:
        sensors = sum(uj for _, uj in self.sensors)
        return sensors + self.cpu_uj + self.messages_rx * self.rx_uj + self.messages_tx * self.tx_uj

    @property
    def samples_per_hour(self) -> float:
        return self.p_h / (self.e_s_uj * 1e-6)

    @property
    def period_ms(self) -> float:
        return 3_600_000.0 / self.samples_per_hour

    @property
    def meets_min_rate(self) -> bool:
        return self.min_rate_period_ms is None or self.period_ms <= self.min_rate_period_ms

    def arithmetic(self) -> list[str]:
        """The computation, one step per line, for ``mote explain``."""
        b = self.battery
        sensors = " + ".join(f"{uj:g} ({name})" for name, uj in self.sensors) or "0"
        return [
            f"c_rem = {b.capacity_mah:g} mAh x {b.volts:g} V x 3.6 x {b.remaining_fraction:g}"
            f" = {self.c_rem_j:,.1f} J",
            f"l = {self.lifetime_h:,.2f} h",
            f"p_h = c_rem / l = {self.c_rem_j:,.1f} J / {self.lifetime_h:,.2f} h"
            f" = {self.p_h:.4f} J/h",
            f"e_s = sensors {sensors} + cpu {self.cpu_uj:g} + {self.messages_rx} rx x "
            f"{self.rx_uj:g} + {self.messages_tx} tx x {self.tx_uj:g} = {self.e_s_uj:,.2f} µJ",
            f"T = p_h / e_s = {self.p_h:.4f} J/h / {self.e_s_uj * 1e-6:.8f} J"
            f" = {self.samples_per_hour:,.1f} samples/h",
            f"period = 3600 s / T = {self.period_ms / 1000.0:,.3f} s",
        ]


def estimate_lifetime(
    lifetime_ms: float,
    attributes: Sequence[Attribute],
    energy: EnergyModel,
    battery: BatteryState,
    *,
    children: int,
    aggregate: bool,
    min_rate_period_ms: float | None,
) -> LifetimeEstimate:
    return LifetimeEstimate(
        lifetime_h=lifetime_ms * HOURS_PER_MS,
        battery=battery,
        sensors=tuple((a.name, a.energy_uj) for a in attributes if not a.constant),
        cpu_uj=energy.cpu_uj_per_sample,
        messages_rx=children,
        messages_tx=1 if aggregate else 1 + children,
        rx_uj=energy.radio_rx_uj_per_message,
        tx_uj=energy.radio_tx_uj_per_message,
        min_rate_period_ms=min_rate_period_ms,
    )


def period_units(period_ms: float) -> int:
    """Epoch units (10 ms) that never sample faster than ``period_ms``."""
    return math.ceil(period_ms / 10.0 - 1e-9)
