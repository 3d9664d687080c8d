"""Where the nodes are and how well each hears each other: positions and a CSR link table.

Link models give the reception probability of a directed link from distance:

* ``disc``: 1 within ``radio_range``, 0 beyond (unit-disc radio);
* ``logistic``: ``1 / (1 + exp((d - radio_range) / (0.1 * radio_range)))``, i.e. 50 % at
  ``radio_range``, ~96 % at two thirds of it, with an ``asymmetry`` option that scales each
  direction by its own random factor in ``[1 - asymmetry, 1]`` (real radios are not symmetric).

Links below ``min_prob`` are left out. The ``sinr`` model instead gives every link a
received power (``emu/propagation.py``) and every node a noise floor; its ``prob`` is the
reception probability of a typical frame without interference (``emu/reception.py``), for
reports, while the C medium decides each reception from the powers. An explicit link table
(``emu/linktables.py``) replaces the model entirely. The result is CSR: the out-links of
node ``s`` are ``dst[row[s]:row[s + 1]]`` with ``prob[...]`` (and ``rx_dbm[...]``), the layout
the C medium walks per packet.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from motebase.emu import propagation, reception

LINK_MODELS = ("disc", "logistic")  # by distance alone; "sinr" is by power
# The radio `mote emulate`, `mote run` and NetworkConfig use unless told: the physical one
# (docs/radio.md), since it meets every target of issue 10's table.
DEFAULT_LINK_MODEL = "sinr"
_BLOCK = 256  # nodes per sweep block
EMU_MAX_NODES = 65534  # emu/csrc/moteid.h: what node_index returns for an id no node has


@dataclass(frozen=True)
class Links:
    row: np.ndarray  # uint32, n + 1
    dst: np.ndarray  # uint32
    prob: np.ndarray  # float32
    rx_dbm: np.ndarray | None = None  # float32 per link: the SINR model's received power
    noise_dbm: np.ndarray | None = None  # float32 per node: the SINR model's noise floor

    @property
    def n_nodes(self) -> int:
        return len(self.row) - 1

    def neighbours(self, node: int) -> np.ndarray:
        return self.dst[self.row[node] : self.row[node + 1]]

    def degree(self) -> np.ndarray:
        return np.diff(self.row)


def grid_positions(n: int, spacing: float) -> np.ndarray:
    """Row-major square-ish grid, node 0 in the corner."""
    side = math.ceil(math.sqrt(n))
    ids = np.arange(n)
    return np.stack([(ids % side) * spacing, (ids // side) * spacing], axis=1).astype(np.float64)


def random_positions(n: int, spacing: float, seed: int) -> np.ndarray:
    """Uniform in a square with the density of the grid of the same size; root at the centre."""
    side = math.ceil(math.sqrt(n)) * spacing
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0.0, side, size=(n, 2))
    pos[0] = (side / 2, side / 2)
    return pos


#: The 54 motes of the Intel Berkeley lab deployment (2004), metres; the layout the
#: TinyDB paper's deployment ran on (``--topology intel-lab``, alias ``intel``).
INTEL_LAB = Path(__file__).resolve().parent / "data" / "intel-lab-mote-locs.txt"


def read_motes(path: str | Path) -> list[tuple[int, float, float]]:
    """The ``(moteid, x, y)`` records of a ``moteid x y`` file (one header line), by id;
    ValueError for a line that is not one, or an id listed twice."""
    lines = Path(path).read_text().splitlines()
    records = []
    for lineno, line in enumerate(lines[1:], start=2):
        parts = line.split()
        if not parts:
            continue
        if len(parts) < 3:
            raise ValueError(f"{path}:{lineno}: expected 'moteid x y', got {line!r}")
        records.append((int(parts[0]), float(parts[1]), float(parts[2])))
    if not records:
        raise ValueError(f"{path}: no motes")
    records.sort()
    ids = [mote for mote, _, _ in records]
    twice = [a for a, b in itertools.pairwise(ids) if a == b]
    if twice:
        raise ValueError(f"{path}: mote id {twice[0]} is listed twice")
    return records


#: Where nodes no mote of a positions file has are put: this far from everything and
#: from each other, beyond any radio's reach, so that no link is even computed for them.
ABSENT_SPACING_M = 1.0e7


@dataclass(frozen=True)
class FileLayout:
    """A positions file's network: node ``i`` is the node of mote id ``mote_id(i)``."""

    positions: np.ndarray  # float64, one row per node index 0..max
    #: Node indices no mote of the file has (ids skipped): kept dead and off the air.
    absent: np.ndarray
    #: Whether the file placed mote 0, the basestation; if not it is at ``root``.
    root_listed: bool
    root: tuple[float, float]


