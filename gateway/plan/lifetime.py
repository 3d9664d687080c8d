"""Sample period from a requested lifetime (TODS 2005 §3.6).

For one node with remaining energy c_rem (J) and a lifetime goal l (hours):

    p_h = c_rem / l                                  energy the node may spend per hour
    e_s = sum of sensor energies + cpu               energy of one sample ...
          + n_rx * e_rx + n_tx * e_tx                ... including the radio
          + awake time of the epoch x awake power    ... and the schedule's wake-ups
    p_f = floor power of the slot schedule x 3600 s  energy spent per hour whatever the period
    T   = (p_h - p_f) / e_s                          samples per hour it can afford
    period = 3600 s / T

Awake means CPU on and radio listening (the emulator's meter, emu/csrc/energy.c); the
rest of the time the node sleeps. The slot schedule (firmware/core/schedule.h) has two
regimes, and the period is the shortest one of either that the budget pays for:

- Epochs under LONG_EPOCH_MS: a querying node listens in its parent's down slot of every
  control period, SCHED_CTL_SLOT_MS + SCHED_TX_GUARD_MS = 114 ms of every 1,024 ms (11 %,
  the floor), and around its send it is awake for a time that grows with the epoch's
  intervals (P / 4..8): it samples, sends, and waits for the end of its parent's interval
  (core/runs.c). That time is measured (SHORT_EPOCH_AWAKE_MS), not derived.
- From LONG_EPOCH_MS on: the down wave comes twice an epoch, so the node listens 2 x 114 ms
  an epoch and has no floor but sleep; a child of the root does not wait for it after
  sending; what is left is a fixed wake-up, LONG_EPOCH_AWAKE_MS an epoch in all.

A period the budget allows only in the long regime but shorter than LONG_EPOCH_MS is
planned at LONG_EPOCH_MS (the node then outlasts the request). A relay of aggregates
also listens through its children's interval and overhears its parent's, two of the
epoch's intervals (a share, 2 / 8 at epochs of 8 s and more, a lower bound below); a
relay of tuples listens all along. When the floor alone spends the budget no period
meets the lifetime, and ``max_lifetime_h`` says what the battery can last. The awake
times were measured for a child of the root (the 9-node star of bench/papers/lifetime.py):
a deeper node also waits for its parent after sending, which they leave out. The root is
not planned for: it is powered by the MIB510 board and never sleeps.

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
from itertools import pairwise

from motebase.gateway.catalog import Attribute, EnergyModel

HOURS_PER_MS = 1.0 / 3_600_000.0
#: firmware/core/schedule.h: a querying node listens in its parent's down slot
#: (SCHED_CTL_SLOT_MS + SCHED_TX_GUARD_MS) of the down wave.
DOWN_SLOT_LISTEN_MS = 64.0 + 50.0
CTL_PERIOD_MS = 1024.0
#: SCHED_LONG_EPOCH_MS: from here on the down wave comes SCHED_LONG_WAVES (2) times an epoch.
LONG_EPOCH_MS = 6 * CTL_PERIOD_MS
SCHED_INTERVALS_MAX = 8
#: Short epochs: awake time per epoch over the down-slot floor, beyond what the radio
#: terms (n_tx x e_tx) pay for: sampling, backoff, the ack, the activity tail after the
#: send, the beacon riding on it, and the wait for the end of the parent's interval --
#: which grows with the interval, P / 8 below 1.5 s and P / round(P / 1 s) in 4..8 above
#: (schedule.h), hence the rise and the falls where the count of intervals steps up.
#: Measured, not derived: the median mote of bench/papers/lifetime.py's 9-node star
#: (`mica2`, 900 s of virtual time after 2 epochs, mean of seeds 1-2, which agree within
#: 1 %), (period ms, ms).
#: Between points the time is interpolated; below the first it shrinks with the period.
SHORT_EPOCH_AWAKE_MS: tuple[tuple[float, float], ...] = (
    (200.0, 131.3),
    (260.0, 173.2),
    (300.0, 200.0),
    (390.0, 248.7),
    (468.0, 284.1),
    (700.0, 348.7),
    (1000.0, 364.7),
    (1500.0, 384.4),
    (2000.0, 362.4),
    (2500.0, 389.1),
    (3088.0, 445.5),
    (3500.0, 474.4),
    (3850.0, 534.3),
    (4000.0, 552.5),
    (4090.0, 582.6),
    # From BEACON_PERIOD_MS (4,096) on, the root's beacon rides on every epoch's interval
    # and ends the wait for it: 160 ms less.
    (4100.0, 421.8),
    (4200.0, 425.6),
    (4500.0, 449.8),
    (5000.0, 334.3),
    (6000.0, 291.6),
)
#: Long epochs: the whole epoch's awake time, the two down slots' 2 x 114 ms included;
#: measured likewise at 8.2, 15.2 and 31 s (360-377 ms, median 361; the same at every
#: period: nothing in it grows with the epoch). With one wave an epoch it was 234 ms.
LONG_EPOCH_AWAKE_MS = 361.0


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
    epoch_awake_ms: float
    """Awake time of each epoch beyond the floor (the schedule's, at ``period_ms``)."""
    period_ms: float
    """The planned period: the shortest the budget pays for (math.inf: none does)."""
    long_epochs: bool
    """Whether the period is in the schedule's long regime (one down wave an epoch)."""

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
        return math.isfinite(self.period_ms)

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
    def epoch_awake_uj(self) -> float:
        """The epoch's awake time beyond the floor at awake power."""
        return self.epoch_awake_ms * self.awake_mw

    @property
    def e_s_uj(self) -> float:
        sensors = sum(uj for _, uj in self.sensors)
        radio = self.messages_rx * self.rx_uj + self.messages_tx * self.tx_uj
        return sensors + self.cpu_uj + radio + self.epoch_awake_uj

    @property
    def samples_per_hour(self) -> float:
        """Samples the planned period takes an hour (0 when none is affordable)."""
        return 3_600_000.0 / self.period_ms if self.feasible else 0.0

    @property
    def spends_budget(self) -> bool:
        """False where the period is the long regime's shortest and the budget is not spent."""
        return abs((self.p_h - self.p_f) / (self.e_s_uj * 1e-6) - self.samples_per_hour) < 1e-6 * (
            1.0 + self.samples_per_hour
        )

    @property
    def meets_min_rate(self) -> bool:
        return self.min_rate_period_ms is None or self.period_ms <= self.min_rate_period_ms

    def arithmetic(self) -> list[str]:
        """The computation, one step per line, for ``mote explain``."""
        b = self.battery
        sensors = " + ".join(f"{uj:g} ({name})" for name, uj in self.sensors) or "0"
        regime = (
            f"down wave twice an epoch (epochs from {LONG_EPOCH_MS / 1000.0:g} s)"
            if self.long_epochs
            else "down wave every 1.024 s"
        )
        lines = [
            f"c_rem = {b.capacity_mah:g} mAh x {b.volts:g} V x 3.6 x {b.remaining_fraction:g}"
            f" = {self.c_rem_j:,.1f} J",
            f"l = {self.lifetime_h:,.2f} h",
            f"p_h = c_rem / l = {self.c_rem_j:,.1f} J / {self.lifetime_h:,.2f} h"
            f" = {self.p_h:.4f} J/h",
            f"schedule: {regime}",
            f"e_s = sensors {sensors} + cpu {self.cpu_uj:g} + {self.messages_rx} rx x "
            f"{self.rx_uj:g} + {self.messages_tx} tx x {self.tx_uj:g} + epoch awake "
            f"{self.epoch_awake_ms:.1f} ms x {self.awake_mw:g} mW = {self.e_s_uj:,.2f} µJ",
            f"p_f = schedule floor ({self.role}): awake {self.awake_fraction:.1%} x "
            f"{self.awake_mw:g} mW + asleep x {self.sleep_mw:g} mW = {self.floor_mw:.3f} mW"
            f" = {self.p_f:.4f} J/h (at most {self.max_lifetime_h:,.0f} h)",
        ]
        if self.spends_budget:
            lines.append(
                f"T = (p_h - p_f) / e_s = {self.p_h - self.p_f:.4f} J/h / "
                f"{self.e_s_uj * 1e-6:.8f} J = {self.samples_per_hour:,.1f} samples/h"
            )
        else:
            lines.append(
                f"T = {self.samples_per_hour:,.1f} samples/h: the shortest epoch of the "
                f"once-an-epoch wave, {LONG_EPOCH_MS / 1000.0:g} s, spends less than p_h "
                "and every shorter one more"
            )
        lines.append(f"period = 3600 s / T = {self.period_ms / 1000.0:,.3f} s")
        return lines


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
    def at(period_ms: float, planned: float) -> LifetimeEstimate:
        long_epochs = period_ms >= LONG_EPOCH_MS
        role, awake = schedule_floor(children=children, aggregate=aggregate, long=long_epochs)
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
            epoch_awake_ms=epoch_awake_ms(period_ms),
            period_ms=planned,
            long_epochs=long_epochs,
        )

    # The short regime, segment by segment of the measured awake times: on each the
    # epoch's energy is E0 + E1 x P, and floor + (E0 + E1 P) / P <= budget (mW) is
    # P >= E0 / (budget - floor - E1). The first P that fits is the shortest period.
    probe = at(LONG_EPOCH_MS, LONG_EPOCH_MS)
    budget_mw = probe.p_h / 3.6
    short = at(1.0, 1.0)
    fixed_uj = short.e_s_uj - short.epoch_awake_uj
    points = ((0.0, 0.0), *SHORT_EPOCH_AWAKE_MS, (LONG_EPOCH_MS, SHORT_EPOCH_AWAKE_MS[-1][1]))
    for (p0, a0), (p1, a1) in pairwise(points):
        slope = (a1 - a0) / (p1 - p0)
        e0 = fixed_uj + energy.awake_mw * (a0 - slope * p0)
        room = budget_mw - short.floor_mw - energy.awake_mw * slope
        if room <= 0.0:
            continue
        period = max(e0 / room, p0, 1e-9)
        if period < p1:
            return at(period, period)
    # The long regime: a fixed epoch, so one closed form.
    room = budget_mw - probe.floor_mw
    if room <= 0.0:
        return at(LONG_EPOCH_MS, math.inf)
    return at(max(probe.e_s_uj / room, LONG_EPOCH_MS), max(probe.e_s_uj / room, LONG_EPOCH_MS))


