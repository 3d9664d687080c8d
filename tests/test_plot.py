"""The pictures (issue 13 §4): `mote emulate --plot`, `mote plot topology`, `mote plot log`,
`mote accuracy --plot` and docs/make_pictures.py, on real emulated runs through the real
CLI. Each SVG is parsed and its marks counted by the ids the drawing gives them (node
labels, tree edges, link lines, series, bars), and placed where the data says.

Needs the plot extra (tox env `plot`); tests/test_plot_without_extra.py covers the
messages without it.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from motebase.emu.topology import INTEL_LAB, grid_positions, read_motes
from motebase.gateway.plot.figure import STYLE
from motebase.gateway.plot.logdata import LoggedQuery, LoggedReading, read_log
from motebase.gateway.plot.topology import (
    NodeView,
    TopologyView,
    depths_from_parents,
    draw_topology,
    read_positions,
    topology_from_log,
)
from motebase.gateway.plot.topology import grid_positions as plot_grid_positions

pytestmark = pytest.mark.plot

MOTE = str(Path(sys.executable).with_name("mote"))  # the installed console script
REPO = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TUPLE_SQL = "SELECT nodeid, parent, depth, light FROM sensors EPOCH DURATION 2s"
AGGREGATE_SQL = "SELECT AVG(light), COUNT(*) FROM sensors EPOCH DURATION 2s"
GRID = 25
# A 5 x 5 grid 10 m apart, lossless (the disc radio reaches 15 m): each node hears its
# 8 nearest neighbours, 20 + 20 straight pairs and 2 x 16 diagonal ones.
GRID_PAIRS = 72


def mote(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MOTE, *map(str, args)], capture_output=True, text=True, timeout=180, check=False, cwd=cwd
    )


def ok(*args: str | Path, cwd: Path) -> str:
    result = mote(*args, cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


@dataclass(frozen=True)
class Run:
    """One emulated run and the files `mote emulate` wrote."""

    dir: Path
    log: Path
    results: Path
    truth: Path
    plot: Path


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """25 lossless motes, a tuple and an aggregate query for 5 epochs, drawn at the end."""
    d = tmp_path_factory.mktemp("grid")
    run = Run(d, d / "log", d / "results.jsonl", d / "truth.jsonl", d / "network.svg")
    ok("emulate", "--nodes", GRID, "--lossless", "--epochs", "5",
       "--query", TUPLE_SQL, "--query", AGGREGATE_SQL, "--log", run.log,
       "--out", run.results, "--truth", run.truth, "--plot", run.plot, cwd=d)  # fmt: skip
    return run


# --- reading an SVG ---------------------------------------------------------------------------


def groups(path: Path) -> dict[str, ET.Element]:
    """The SVG's groups by id (parsing it as XML on the way: it must be well formed)."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return {g.attrib["id"]: g for g in root.iter(f"{SVG}g") if "id" in g.attrib}


def ids(path: Path, prefix: str) -> set[str]:
    return {i for i in groups(path) if i.startswith(prefix)}


def labels(path: Path) -> dict[int, tuple[float, float]]:
    """Each mote's label (``node-ID``): its text must be the id; where it is drawn."""
    out = {}
    for gid, group in groups(path).items():
        if gid.startswith("node-"):
            text = group.find(f"{SVG}text")
            assert text is not None and text.text == gid.removeprefix("node-")
            out[int(text.text)] = (float(text.attrib["x"]), float(text.attrib["y"]))
    return out


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- mote emulate --plot ----------------------------------------------------------------------


def test_emulate_plot_draws_every_mote_link_and_tree_edge(grid: Run) -> None:
    _assert_grid(labels(grid.plot))
    # Lossless: every node but the root has a route.
    assert ids(grid.plot, "tree-edge-") == {f"tree-edge-{i}" for i in range(1, GRID)}
    lines = groups(grid.plot)["links"].findall(f"{SVG}path")
    assert len(lines) == GRID_PAIRS


def _assert_grid(placed: dict[int, tuple[float, float]]) -> None:
    """Motes 0..24 where `mote emulate` puts them: mote i at column i % 5, row i // 5,
    evenly spaced (rows go up: SVG's y points down)."""
    assert sorted(placed) == list(range(GRID))
    (x0, y0), (x1, _), (_, y5) = placed[0], placed[1], placed[5]
    assert x1 > x0 and y5 < y0
    for i in range(GRID):
        column, row = i % 5, i // 5
        assert placed[i] == pytest.approx((x0 + column * (x1 - x0), y0 + row * (y5 - y0)))


