"""TODS 2005 §6.4 / Fig 15: tuples delivered at the basestation against each mote's sample
rate, for 1 mote and for 4 motes contending for the channel, through `mote sweep`'s points
on local Spark.

The motes sit one hop from the root: a grid at 5 m spacing with a 50 m radio range, so
every mote reaches the root and hears every other mote over links of p ~ 1 (``beyond_one_hop``
is the share of tuples sampled while a mote was routed through a sibling instead). Each
point runs a SELECT for about `--window-s` seconds of epochs after the 30 s warm-up; the
rate is 1 / SAMPLE PERIOD, up to 14.3 samples/s (70 ms, the shortest epoch TinySQL
accepts). Two tuple widths:

- ``frame``: seven fields, one tuple a frame, as a TinyDB result packet is;
- ``bundled``: ``nodeid, light``, which the firmware packs three to a frame
  (firmware/result/bundle.h), to show what bundling does to the same channel.

Delivered counts the root's children's tuples only (the root's own go by serial), over
the epochs the comparison covers; the yield is delivered over sampled. Each row is the
mean over seeds. The knee is the lowest rate whose yield is below 0.9. Default radio
`logistic`, also `sinr`; `lossless` (an ideal channel of unlimited capacity) on request.

    python bench/papers/rate_falloff.py          # seeds 1-3, 20 s a point: docs/img/...
    python bench/papers/rate_falloff.py --seeds 1 --window-s 3 --periods 500,70 \\
        --radios lossless,logistic --out /tmp/r.json --svg /tmp/r.svg
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from paper import sweep_rows
from ratios import write_report
from svgplot import Axes, save

from motebase.emu.sweep import SweepSpec

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench" / "results" / "rate_falloff.json"
FIGURE = ROOT / "docs" / "img" / "rate_falloff.svg"
#: Fields of each width; seven 16-bit fields leave no room for a second tuple in a frame.
WIDTHS = {
    "frame": "nodeid, light, temp, voltage, noise, parent, freeram",
    "bundled": "nodeid, light",
}
MOTES = (1, 4)
PERIODS_MS = (1000, 500, 300, 200, 150, 100, 70)
RADIOS = ("logistic", "sinr")
#: Every mote within 11.2 m of the root, against a 50 m range: one hop, all in earshot.
CLUSTER = {"spacing": 5.0, "radio_range": 50.0}
KNEE_YIELD = 0.9
RADIO_COUNTERS = ("frames_sent", "receptions_collided", "sends_dropped", "queue_dropped")


def sql(width: str, period_ms: int) -> str:
    return f"SELECT {WIDTHS[width]} FROM sensors SAMPLE PERIOD {period_ms}"


def radio_keys(radio: str) -> dict[str, Any]:
    """A radio's sweep keys; ``lossless`` is the ideal channel, not a link model."""
    if radio == "lossless":
        return {"lossless": True, "link_model": "logistic"}
    return {"lossless": False, "link_model": radio}


def points(
    periods: list[int], radios: list[str], seeds: int, window_s: float
) -> list[dict[str, Any]]:
    """Every width x period x radio x mote count x seed; a period's epochs fill the window."""
    out: list[dict[str, Any]] = []
    for width in WIDTHS:
        for period in periods:
            for radio in radios:
                fixed = {
                    "query": sql(width, period),
                    "epochs": max(3, round(window_s * 1000 / period)),
                    **CLUSTER,
                    **radio_keys(radio),
                }
                grid = {"nodes": [m + 1 for m in MOTES], "seed": list(range(1, seeds + 1))}
                for point in SweepSpec(fixed, grid).points():
                    out.append({**point, "width": width, "period_ms": period, "radio": radio})
    return out


