"""TODS 2005 Table V and Fig 13, queue prioritization: the RMS error of the naive, winavg
and delta result-queue policies on three 1,000-sample signals, when the radio can deliver
only one sample in K = 4, through `mote sweep`'s points on local Spark.

One mote (node 1, beside the root) runs ``SELECT <signal>, ... WHERE nodeid = 1``; its
signal is a trace it reads one sample an epoch (emu/sources.py ``Trace``). The radio
takes one frame from it every ``K x period`` at most (``send_gap_ms``: the emulator
refuses earlier sends and the firmware retries), so results pile up in its queue of 5
(``qlen 5``) and the policy (``qpolicy``) chooses what goes: naive drops the newcomer,
winavg averages the two oldest, delta sends the reading furthest from the last one sent
and evicts the nearest. The basestation puts the delivered readings in epoch order and
holds each until the next; the RMS error is against every sample (``held_rms``).

The paper samples every 64 ms; the wire carries epochs over 64 ms only, and a trace is
read one sample an epoch, so the clock just scales: 256 ms here, one frame a second. The
query selects seven attributes, the signal first (the one delta scores), so that a tuple
fills its frame as TinyDB's results did: motebase bundles up to four narrow tuples a
frame (firmware/result/bundle.h), and the radio would not be the bottleneck.

    python bench/papers/table5.py                  # 1,000 samples: docs/img/table5-*.svg
    python bench/papers/table5.py --samples 120 --out /tmp/t5.json --figures /tmp/t5
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from paper import sweep_rows
from ratios import write_report
from svgplot import Axes, save

from motebase.emu.sweep import SweepSpec

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench" / "results" / "table5.json"
FIGURES = ROOT / "docs" / "img"
PERIOD_MS = 256
K = 4
QUEUE = 5
POLICIES = ("naive", "winavg", "delta")
FIGURED = "accel"  # Fig 13's signal
#: The signal's attribute first (delta scores the first sensor field), then six of these
#: so a tuple is 14 value bytes: two no longer fit one frame (result/bundle.h).
PADDING = ("temp", "noise", "voltage", "accel_y", "mag_y", "light", "accel_x")
#: The paper's Table V (RMS error, its sensors' units).
PAPER = {
    "naive": {"accel": 77, "light": 143, "mag": 63},
    "winavg": {"accel": 64, "light": 129, "mag": 54},
    "delta": {"accel": 63, "light": 81, "mag": 48},
}


def shaking_accel(n: int, rng: np.random.Generator) -> np.ndarray:
    """A resting accelerometer (500) shaken three times: a 6-sample oscillation of up to
    +-300 under a smooth envelope, each shake 12 % of the trace."""
    k = np.arange(n)
    out = 500.0 + rng.normal(0.0, 4.0, n)
    for centre in (0.2, 0.5, 0.8):
        half = 0.06 * n
        envelope = np.clip(1.0 - np.abs(k - centre * n) / half, 0.0, 1.0)
        out += 300.0 * envelope * np.sin(2 * math.pi * k / 6.0)
    return out


def light_steps(n: int, rng: np.random.Generator) -> np.ndarray:
    """A light switched between 200 and 800 every 50 samples (a square wave)."""
    k = np.arange(n)
    return np.where((k // 50) % 2 == 0, 200.0, 800.0) + rng.normal(0.0, 4.0, n)


def slow_mag(n: int, rng: np.random.Generator) -> np.ndarray:
    """A magnetometer turning slowly: 500 +- 200, one period every 250 samples."""
    k = np.arange(n)
    return 500.0 + 200.0 * np.sin(2 * math.pi * k / 250.0) + rng.normal(0.0, 4.0, n)


#: Signal name -> (attribute it is read as, generator).
SIGNALS: dict[str, tuple[str, Callable[[int, np.random.Generator], np.ndarray]]] = {
    "accel": ("accel_x", shaking_accel),
    "light": ("light", light_steps),
    "mag": ("mag_x", slow_mag),
}


def signal(name: str, n: int) -> list[int]:
    """The named signal's n samples, the same every run (seeded)."""
    _, make = SIGNALS[name]
    values = make(n, np.random.default_rng(2005))
    return [int(v) for v in np.clip(np.rint(values), 0, 1023)]


def query(attr: str) -> str:
    fields = ", ".join((attr, *[a for a in PADDING if a != attr][:6]))
    return f"SELECT {fields} FROM sensors WHERE nodeid = 1 SAMPLE PERIOD {PERIOD_MS}"