def test_emulate_plot_of_a_positions_file_keeps_its_ids(tmp_path: Path) -> None:
    motes = tmp_path / "motes.txt"
    motes.write_text("moteid x y\n5 0 0\n12 10 6\n40 20 0\n")
    plot = tmp_path / "network.svg"
    ok("emulate", "--positions", motes, "--range", "12", "--lossless", "--duration", "40s",
       "--plot", plot, "--summary-rows", "0", cwd=tmp_path)  # fmt: skip
    # The 36 ids the file skips are absent: not drawn, not linked.
    placed = labels(plot)
    assert sorted(placed) == [0, 5, 12, 40]
    _assert_line_layout(placed)
    # The root, added at the centroid (10, 2), reaches all three; 5 and 40 reach 12 (11.7
    # m), not each other (20 m).
    assert len(groups(plot)["links"].findall(f"{SVG}path")) == 5
    assert ids(plot, "tree-edge-") == {"tree-edge-5", "tree-edge-12", "tree-edge-40"}


def _assert_line_layout(placed: dict[int, tuple[float, float]]) -> None:
    """Motes 5, 12, 40 at (0, 0), (10, 6), (20, 0); mote 0 at their centroid (10, 2)."""
    (x0, y0), (x5, y5), (x12, y12), (x40, y40) = (placed[m] for m in (0, 5, 12, 40))
    assert x5 < x0 < x40 and x0 == pytest.approx(x12)
    assert y5 == pytest.approx(y40)
    assert y12 < y0 < y5  # 6 m above 2 m above 0 m, in SVG's downward y
    assert (y5 - y0) / (y5 - y12) == pytest.approx(2 / 6)


def test_the_emulated_network_as_a_png(tmp_path: Path) -> None:
    plot = tmp_path / "network.PNG"  # the suffix in any case
    ok("emulate", "--nodes", "4", "--duration", "5s", "--plot", plot, cwd=tmp_path)
    width, height = png_size(plot)
    assert (width, height) == (7.5 * STYLE["savefig.dpi"], 6.5 * STYLE["savefig.dpi"])


def test_a_picture_is_svg_or_png(tmp_path: Path) -> None:
    result = mote("emulate", "--nodes", "4", "--duration", "5s", "--plot", "net.pdf", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.endswith(
        "Error: Invalid value for '--plot': net.pdf: a picture file ends in .svg or .png, "
        "not .pdf\n"
    )


# --- mote plot topology -----------------------------------------------------------------------


def test_plot_topology_draws_the_tree_the_readings_report(grid: Run) -> None:
    out = grid.dir / "tree.svg"
    stdout = ok("plot", "topology", grid.log, "--out", out, cwd=grid.dir)
    assert stdout == f"wrote {out}: query 1, 25 motes, 24 with a parent\n"
    # No positions file: the grid of `mote emulate`.
    _assert_grid(labels(out))
    assert ids(out, "tree-edge-") == {f"tree-edge-{i}" for i in range(1, GRID)}
    assert "links" not in groups(out)  # a log knows no link qualities


def test_plot_topology_uses_a_positions_file(grid: Run) -> None:
    positions = grid.dir / "line.txt"
    # Motes 0..24 of the log on a line, and mote 99, which never spoke.
    positions.write_text(
        "moteid x y\n" + "".join(f"{m} {3 * m} 0\n" for m in range(GRID)) + "99 0 50\n"
    )
    out = grid.dir / "line.svg"
    ok("plot", "topology", grid.log, "--out", out, "--positions", positions, cwd=grid.dir)
    placed = labels(out)
    assert sorted(placed) == [*range(GRID), 99]
    assert len({round(y, 3) for m, (_, y) in placed.items() if m != 99}) == 1
    assert [m for m in sorted(placed, key=lambda m: placed[m][0]) if m != 99] == list(range(GRID))


def test_plot_topology_needs_a_query_that_selected_parent(grid: Run) -> None:
    result = mote("plot", "topology", grid.log, "--qid", "2", "--out", "t.svg", cwd=grid.dir)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: query 2 did not select parent, from which the routing tree is drawn: run one "
        "that does, e.g. SELECT nodeid, parent, depth, light FROM sensors\n"
    )
    assert not (grid.dir / "t.svg").exists()


def test_plot_topology_of_a_positions_file_run(tmp_path: Path) -> None:
    motes = tmp_path / "motes.txt"
    motes.write_text("moteid x y\n5 0 0\n12 10 6\n40 20 0\n")
    ok("emulate", "--positions", motes, "--range", "12", "--lossless", "--epochs", "2",
       "--query", "SELECT nodeid, parent FROM sensors EPOCH DURATION 2s",
       "--log", tmp_path / "log", cwd=tmp_path)  # fmt: skip
    out = tmp_path / "tree.svg"
    ok("plot", "topology", tmp_path / "log", "--positions", motes, "--out", out, cwd=tmp_path)
    placed = labels(out)
    assert sorted(placed) == [0, 5, 12, 40]  # the file's ids, the root at the centroid
    _assert_line_layout(placed)
    assert ids(out, "tree-edge-") == {"tree-edge-5", "tree-edge-12", "tree-edge-40"}


