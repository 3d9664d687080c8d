"""Node positions for the stream-static join: Intel-lab ``mote-locs`` files or CSV.

Two formats, told apart by the first line:

- whitespace separated, as the Intel Berkeley lab's ``mote_locs.txt``: an optional
  header ``moteid x_location y_location`` then ``ID X Y`` per line;
- CSV with the header ``node_id,x,y`` (what an emulator writes for its grid).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NodePosition:
    node_id: int
    x: float
    y: float


class TopologyError(ValueError):
    """A topology file line that is not ``id x y``."""


def read_positions(path: str | Path) -> list[NodePosition]:
    text = Path(path).read_text()
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if not lines:
        return []
    if "," in lines[0]:
        return _read_csv(lines, path)
    return _read_whitespace(lines, path)


def _position(fields: list[str], where: str) -> NodePosition:
    if len(fields) != 3:
        raise TopologyError(f"{where}: expected 'id x y', got {fields!r}")
    try:
        return NodePosition(int(fields[0]), float(fields[1]), float(fields[2]))
    except ValueError:
        raise TopologyError(f"{where}: expected 'id x y', got {fields!r}") from None


def _read_whitespace(lines: list[str], path: str | Path) -> list[NodePosition]:
    first = lines[0].split()
    body = lines[1:] if first and not first[0].lstrip("-").isdigit() else lines
    return [_position(line.split(), f"{path}: {line!r}") for line in body]


def _read_csv(lines: list[str], path: str | Path) -> list[NodePosition]:
    rows = list(csv.DictReader(lines))
    missing = {"node_id", "x", "y"} - set(rows[0] if rows else {})
    if rows and missing:
        raise TopologyError(f"{path}: CSV header needs node_id,x,y (missing {sorted(missing)})")
    return [
        _position([row["node_id"], row["x"], row["y"]], f"{path}: row {i + 2}")
        for i, row in enumerate(rows)
    ]


def write_positions_csv(path: str | Path, positions: list[NodePosition]) -> None:
    with Path(path).open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["node_id", "x", "y"])
        for p in positions:
            writer.writerow([p.node_id, p.x, p.y])