def epoch_awake_ms(period_ms: float) -> float:
    """The schedule's awake time per epoch beyond its floor, for a child of the root."""
    if period_ms >= LONG_EPOCH_MS:
        return LONG_EPOCH_AWAKE_MS
    points = ((0.0, 0.0), *SHORT_EPOCH_AWAKE_MS)
    for (p0, a0), (p1, a1) in pairwise(points):
        if period_ms <= p1:
            return a0 + (a1 - a0) * (period_ms - p0) / (p1 - p0)
    return SHORT_EPOCH_AWAKE_MS[-1][1]


def schedule_floor(*, children: int, aggregate: bool, long: bool) -> tuple[str, float]:
    """(role, awake fraction) the slot schedule imposes whatever the period.

    Below LONG_EPOCH_MS every querying node listens in its parent's down slot of every
    control period; from it on twice an epoch (counted in ``epoch_awake_ms``). A relay of
    aggregates also listens through its children's interval and overhears its parent's:
    two of the epoch's intervals, which are P / 4..8 (schedule.h), so a share of the
    epoch that no longer period shrinks; 2 / 8 is the share at epochs of 8 s and more, a
    lower bound below. A relay of tuples listens all along.
    """
    down = 0.0 if long else DOWN_SLOT_LISTEN_MS / CTL_PERIOD_MS
    if not children:
        return "leaf", down
    if aggregate:
        return "relay of aggregates", down + 2.0 / SCHED_INTERVALS_MAX
    return "relay of tuples, listens all along", 1.0


def period_units(period_ms: float) -> int:
    """Epoch units (10 ms) that never sample faster than ``period_ms``."""
    return math.ceil(period_ms / 10.0 - 1e-9)
