"""Sensor sources: what each attribute of each node reads, evaluated in C.

A source is plain configuration; :meth:`fill` writes it into the C
``emu_source_spec``. One source serves every node it is assigned to and varies
per node by itself (sinusoid phase per node, one random walk per node, one
trace row per node). Traces are handed to C as a pointer to an int16 numpy
array, read in place with no per-sample Python call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Source:
    """Base: uniform noise in [-noise, +noise] is added to every read."""

    noise: float = 0.0

    kind: int = field(default=0, init=False, repr=False)

    def fill(self, spec: Any) -> object | None:
        """Write the C spec; returns an object C keeps a pointer into (or None)."""
        spec.kind = self.kind
        spec.noise = self.noise
        return None


@dataclass(frozen=True)
class Constant(Source):
    value: float = 0.0

    kind: int = field(default=0, init=False, repr=False)

    def fill(self, spec: Any) -> object | None:
        super().fill(spec)
        spec.base = self.value
        return None


@dataclass(frozen=True)
class RandomWalk(Source):
    """Starts at ``start``, moves by up to ``step`` per read, kept within ``start +- bound``."""

    start: float = 500.0
    step: float = 2.0
    bound: float = 100.0

    kind: int = field(default=1, init=False, repr=False)

    def fill(self, spec: Any) -> object | None:
        super().fill(spec)
        spec.base, spec.amplitude, spec.param = self.start, self.step, self.bound
        return None


@dataclass(frozen=True)
class Sine(Source):
    """``base + amplitude * sin(2 pi t / period_s + node * phase_per_node)``."""

    base: float = 500.0
    amplitude: float = 300.0
    period_s: float = 600.0
    phase_per_node: float = 0.0

    kind: int = field(default=2, init=False, repr=False)

    def fill(self, spec: Any) -> object | None:
        super().fill(spec)
        spec.base, spec.amplitude = self.base, self.amplitude
        spec.period_s, spec.param = self.period_s, self.phase_per_node
        return None


@dataclass(frozen=True)
class Square(Source):
    """``high`` for the first ``duty`` fraction of every period, ``low`` otherwise."""

    low: float = 0.0
    high: float = 1000.0
    period_s: float = 60.0
    duty: float = 0.5

    kind: int = field(default=3, init=False, repr=False)

    def fill(self, spec: Any) -> object | None:
        super().fill(spec)
        spec.base, spec.amplitude = self.low, self.high - self.low
        spec.period_s, spec.param = self.period_s, self.duty
        return None


@dataclass(frozen=True)
class Burst(Source):
    """A resting accelerometer (``base``) shaken at 25 Hz with ``amplitude`` for ``length_s``
    once per ``period_s``, at a pseudo-random moment that differs per node and period."""

    base: float = 500.0
    amplitude: float = 300.0
    period_s: float = 30.0
    length_s: float = 2.0

    kind: int = field(default=4, init=False, repr=False)

    def fill(self, spec: Any) -> object | None:
        super().fill(spec)
        spec.base, spec.amplitude = self.base, self.amplitude
        spec.period_s, spec.param = self.period_s, self.length_s
        return None


@dataclass(frozen=True, eq=False)
class Trace(Source):
    """Replayed samples: row ``node % rows`` of a (rows x cols) int16 array.

    With ``dt_ms`` the column is ``t / dt_ms`` (time-indexed); without it each read
    takes the node's next sample. Past the end the last sample is held.
    """

    values: np.ndarray = field(default_factory=lambda: np.zeros((1, 1), np.int16))
    dt_ms: float | None = None

    kind: int = field(default=5, init=False, repr=False)

    def __post_init__(self) -> None:
        array = np.ascontiguousarray(np.atleast_2d(self.values), dtype=np.int16)
        if array.ndim != 2 or array.size == 0:
            raise ValueError("a trace needs a non-empty (rows x samples) array")
        object.__setattr__(self, "values", array)

    @classmethod
    def from_csv(cls, path: str | Path, dt_ms: float | None = None) -> Trace:
        """One line per node (line i feeds node i), comma-separated samples."""
        rows = [
            [int(float(x)) for x in line.split(",") if x.strip()]
            for line in Path(path).read_text().splitlines()
            if line.strip() and not line.lstrip().startswith("#")
        ]
        width = max((len(r) for r in rows), default=0)
        if width == 0:
            raise ValueError(f"{path}: no samples")
        # short rows hold their last sample, as C does past the end
        padded = [r + [r[-1]] * (width - len(r)) if r else [0] * width for r in rows]
        return cls(values=np.array(padded, dtype=np.int16), dt_ms=dt_ms)

    def fill(self, spec: Any) -> object | None:
        from motebase.emu.native import load

        ffi, _ = load()
        super().fill(spec)
        rows, cols = self.values.shape
        spec.trace = ffi.cast("const int16_t *", self.values.ctypes.data)
        spec.rows, spec.cols = rows, cols
        spec.dt_us = round(self.dt_ms * 1000) if self.dt_ms else 0
        return self.values


def uniform(lo: int = 0, hi: int = 1023, reads: int = 4096, rows: int = 16) -> Trace:
    """Readings spread evenly over ``lo..hi``, one per read (TODS 2005 §4.2's assumption).

    The planner estimates a predicate's selectivity as if readings were uniform over the
    catalog range (gateway/plan/ordering.py); with this source a predicate's pass rate
    over n reads is that estimate to within about 1 / n, so the emulated cost of a plan
    can be set beside its model. The k-th read is the base-2 radical inverse of k (van der
    Corput) scaled to the range: any 2^j consecutive reads from a multiple of 2^j fall
    once in each of 2^j equal slices, so a threshold at a quarter of the range is passed
    by exactly 1 read in 4 after every 4 reads. Node rows (``node % rows``) start 65 reads
    apart, the same sequence at different times and at a different place in its blocks,
    so that the nodes' unfinished blocks (one read in four passes, but which one comes
    first differs) even out over a network; past ``reads`` the last value is held.
    """
    span = hi - lo + 1
    k = np.arange(rows, dtype=np.int64)[:, None] * 65 + np.arange(reads, dtype=np.int64)
    inverse = np.zeros(k.shape, dtype=np.float64)
    digit, rest = 0.5, k.copy()
    while rest.any():
        inverse += digit * (rest & 1)
        rest >>= 1
        digit /= 2
    values = lo + np.floor(inverse * span).astype(np.int64)
    return Trace(values=values.astype(np.int16))


def default_sources() -> dict[str, Source]:
    """Plausible signals for every sensor attribute of the mica sensor board."""
    return {
        "light": Sine(base=500, amplitude=300, period_s=600, phase_per_node=0.05, noise=5),
        "temp": RandomWalk(start=480, step=1, bound=60),
        "noise": RandomWalk(start=200, step=20, bound=150),
        "accel_x": Burst(base=500, amplitude=200, period_s=30, length_s=2),
        "accel_y": Burst(base=500, amplitude=150, period_s=45, length_s=3),
        "mag_x": RandomWalk(start=300, step=3, bound=50),
        "mag_y": RandomWalk(start=300, step=3, bound=50),
        "voltage": Constant(value=420),
    }