def test_topology_from_log_counts_depths_when_the_query_has_none() -> None:
    query = LoggedQuery(7, "SELECT nodeid, parent FROM sensors", ["nodeid", "parent"], False)
    query.readings += [
        LoggedReading(1, 0, {"nodeid": 0, "parent": 126}),
        LoggedReading(1, 3, {"nodeid": 3, "parent": 0}),
        LoggedReading(1, 4, {"nodeid": 4, "parent": 0}),
        LoggedReading(2, 4, {"nodeid": 4, "parent": 3}),  # the latest reading wins
        LoggedReading(2, 9, {"nodeid": 9, "parent": 4}),
        LoggedReading(2, 8, {"nodeid": 8, "parent": 0xFFFF}),
    ]
    view = topology_from_log(query, {0: (0, 0), 3: (1, 0), 4: (2, 0), 8: (3, 0), 9: (4, 0),
                                     11: (5, 0)})  # fmt: skip
    assert view.nodes == [
        NodeView(0, 0, 0, None, 0),
        NodeView(3, 1, 0, 0, 1),
        NodeView(4, 2, 0, 3, 2),
        NodeView(8, 3, 0, None, None),
        NodeView(9, 4, 0, 4, 3),
        NodeView(11, 5, 0, None, None, silent=True),
    ]
    assert view.title == "routing tree of query 7 (epochs 1..2; each node's latest reading)"


def test_depths_follow_the_parents_and_stop_at_breaks_and_loops() -> None:
    parents = {0: None, 1: 0, 2: 1, 3: 2, 5: 6, 7: 8, 8: 7}
    assert depths_from_parents(parents) == {0: 0, 1: 1, 2: 2, 3: 3, 5: None, 7: None, 8: None}


def test_a_log_without_positions_is_laid_out_as_emulate_lays_out_a_grid() -> None:
    for n in (1, 9, 25, 30, 130):
        motes = [m if m < 126 else m + 1 for m in range(n)]  # no mote is 126
        laid = plot_grid_positions(motes, 10.0)
        assert [laid[m] for m in motes] == [tuple(p) for p in grid_positions(n, 10.0).tolist()]


def test_positions_files_read_as_emulate_reads_them() -> None:
    expected = {mote: (x, y) for mote, x, y in read_motes(INTEL_LAB)}
    assert read_positions(INTEL_LAB) == expected


def test_a_positions_file_without_a_mote_of_the_log_is_refused(grid: Run) -> None:
    positions = grid.dir / "few.txt"
    positions.write_text("moteid x y\n1 0 0\n2 10 0\n")
    result = mote("plot", "topology", grid.log, "--positions", positions, "--out", "x.svg",
                  cwd=grid.dir)  # fmt: skip
    assert (result.returncode, result.stderr) == (
        1,
        "Error: the positions file has no place for mote(s) 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 ...\n",
    )


# --- mote plot log ----------------------------------------------------------------------------


def test_plot_log_draws_the_delivery_heatmap_and_a_line_per_node(grid: Run) -> None:
    out = grid.dir / "tuples.svg"
    epochs = sorted({r["epoch"] for r in jsonl(grid.results) if r["query_id"] == 1})
    stdout = ok("plot", "log", grid.log, "--out", out, cwd=grid.dir)
    assert stdout == f"wrote {out}: query 1 (tuple, epochs {epochs[0]}..{epochs[-1]})\n"
    found = groups(out)
    images = [e for e in ET.parse(out).getroot().iter(f"{SVG}image") if e.get("id") == "delivery"]
    assert len(images) == 1
    assert ids(out, "series-") == {f"series-{n}" for n in range(GRID)}
    # Each node's line has a point per epoch it delivered: its light readings, in order.
    delivered = {(r["node_id"], r["epoch"]) for r in jsonl(grid.results) if r["query_id"] == 1}
    for node in (0, 7, 24):
        path = found[f"series-{node}"].find(f"{SVG}path")
        assert path is not None
        points = path.attrib["d"].split("L")
        assert len(points) == sum(1 for n, _ in delivered if n == node)


def test_the_heatmap_is_what_the_results_file_holds(grid: Run) -> None:
    from motebase.gateway.plot.log import delivery_matrix

    query = read_log(grid.log)[1]
    nodes, epochs, cells = delivery_matrix(query)
    delivered = {(r["node_id"], r["epoch"]) for r in jsonl(grid.results) if r["query_id"] == 1}
    assert nodes == sorted({n for n, _ in delivered})
    assert epochs == list(range(min(e for _, e in delivered), max(e for _, e in delivered) + 1))
    assert {(n, e) for i, n in enumerate(nodes) for j, e in enumerate(epochs) if cells[i][j]} == (
        delivered
    )