def file_layout(
    path: str | Path,
    root_position: tuple[float, float] | None,
    node_index: Callable[[int], int],
) -> FileLayout:
    """A ``moteid x y`` file (one header line, e.g. the Intel lab layout), every mote at
    the node of its own id (``node_index``: emu/csrc/moteid.h), so that results carry the
    file's ids. Mote 0 is the basestation: from the file when it lists it, else added at
    ``root_position`` (default: the centroid of the motes). Ids the file skips become
    absent nodes. ValueError for a duplicate id, an id no mote may have (126, the UART
    address; 65535, broadcast), or mote 0 both listed and given ``root_position``."""
    records = read_motes(path)
    indices = [_mote_index(path, mote, node_index) for mote, _, _ in records]
    positions = np.zeros((max(indices) + 1, 2), dtype=np.float64)
    placed = np.zeros(len(positions), dtype=bool)
    for index, (_, x, y) in zip(indices, records, strict=True):
        positions[index] = (x, y)
        placed[index] = True
    root_listed = bool(placed[0])
    if root_listed and root_position is not None:
        raise ValueError(f"{path} places mote 0, the basestation: drop it or the root position")
    if not root_listed:
        motes = positions[placed]
        positions[0] = root_position if root_position is not None else motes.mean(axis=0)
        placed[0] = True
    absent = np.flatnonzero(~placed)
    far = ABSENT_SPACING_M * np.arange(1, len(absent) + 1, dtype=np.float64)
    positions[absent] = np.stack([-far, -far], axis=1)
    root = (float(positions[0, 0]), float(positions[0, 1]))
    return FileLayout(positions, absent, root_listed, root)


def _mote_index(path: str | Path, mote: int, node_index: Callable[[int], int]) -> int:
    index = node_index(mote) if 0 <= mote <= 0xFFFF else -1
    if not 0 <= index < EMU_MAX_NODES:
        raise ValueError(
            f"{path}: mote id {mote} cannot be a mote (126 is TinyOS's UART address, "
            "65535 broadcast; ids are 0..65534)"
        )
    return index


def file_positions(
    path: str | Path,
    root_position: tuple[float, float] | None,
    node_index: Callable[[int], int],
) -> np.ndarray:
    """The node positions of :func:`file_layout`."""
    return file_layout(path, root_position, node_index).positions


def link_probability(dist: np.ndarray, model: str, radio_range: float) -> np.ndarray:
    if model == "disc":
        return (dist <= radio_range).astype(np.float32)
    if model == "logistic":
        width = 0.1 * radio_range
        z = np.clip((dist - radio_range) / width, -60.0, 60.0)
        return (1.0 / (1.0 + np.exp(z))).astype(np.float32)
    raise ValueError(f"unknown link model {model!r}; choose one of {', '.join(LINK_MODELS)}")


def reach_limit(model: str, radio_range: float, min_prob: float) -> float:
    """Distance beyond which a link's probability falls below ``min_prob``."""
    if model == "logistic" and 0.0 < min_prob < 1.0:
        return radio_range + 0.1 * radio_range * math.log(1.0 / min_prob - 1.0)
    if model == "logistic":
        return math.inf
    return radio_range