def motes_delivery(row: dict[str, Any]) -> dict[str, float]:
    """The motes' tuples of one row (not the root's): delivered a second, the yield, and
    the share sampled while their mote was routed through a sibling (more than one hop)."""
    (report,) = json.loads(row["accuracy"]).values()
    motes = [s for node, s in report["yield_by_node"].items() if node != "0"]
    delivered = sum(s["delivered"] for s in motes)
    expected = sum(s["expected"] for s in motes)
    # A mote whose sends to the root keep failing on a busy channel may take a sibling
    # as its parent (firmware routing); its tuples still count, and this says how many.
    relayed = sum(s["expected"] for d, s in report["yield_by_depth"].items() if d not in ("0", "1"))
    seconds = report["complete_through"] * row["period_ms"] / 1000.0
    return {
        "delivered_per_s": delivered / seconds,
        "yield": delivered / expected,
        "beyond_one_hop": relayed / expected,
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per radio, width and mote count: one entry per rate (means over seeds), the knee
    and the most delivered."""
    failed = [r["error"] for r in rows if r["error"] is not None]
    if failed:
        raise SystemExit(f"{len(failed)} points failed: {failed[0]}")
    groups: dict[tuple[str, str, int, int], list[dict[str, Any]]] = {}
    for row in rows:
        key = (row["radio"], row["width"], row["nodes"] - 1, row["period_ms"])
        groups.setdefault(key, []).append(row)
    curves: dict[str, Any] = {}
    for (radio, width, motes, period), members in sorted(groups.items()):
        scores = [motes_delivery(r) for r in members]
        entry = {
            "period_ms": period,
            "rate_per_mote": 1000.0 / period,
            "offered_per_s": motes * 1000.0 / period,
            "seeds": len(members),
            "delivered_per_s": statistics.mean(s["delivered_per_s"] for s in scores),
            "yield": statistics.mean(s["yield"] for s in scores),
            "beyond_one_hop": statistics.mean(s["beyond_one_hop"] for s in scores),
            **{c: statistics.mean(r[c] for r in members) for c in RADIO_COUNTERS},
        }
        curve = curves.setdefault(radio, {}).setdefault(width, {}).setdefault(str(motes), {})
        curve.setdefault("points", []).append(entry)
    for by_width in curves.values():
        for by_motes in by_width.values():
            for curve in by_motes.values():
                curve["points"].sort(key=lambda e: e["rate_per_mote"])
                curve.update(knee(curve["points"]))
    return {"curves": curves}


def knee(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The lowest rate whose yield is below KNEE_YIELD (None: none is), and the plateau."""
    below = [e["rate_per_mote"] for e in entries if e["yield"] < KNEE_YIELD]
    return {
        "knee_rate_per_mote": below[0] if below else None,
        "max_delivered_per_s": max(e["delivered_per_s"] for e in entries),
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        "| radio | tuple | samples/s a mote | 1 mote: delivered/s (yield) | "
        "4 motes: delivered/s (yield) | 4 motes: collided, given up, queue drops |",
        "|---|---|---|---|---|---|",
    ]
    for radio, by_width in result["curves"].items():
        for width, by_motes in by_width.items():
            one, four = by_motes["1"]["points"], by_motes["4"]["points"]
            for a, b in zip(one, four, strict=True):
                lines.append(
                    f"| {radio} | {width} | {a['rate_per_mote']:.2f} | "
                    f"{a['delivered_per_s']:.1f} ({a['yield']:.3f}) | "
                    f"{b['delivered_per_s']:.1f} ({b['yield']:.3f}) | "
                    f"{b['receptions_collided']:.0f}, {b['sends_dropped']:.0f}, "
                    f"{b['queue_dropped']:.0f} |"
                )
    lines.append("")
    for radio, by_width in result["curves"].items():
        for width, by_motes in by_width.items():
            for motes, curve in by_motes.items():
                where = curve["knee_rate_per_mote"]
                lines.append(
                    f"{radio}, {width}, {motes} mote(s): knee "
                    + (f"at {where:.2f} samples/s a mote" if where else "not reached")
                    + f", at most {curve['max_delivered_per_s']:.1f} tuples/s delivered"
                )
    return "\n".join(lines)


#: The lines drawn: (radio, width, motes) -> colour and how far below its line's end its
#: label goes (px): the two radios' 4-mote lines end at the same height.
LINES = {
    ("logistic", "frame", "1"): ("#2e7d32", 0),
    ("logistic", "frame", "4"): ("#1f4e99", -8),
    ("sinr", "frame", "4"): ("#c62828", 8),
    ("logistic", "bundled", "4"): ("#8e24aa", 0),
}


def svg(result: dict[str, Any], seeds: int) -> str:
    drawn = {
        key: result["curves"][key[0]][key[1]][key[2]]["points"]
        for key in LINES
        if key[0] in result["curves"]
    }
    # Room on the right for the labels, which are written at each line's end.
    x_max = max(e["rate_per_mote"] for pts in drawn.values() for e in pts) * 1.6
    y_max = max(e["delivered_per_s"] for pts in drawn.values() for e in pts) * 1.15
    axes = Axes(x_max=x_max, y_max=y_max).begin()
    for (radio, width, motes), pts in drawn.items():
        colour, dy = LINES[(radio, width, motes)]
        label = f"{motes} mote{'s' if motes != '1' else ''}, {radio}"
        label += ", 3 tuples a frame" if width == "bundled" else ""
        xy = [(e["rate_per_mote"], e["delivered_per_s"]) for e in pts]
        axes.polyline(xy, colour, "")
        x, y = xy[-1]
        axes.out.append(
            f'<text x="{axes.x(x) + 6:.1f}" y="{axes.y(y) + 4 + dy:.1f}" '
            f'fill="{colour}">{label}</text>'
        )
    return axes.end(
        [float(v) for v in range(0, int(x_max) + 1, 2)],
        [float(v) for v in range(0, int(y_max) + 1, 10)],
        f"samples per second, per mote (one hop from the root; mean of {seeds} seeds)",
        "tuples delivered per second, all motes",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--window-s", type=float, default=20.0)
    parser.add_argument("--periods", default=",".join(map(str, PERIODS_MS)))
    parser.add_argument("--radios", default=",".join(RADIOS))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--svg", type=Path, default=FIGURE)
    args = parser.parse_args()
    periods = [int(p) for p in args.periods.split(",")]
    radios = args.radios.split(",")

    the_points = points(periods, radios, args.seeds, args.window_s)
    rows = sweep_rows(the_points, args.master, "rate-falloff")
    result = summarize(rows)
    settings = {"window_s": args.window_s, "seeds": args.seeds, "widths": WIDTHS, **CLUSTER}
    write_report(args.out, {**settings, **result})
    save(args.svg, svg(result, args.seeds))
    print(table(result))


if __name__ == "__main__":
    main()
