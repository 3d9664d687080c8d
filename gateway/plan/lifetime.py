"""Sample period from a requested lifetime (TODS 2005 §3.6).

For one node with remaining energy c_rem (J) and a lifetime goal l (hours):

    p_h = c_rem / l                                  energy the node may spend per hour
    e_s = sum of sensor energies + cpu               energy of one sample ...
          + n_rx * e_rx + n_tx * e_tx                ... including the radio
    p_f = floor power of the slot schedule x 3600 s  energy spent per hour whatever the period
    T   = (p_h - p_f) / e_s                          samples per hour it can afford
    period = 3600 s / T

The floor is what the firmware's slot schedule (firmware/core/schedule.h) keeps a node
awake for whatever the epoch: a node running a query listens in its parent's down slot,
SCHED_CTL_SLOT_MS + SCHED_TX_GUARD_MS = 114 ms of every SCHED_CTL_PERIOD_MS = 1024 ms
(11 %), and a relay of a tuple query listens all along (core/runs.c, run_relays_tuples).
Awake means CPU on and radio listening (the emulator's meter, emu/csrc/energy.c); the rest
of the time the node sleeps. Left out, the estimate was 1.2 s for 24 weeks where the
emulated nodes lasted about 500 h (issue 15). When the floor alone spends the budget, no
period meets the lifetime and ``max_lifetime_h`` says what the battery can last. The
root is not planned for: it is powered by the MIB510 board and never sleeps.

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
#: firmware/core/schedule.h: a querying node listens in its parent's down slot
#: (SCHED_CTL_SLOT_MS + SCHED_TX_GUARD_MS) every SCHED_CTL_PERIOD_MS.
DOWN_SLOT_LISTEN_MS = 64.0 + 50.0
CTL_PERIOD_MS = 1024.0
SCHED_INTERVALS_MAX = 8
#: Awake time per epoch around a node's own send beyond the frame itself: backoff, the
#: wait for the ack, the parent's activity tail (schedule.h). Measured, not derived: leaves
#: of a 9-node star (`mote emulate` mica2, seed 1) were awake 0.35-0.36 s per epoch over
#: the down-slot floor at 2 s and 15.2 s epochs.
SEND_AWAKE_MS = 350.0


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
    awake_fraction: float
    """Share of the time the slot schedule keeps the node awake whatever the period."""
    awake_mw: float
    sleep_mw: float
    role: str
    """Which node the estimate is for: a leaf, a relay of aggregates or of tuples."""

    @property
    def floor_mw(self) -> float:
        """Average power of the schedule's awake floor, asleep the rest of the time."""
        return self.awake_fraction * self.awake_mw + (1.0 - self.awake_fraction) * self.sleep_mw

    @property
    def p_f(self) -> float:
        """Joules per hour the floor spends."""
        return self.floor_mw * 1e-3 * 3600.0

    @property
    def feasible(self) -> bool:
        return self.p_h > self.p_f

    @property
    def max_lifetime_h(self) -> float:
        """How long the battery lasts on the floor alone: no period lasts longer."""
        return self.c_rem_j / self.p_f

    @property
    def c_rem_j(self) -> float:
        return self.battery.remaining_joules

    @property
    def p_h(self) -> float:
        """Joules available per hour."""
        return self.c_rem_j / self.lifetime_h

    @property
    def send_awake_uj(self) -> float:
        """The epoch's awake time around the node's send (SEND_AWAKE_MS) at awake power."""
        return SEND_AWAKE_MS * self.awake_mw

    @property
    def e_s_uj(self) -> float:
        sensors = sum(uj for _, uj in self.sensors)
        radio = self.messages_rx * self.rx_uj + self.messages_tx * self.tx_uj
        return sensors + self.cpu_uj + radio + self.send_awake_uj

    @property
    def samples_per_hour(self) -> float:
        """Samples the budget left after the floor pays for (0 when nothing is left)."""
        return max(0.0, self.p_h - self.p_f) / (self.e_s_uj * 1e-6)

    @property
    def period_ms(self) -> float:
        return 3_600_000.0 / self.samples_per_hour if self.samples_per_hour else math.inf

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
            f"{self.rx_uj:g} + {self.messages_tx} tx x {self.tx_uj:g} + send wake "
            f"{SEND_AWAKE_MS:g} ms x {self.awake_mw:g} mW = {self.e_s_uj:,.2f} µJ",
            f"p_f = schedule floor ({self.role}): awake {self.awake_fraction:.1%} x "
            f"{self.awake_mw:g} mW + asleep x {self.sleep_mw:g} mW = {self.floor_mw:.3f} mW"
            f" = {self.p_f:.4f} J/h (at most {self.max_lifetime_h:,.0f} h)",
            f"T = (p_h - p_f) / e_s = {self.p_h - self.p_f:.4f} J/h / "
            f"{self.e_s_uj * 1e-6:.8f} J = {self.samples_per_hour:,.1f} samples/h",
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
    role, awake = schedule_floor(children=children, aggregate=aggregate)
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
        awake_fraction=awake,
        awake_mw=energy.awake_mw,
        sleep_mw=energy.sleep_mw,
        role=role,
    )


def schedule_floor(*, children: int, aggregate: bool) -> tuple[str, float]:
    """(role, awake fraction) the slot schedule imposes whatever the period.

    Every querying node listens in its parent's down slots. A relay of aggregates also
    listens through its children's interval and overhears its parent's: two of the
    epoch's intervals, which are P / 4..8 (schedule.h), so a share of the epoch that no
    longer period shrinks; 2 / 8 is the share at epochs of 8 s and more, a lower bound
    below. A relay of tuples listens all along.
    """
    down = DOWN_SLOT_LISTEN_MS / CTL_PERIOD_MS
    if not children:
        return "leaf", down
    if aggregate:
        return "relay of aggregates", down + 2.0 / SCHED_INTERVALS_MAX
    return "relay of tuples, listens all along", 1.0


def period_units(period_ms: float) -> int:
    """Epoch units (10 ms) that never sample faster than ``period_ms``."""
    return math.ceil(period_ms / 10.0 - 1e-9)
