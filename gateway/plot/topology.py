"""The network as a map: where the motes are, how well they hear each other, the routing
tree and each node's depth in it.

The picture is drawn from a :class:`TopologyView`, plain data that an emulated network
(emu/plotting.py, for `mote emulate --plot`) or a result log (:func:`topology_from_log`,
for `mote plot topology`) fills in. Every mote is a circle coloured by its depth with its
id on it (the basestation a square); a dead or never-heard mote is a hollow grey circle.
A tree edge is an arrow from a node to its parent. A link is a thin line coloured by its
reception probability; a pair heard both ways is one line, coloured by the mean of the
two directions.

In an SVG the marks carry ids a reader (or a test) can count: ``node-ID`` for each mote's
label, ``tree-edge-ID`` for each node's arrow to its parent, ``links`` for the group of
link lines (one path per pair).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from motebase.gateway.plot.figure import picture
from motebase.gateway.plot.logdata import LoggedQuery

#: TinyOS 1.x's UART address: the parent the root reports.
UART_ADDR = 0x7E
#: A parent of 0xFFFF or a depth of 0xFF: the node has no route.
NO_PARENT = 0xFFFF
NO_DEPTH = 0xFF
#: Beyond this many motes the ids are left off: they would cover each other.
MAX_LABELLED = 150
ROOT = 0


@dataclass(frozen=True)
class NodeView:
    """One mote: its id, position (metres), parent's mote id and depth (None: no route,
    or not known), and whether it is silent (dead, or never heard from)."""

    mote: int
    x: float
    y: float
    parent: int | None = None
    depth: int | None = None
    silent: bool = False


@dataclass(frozen=True)
class LinkView:
    """A directed link between two motes and its reception probability (0..1)."""

    src: int
    dst: int
    quality: float


@dataclass(frozen=True)
class TopologyView:
    nodes: list[NodeView]
    links: list[LinkView]
    title: str

    def routed(self) -> list[NodeView]:
        """Nodes with a parent drawn: the parent is a mote of the view."""
        motes = {n.mote for n in self.nodes}
        return [n for n in self.nodes if n.parent is not None and n.parent in motes]


# --- from a result log -------------------------------------------------------------------------


def read_positions(path: str | Path) -> dict[int, tuple[float, float]]:
    """The ``moteid x y`` lines of a positions file (header line first: the format of
    `mote emulate --positions`), by mote id; ValueError for a line that is not one."""
    positions: dict[int, tuple[float, float]] = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines()[1:], start=2):
        parts = line.split()
        if not parts:
            continue
        try:
            mote, x, y = int(parts[0]), float(parts[1]), float(parts[2])
        except (ValueError, IndexError):
            raise ValueError(f"{path}:{lineno}: expected 'moteid x y', got {line!r}") from None
        if mote in positions:
            raise ValueError(f"{path}:{lineno}: mote id {mote} is listed twice")
        positions[mote] = (x, y)
    if not positions:
        raise ValueError(f"{path}: no motes")
    return positions


def grid_positions(motes: Iterable[int], spacing: float) -> dict[int, tuple[float, float]]:
    """Motes on the square grid of `mote emulate --topology grid`: node index i (mote i,
    one less from 127 on, as no mote is 126) at column i % side, row i // side."""
    index = {m: m if m < UART_ADDR else m - 1 for m in motes}
    side = math.ceil(math.sqrt(max(index.values(), default=0) + 1))
    return {m: ((i % side) * spacing, (i // side) * spacing) for m, i in index.items()}


def depths_from_parents(parents: Mapping[int, int | None]) -> dict[int, int | None]:
    """Hops to the root (mote 0) along the parents; None where the chain breaks (a parent
    with no parent known) or loops."""
    depths: dict[int | None, int | None] = {ROOT: 0}
    for mote in parents:
        chain: list[int] = []
        at: int | None = mote
        while at not in depths:
            if at is None or at in chain:
                depths.update(dict.fromkeys(chain))
                break
            chain.append(at)
            at = parents.get(at)
        else:
            base = depths[at]
            for hops, node in enumerate(reversed(chain), start=1):
                depths[node] = None if base is None else base + hops
    return {mote: depths[mote] for mote in parents}


def topology_from_log(
    query: LoggedQuery,
    positions: Mapping[int, tuple[float, float]] | None = None,
    spacing: float = 10.0,
) -> TopologyView:
    """The routing tree as ``query``'s readings last reported it: each node's parent (and
    depth, computed from the parents when the query did not select it) from its reading of
    the latest epoch it delivered. Without ``positions`` the motes are laid out on the
    grid of `mote emulate`; with them, a mote 0 the file lacks sits at the centroid, as
    `mote emulate --positions` puts it, and the file's motes never heard from are silent.
    ValueError if the query did not select ``parent`` or a mote has no position."""
    if "parent" not in query.fields:
        raise ValueError(
            f"query {query.query_id} did not select parent, from which the routing tree is "
            "drawn: run one that does, e.g. SELECT nodeid, parent, depth, light FROM sensors"
        )
    latest = query.latest_readings()
    parents = {node: _parent(values.get("parent")) for node, values in latest.items()}
    parents.setdefault(ROOT, None)
    if "depth" in query.fields:
        depths = {node: _depth(values.get("depth")) for node, values in latest.items()}
    else:
        depths = depths_from_parents(parents)
    depths.setdefault(ROOT, 0)
    heard = set(parents) | {p for p in parents.values() if p is not None}
    places = _places(heard, positions, spacing)
    nodes = [
        NodeView(
            mote,
            *places[mote],
            parents.get(mote),
            depths.get(mote),
            silent=mote not in latest and mote != ROOT,
        )
        for mote in sorted(places)
    ]
    epochs = query.epochs()
    span = f"epochs {epochs[0]}..{epochs[-1]}" if epochs else "no readings"
    title = f"routing tree of query {query.query_id} ({span}; each node's latest reading)"
    return TopologyView(nodes, [], title)


def _parent(value: object) -> int | None:
    if not isinstance(value, int) or value in (NO_PARENT, UART_ADDR):
        return None
    return value


def _depth(value: object) -> int | None:
    return value if isinstance(value, int) and value != NO_DEPTH else None


def _places(
    motes: set[int], positions: Mapping[int, tuple[float, float]] | None, spacing: float
) -> dict[int, tuple[float, float]]:
    if positions is None:
        return grid_positions(motes | {ROOT}, spacing)
    places = dict(positions)
    if ROOT not in places:
        xs, ys = zip(*positions.values(), strict=True)
        places[ROOT] = (sum(xs) / len(xs), sum(ys) / len(ys))
    missing = sorted(motes - set(places))
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise ValueError(f"the positions file has no place for mote(s) {shown}")
    return places


# --- drawing ----------------------------------------------------------------------------------


def draw_topology(view: TopologyView, path: str | Path) -> None:
    """Write ``view`` to ``path`` (.svg or .png)."""
    with picture(path, (7.5, 6.5)) as figure:
        ax = figure.add_subplot()
        ax.set_title(view.title)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        places = {n.mote: (n.x, n.y) for n in view.nodes}
        if view.links:
            _draw_links(figure, ax, view.links, places)
        _draw_tree(ax, view, places)
        _draw_nodes(ax, view)


def _draw_links(
    figure: Any, ax: Any, links: list[LinkView], places: Mapping[int, tuple[float, float]]
) -> None:
    from matplotlib.collections import LineCollection

    pairs: dict[tuple[int, int], list[float]] = {}
    for link in links:
        if link.src in places and link.dst in places:
            key = (min(link.src, link.dst), max(link.src, link.dst))
            pairs.setdefault(key, []).append(link.quality)
    keys = sorted(pairs)
    lines = LineCollection(
        [(places[a], places[b]) for a, b in keys],
        cmap="RdYlGn",
        linewidths=0.8,
        alpha=0.7,
        zorder=1,
        gid="links",
    )
    lines.set_array([sum(pairs[k]) / len(pairs[k]) for k in keys])
    lines.set_clim(0.0, 1.0)
    ax.add_collection(lines)
    figure.colorbar(lines, ax=ax, shrink=0.7, label="link reception probability")


def _draw_tree(ax: Any, view: TopologyView, places: Mapping[int, tuple[float, float]]) -> None:
    from matplotlib.patches import FancyArrowPatch

    for node in view.routed():
        assert node.parent is not None
        ax.add_patch(
            FancyArrowPatch(
                (node.x, node.y),
                places[node.parent],
                arrowstyle="-|>",
                mutation_scale=9,
                linewidth=1.4,
                color="black",
                shrinkA=6,
                shrinkB=7,
                zorder=2,
                gid=f"tree-edge-{node.mote}",
            )
        )


def _draw_nodes(ax: Any, view: TopologyView) -> None:
    from matplotlib import colormaps
    from matplotlib.lines import Line2D

    depths = sorted({n.depth for n in view.nodes if n.depth is not None and not n.silent})
    cmap = colormaps["viridis"].resampled(max(len(depths), 2))
    colour = {d: cmap(i / max(len(depths) - 1, 1)) for i, d in enumerate(depths)}
    size = 260 if len(view.nodes) <= 50 else 120 if len(view.nodes) <= MAX_LABELLED else 30
    for node in view.nodes:
        style = _node_style(node, colour)
        ax.scatter([node.x], [node.y], s=size, zorder=3, linewidths=1.0, **style)
        if len(view.nodes) <= MAX_LABELLED:
            ax.text(
                node.x,
                node.y,
                str(node.mote),
                ha="center",
                va="center",
                fontsize=6.5,
                color="black" if node.silent or _light(style["c"]) else "white",
                zorder=4,
                gid=f"node-{node.mote}",
            )
    handles = [
        Line2D([], [], ls="", marker="o", ms=7, mfc=colour[d], mec="black", label=f"depth {d}")
        for d in depths
    ]
    if any(n.depth is None and not n.silent for n in view.nodes):
        handles.append(_legend_dot("lightgrey", "no route"))
    if any(n.silent for n in view.nodes):
        handles.append(_legend_dot("white", "silent (dead / not heard)"))
    if view.routed():
        handles.append(Line2D([], [], color="black", lw=1.4, label="→ parent"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)


def _node_style(node: NodeView, colour: Mapping[int, Any]) -> dict[str, Any]:
    marker = "s" if node.mote == ROOT else "o"
    if node.silent:
        return {"c": "white", "edgecolors": "grey", "marker": marker}
    fill = colour.get(node.depth, "lightgrey") if node.depth is not None else "lightgrey"
    return {"c": [fill], "edgecolors": "black", "marker": marker}


def _light(fill: Any) -> bool:
    """Whether dark text reads better on ``fill`` (a colour or a one-colour list)."""
    from matplotlib.colors import to_rgb

    colour = fill[0] if isinstance(fill, list) else fill
    r, g, b = to_rgb(colour)
    return 0.299 * r + 0.587 * g + 0.114 * b > 0.55


def _legend_dot(fill: str, label: str) -> Any:
    from matplotlib.lines import Line2D

    return Line2D([], [], ls="", marker="o", ms=7, mfc=fill, mec="grey", label=label)