def links_from_positions(
    pos: np.ndarray,
    model: str,
    radio_range: float,
    *,
    min_prob: float = 0.1,
    asymmetry: float = 0.0,
    seed: int = 0,
) -> Links:
    """Every ordered pair within reach.

    Nodes are swept in blocks sorted by x; each block is only compared with the nodes
    whose x lies within reach of it, so the work is O(n x neighbours), not O(n^2).
    """
    n = len(pos)
    rng = np.random.default_rng(seed)
    limit = reach_limit(model, radio_range, min_prob)
    by_x = np.argsort(pos[:, 0], kind="stable")
    xs = pos[by_x, 0]
    rows, dsts, probs = [], [], []
    for start in range(0, n, _BLOCK):
        block = by_x[start : start + _BLOCK]
        lo = np.searchsorted(xs, xs[start] - limit, side="left")
        hi = np.searchsorted(xs, xs[min(start + _BLOCK, n) - 1] + limit, side="right")
        cand = by_x[lo:hi]
        dist = np.hypot(
            pos[block, None, 0] - pos[None, cand, 0], pos[block, None, 1] - pos[None, cand, 1]
        )
        prob = link_probability(dist, model, radio_range)
        prob[block[:, None] == cand[None, :]] = 0.0  # no self links
        if asymmetry > 0:
            prob *= rng.uniform(1.0 - asymmetry, 1.0, size=prob.shape).astype(np.float32)
        i, j = np.nonzero(prob >= min_prob)
        rows.append(block[i])
        dsts.append(cand[j])
        probs.append(prob[i, j])
    return to_csr(n, np.concatenate(rows), np.concatenate(dsts), np.concatenate(probs))


def sinr_links(pos: np.ndarray, params: propagation.RadioParams, seed: int) -> Links:
    """The ``sinr`` model's links: powers from :func:`motebase.emu.propagation.link_powers`."""
    powers = propagation.link_powers(pos, params, seed)
    return links_from_powers(len(pos), powers.src, powers.dst, powers.rx_dbm, powers.noise_dbm)


def links_from_powers(
    n: int, src: np.ndarray, dst: np.ndarray, rx_dbm: np.ndarray, noise_dbm: np.ndarray
) -> Links:
    """CSR links carrying powers; ``prob`` is a typical frame's PRR without interference."""
    snr = rx_dbm.astype(np.float64) - noise_dbm[dst]
    prob = reception.prr(snr).astype(np.float32)
    links = to_csr(n, src, dst, prob, rx_dbm.astype(np.float32))
    return Links(links.row, links.dst, links.prob, links.rx_dbm, noise_dbm.astype(np.float32))


def links_from_csv(path: str | Path, n: int) -> Links:
    """``src,dst,prob`` lines; a non-numeric first line is a header."""
    src, dst, prob = [], [], []
    for lineno, line in enumerate(Path(path).read_text().splitlines(), start=1):
        cells = [c.strip() for c in line.split(",")]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            s, d, p = int(cells[0]), int(cells[1]), float(cells[2])
        except (ValueError, IndexError):
            if lineno == 1:
                continue
            raise ValueError(f"{path}:{lineno}: expected 'src,dst,prob', got {line!r}") from None
        if not (0 <= s < n and 0 <= d < n) or s == d or not 0.0 <= p <= 1.0:
            raise ValueError(f"{path}:{lineno}: bad link {s}->{d} p={p} for {n} nodes")
        src.append(s)
        dst.append(d)
        prob.append(p)
    return to_csr(n, np.array(src, np.int64), np.array(dst, np.int64), np.array(prob, np.float32))


def to_csr(
    n: int, src: np.ndarray, dst: np.ndarray, prob: np.ndarray, rx_dbm: np.ndarray | None = None
) -> Links:
    order = np.lexsort((dst, src))
    src, dst, prob = src[order], dst[order], prob[order]
    row = np.zeros(n + 1, dtype=np.uint32)
    row[1:] = np.cumsum(np.bincount(src, minlength=n))
    return Links(
        row=row,
        dst=np.ascontiguousarray(dst, dtype=np.uint32),
        prob=np.ascontiguousarray(prob, dtype=np.float32),
        rx_dbm=None if rx_dbm is None else np.ascontiguousarray(rx_dbm[order], dtype=np.float32),
    )