def test_plot_log_of_an_aggregate_query_draws_each_column(grid: Run) -> None:
    out = grid.dir / "aggregates.png"
    ok("plot", "log", grid.log, "--qid", "2", "--out", out, cwd=grid.dir)
    assert png_size(out) == (8.0 * 150, (1.2 + 2.4 * 2) * 150)  # two columns, two panels
    svg = grid.dir / "aggregates.svg"
    ok("plot", "log", grid.log, "--qid", "2", "--out", svg, cwd=grid.dir)
    assert ids(svg, "aggregate-") == {"aggregate-0-group-0", "aggregate-1-group-0"}
    titles = {t.text for t in ET.parse(svg).getroot().iter(f"{SVG}text")}
    assert {"AVG(light)", "COUNT(*)"} <= titles


def test_plot_log_refuses_an_attribute_the_query_did_not_select(grid: Run) -> None:
    result = mote("plot", "log", grid.log, "--attr", "temp", "--out", "x.svg", cwd=grid.dir)
    assert (result.returncode, result.stderr) == (
        1,
        "Error: query 1 did not select 'temp'; it selected nodeid, parent, depth, light\n",
    )
    result = mote("plot", "log", grid.log, "--qid", "9", "--out", "x.svg", cwd=grid.dir)
    assert result.returncode == 2
    assert result.stderr.endswith(
        "Error: Invalid value for --qid: no query 9 in the log (it has 1, 2)\n"
    )


# --- mote accuracy --plot ---------------------------------------------------------------------


def test_accuracy_plot_draws_yield_by_depth_and_errors_per_epoch(grid: Run) -> None:
    out = grid.dir / "accuracy.svg"
    report = json.loads(ok("accuracy", grid.results, grid.truth, "--json", "--plot", out,
                           cwd=grid.dir))  # fmt: skip
    by_depth = report["1"]["yield_by_depth"]
    assert ids(out, "yield-1-depth-") == {f"yield-1-depth-{d}" for d in by_depth}
    texts = [t.text for t in ET.parse(out).getroot().iter(f"{SVG}text")]
    for stat in by_depth.values():
        assert f"{stat['delivered']}/{stat['expected']}" in texts
    assert ids(out, "exact-") == {"exact-2"}
    assert ids(out, "mean-abs-error-") | ids(out, "max-abs-error-") == {
        "mean-abs-error-2",
        "max-abs-error-2",
    }
    exact = groups(out)["exact-2"].find(f"{SVG}path")
    assert exact is not None
    assert len(exact.attrib["d"].split("L")) == len(report["2"]["epochs"])


# --- determinism and the docs' pictures -------------------------------------------------------


def test_the_same_view_gives_the_same_file(tmp_path: Path) -> None:
    view = TopologyView([NodeView(0, 0, 0, None, 0), NodeView(1, 10, 0, 0, 1)], [], "two motes")
    draw_topology(view, tmp_path / "a.svg")
    draw_topology(view, tmp_path / "b.svg")
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    assert b"<dc:date>" not in (tmp_path / "a.svg").read_bytes()


def test_docs_pictures_are_made_by_the_script_and_embedded(tmp_path: Path) -> None:
    script = REPO / "docs" / "make_pictures.py"
    result = subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    names = [Path(line).name for line in result.stdout.splitlines()]
    assert names == ["topology.svg", "topology-log.svg", "log-tuple.svg", "log-aggregate.svg",
                     "accuracy.svg"]  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    assert sorted(labels(tmp_path / "topology.svg")) == list(range(25))
    # The script's logistic links reach 18.3 m: the 8 nearest neighbours, as lossless.
    assert len(groups(tmp_path / "topology.svg")["links"].findall(f"{SVG}path")) == GRID_PAIRS
    # A line per node that delivered, as many as the heatmap's title counts.
    title = next(
        t.text
        for t in ET.parse(tmp_path / "log-tuple.svg").getroot().iter(f"{SVG}text")
        if t.text and t.text.startswith("readings delivered: ")
    )
    nodes = int(title.split(" of ")[1].split()[0])
    assert len(ids(tmp_path / "log-tuple.svg", "series-")) == nodes
    assert ids(tmp_path / "log-aggregate.svg", "aggregate-") == {
        f"aggregate-{i}-group-0" for i in range(3)
    }
    accuracy = tmp_path / "accuracy.svg"
    assert ids(accuracy, "yield-1-depth-") and ids(accuracy, "exact-") == {"exact-2"}
    # What the docs show is what the script makes, and every picture is shown.
    page = (REPO / "docs" / "pictures.md").read_text()
    for name in names:
        assert f"](img/{name})" in page
        groups(REPO / "docs" / "img" / name)  # committed, and well-formed SVG