def specs(samples: int) -> list[SweepSpec]:
    """One spec a signal (its trace and query differ), each a grid over the policies."""
    fixed = {
        "epochs": samples,
        "nodes": 2,
        "lossless": True,
        "qlen": QUEUE,
        # A frame a second: a refused send goes up to 8 ms after the gap (the firmware's
        # retry), and the mote's route beacons take a few frames; .245 of the samples go.
        "send_gap_ms": K * PERIOD_MS - 24.0,
        "series": True,
    }
    return [
        SweepSpec(
            {**fixed, "query": query(attr), "traces": {attr: signal(name, samples)}},
            {"policy": list(POLICIES)},
        )
        for name, (attr, _) in SIGNALS.items()
    ]


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    failed = [r["error"] for r in rows if r["error"] is not None]
    if failed:
        raise SystemExit(f"{len(failed)} points failed: {failed[0]}")
    result: dict[str, Any] = {}
    delivered: dict[str, Any] = {}
    for row in rows:
        name = next(n for n, (attr, _) in SIGNALS.items() if attr in row["traces"])
        key = f"{row['policy']}_{name}"
        series = json.loads(row["series"])
        truth, got = series["truth"]["1"], series["delivered"]["1"]
        result[key] = round(row["held_rms"], 1)
        delivered[key] = {"sampled": len(truth), "delivered": len(got)}
        if name == FIGURED:  # what Fig 13 draws, kept so it can be redrawn from the JSON
            delivered[key]["readings"] = got
    return {"rms": result, "delivered": delivered}


def table(result: dict[str, Any]) -> str:
    lines = [
        "| signal | naive | winavg | delta | paper naive / winavg / delta |",
        "|---|---|---|---|---|",
    ]
    for name in SIGNALS:
        ours = " | ".join(f"{result['rms'][f'{p}_{name}']:.1f}" for p in POLICIES)
        paper = " / ".join(str(PAPER[p][name]) for p in POLICIES)
        lines.append(f"| {name} | {ours} | {paper} |")
    shares = {k: v["delivered"] / v["sampled"] for k, v in result["delivered"].items()}
    lines.append(f"\ndelivered / sampled: {min(shares.values()):.3f}-{max(shares.values()):.3f}")
    return "\n".join(lines)


def figure(name: str, policy: str, truth: list[int], readings: list[list[float]]) -> str:
    """Fig 13: the signal, and what the basestation holds of it under ``policy``."""
    n = len(truth)
    axes = Axes(x_max=n, y_max=1023.0).begin()
    line = " ".join(f"{axes.x(k + 1):.1f},{axes.y(v):.1f}" for k, v in enumerate(truth))
    axes.out.append(f'<polyline points="{line}" fill="none" stroke="#999"/>')
    held = _steps(readings, n)
    path = " ".join(f"{axes.x(e):.1f},{axes.y(v):.1f}" for e, v in held)
    axes.out.append(f'<polyline points="{path}" fill="none" stroke="#c0392b"/>')
    for epoch, value in readings:
        axes.out.append(
            f'<circle cx="{axes.x(epoch):.1f}" cy="{axes.y(value):.1f}" r="2" fill="#c0392b"/>'
        )
    axes.out.append(f'<text x="70" y="36" fill="#999">signal ({name})</text>')
    axes.out.append(f'<text x="70" y="52" fill="#c0392b">delivered, {policy}, held</text>')
    step = 100 if n > 300 else 20
    return axes.end(
        [float(v) for v in range(0, n + 1, step)],
        (0.0, 250.0, 500.0, 750.0, 1000.0),
        f"sample (epoch): one delivered in {K}, queue of {QUEUE}",
        "reading",
    )


def _steps(readings: list[list[float]], n: int) -> list[tuple[float, float]]:
    """The sample-and-hold line through the delivered readings, to the last sample."""
    points: list[tuple[float, float]] = []
    for (epoch, value), nxt in zip(readings, [*readings[1:], [n, 0.0]], strict=True):
        points += [(epoch, value), (nxt[0], value)]
    return points


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--figures", type=Path, default=FIGURES)
    args = parser.parse_args()

    points = [p for s in specs(args.samples) for p in s.points()]
    rows = sweep_rows(points, args.master, "table5")
    result = summarize(rows)
    for policy in ("delta", "winavg"):
        got = result["delivered"][f"{policy}_{FIGURED}"]["readings"]
        svg = figure(FIGURED, policy, signal(FIGURED, args.samples), got)
        save(args.figures / f"table5-fig13-{policy}.svg", svg)
    context = {"samples": args.samples, "period_ms": PERIOD_MS, "k": K, "queue": QUEUE}
    report = {**result["rms"], **context, "paper": PAPER, "delivered": result["delivered"]}
    write_report(args.out, report)
    print(table(result))


if __name__ == "__main__":
    main()
