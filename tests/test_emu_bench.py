"""bench/emulator.py --quick runs and writes every key the full run reports (not a timing test)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

from bench_scripts import run_bench

KEYS = {
    "node_epochs_per_s_max_1000",
    "node_epochs_per_s_select_1000",
    "wall_s_max_10000x3600",
    "peak_rss_bytes_max_10000",
    "cpu_growth_100_to_10000",
    "machine",
}


def test_bench_quick_writes_all_keys(tmp_path: Path) -> None:
    out = tmp_path / "emulator.json"
    run_bench("emulator.py", "--quick", "--out", str(out), timeout=240)
    result = json.loads(out.read_text())
    assert result.keys() >= KEYS
    assert result["quick"] is True
    assert result["peak_rss_bytes_max_10000"] > 0
    assert result["cpu_growth_100_to_10000"] > 0
    assert result["runs"]["max_1000"]["root_uart_bytes"] > 0  # the query really ran
    for run in result["runs"].values():
        assert 0 < run["sampling_nodes"] <= run["nodes"]
        assert 0 < run["routed_nodes"] <= run["nodes"]
    assert result["machine"]["cpu_count"] >= 1


def test_yield_vs_load_draws_every_radio(tmp_path: Path) -> None:
    """bench/yield_vs_load.py on a tiny grid: a plot with a line per radio, and the lossless
    column complete at every period (4 nodes are far inside one root link's capacity)."""
    out = tmp_path / "yield.svg"
    done = run_bench(
        "yield_vs_load.py",
        "--nodes",
        "4",
        "--seeds",
        "1",
        "--epochs",
        "3",
        "--out",
        str(out),
        timeout=240,
    )
    svg = ElementTree.fromstring(out.read_text())
    lines = svg.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(lines) == 3
    rows = [r for r in done.stdout.splitlines() if r.startswith("| ") and " s |" in r]
    assert len(rows) == 5
    assert all(row.split("|")[3].strip() == "1.000" for row in rows)


def test_issue10_table_runs_its_cases_and_judges_the_targets(tmp_path: Path) -> None:
    """bench/issue10.py on two small cases, one seed, a few epochs: the JSON holds each
    case's per-seed value, its target and the verdict, and the table prints both rows."""
    out = tmp_path / "issue10.json"
    done = run_bench(
        "issue10.py",
        *("--cases", "select25_2s,count25", "--seeds", "1", "--epochs", "3"),
        *("--jobs", "1", "--out", str(out)),
        timeout=240,
    )
    cases = json.loads(out.read_text())["cases"]
    assert list(cases) == ["select25_2s", "count25"]
    (tuple_yield,) = cases["select25_2s"]["per_seed"]
    assert 0.0 < tuple_yield <= 1.0
    (count,) = cases["count25"]["per_seed"]
    assert 0 < count <= 25  # a COUNT above the node count would be a wrong answer
    assert cases["count25"]["met"] == (count >= 24)
    # who ran the query: a yield counts only what nodes sampled
    assert all(0.0 < cases[c]["sampled_min"] <= 1.0 for c in cases)
    assert "| select25_2s | yield |" in done.stdout and "| count25 | count |" in done.stdout


def test_beside_table_runs_an_aggregate_beside_a_select(tmp_path: Path) -> None:
    """bench/beside.py on two cases, one seed, a few epochs: the JSON holds each metric per
    seed, a COUNT case its error and a MAX case none, and the table prints both rows."""
    out = tmp_path / "beside.json"
    done = run_bench(
        "beside.py",
        *("--cases", "pair25,max25_2s", "--seeds", "1", "--epochs", "4"),
        *("--jobs", "1", "--out", str(out)),
        timeout=240,
    )
    cases = json.loads(out.read_text())["cases"]
    assert list(cases) == ["pair25", "max25_2s"]
    (error,) = cases["pair25"]["count_error"]["per_seed"]
    assert 0.0 <= error <= 25.0
    assert cases["max25_2s"]["count_error"] == {"per_seed": [None], "mean": None}  # no COUNT
    for case in cases.values():
        for metric in ("exact", "aggregate_sampled", "tuple_yield", "tuple_sampled"):
            (value,) = case[metric]["per_seed"]
            assert 0.0 <= value <= 1.0
        assert case["aggregate_sampled"]["mean"] > 0.0  # the aggregate ran somewhere
    assert "| pair25 | " in done.stdout and "| max25_2s | " in done.stdout


def test_emulate_e2e_times_the_command_and_profiles_its_stages(tmp_path: Path) -> None:
    """bench/emulate_e2e.py --quick on two "trees" (the installed package twice): each
    radio's rows written, identical bytes from both, rates, each run's peak memory, and a
    profile that finds every stage."""
    out = tmp_path / "e2e.json"
    done = run_bench(
        "emulate_e2e.py",
        *("--quick", "--profile", "--trees", "installed,installed", "--out", str(out)),
        timeout=240,
    )
    report = json.loads(out.read_text())
    assert report["quick"] is True and report["target_rows_per_s"] == 100_000
    assert set(report["radios"]) == {"lossless", "logistic"}
    lossless = report["radios"]["lossless"]
    assert lossless["identical_rows"] is True
    (summary,) = lossless["trees"].values()  # one tree, named twice
    assert summary["rows"] > 0 and summary["best_rows_per_s"] > 0
    assert len(summary["wall_s"]) == 2  # both runs of it kept
    assert all(30 < mb < 1000 for mb in summary["peak_rss_mb"])  # the child's, in MB
    (profile,) = report["profiles"].values()
    stages = profile["stages_s"]
    assert set(stages) >= {"emulator (C)", "session: decode, assemble", "truth", "JSON sink"}
    assert all(stages[s] > 0 for s in ("emulator (C)", "session: decode, assemble", "truth"))
    assert "| lossless |" in done.stdout and "| logistic |" in done.stdout


def test_stoplag_measures_every_mote_of_the_stopped_query(tmp_path: Path) -> None:
    """bench/stoplag.py on the Intel lab at 31 s, one seed, a short watch: a lag for each of
    the 55 motes (54 and the basestation), and the stop reaching them all within two epochs,
    as the stop report promises (gateway/accuracy.py, StopReport)."""
    out = tmp_path / "stoplag.json"
    done = run_bench(
        "stoplag.py",
        *("--cases", "intel_31s", "--seeds", "1", "--after", "3", "--jobs", "1"),
        *("--link-model", "logistic", "--out", str(out)),
        timeout=240,
    )
    (row,) = json.loads(out.read_text())
    assert (row["case"], row["seed"]) == ("intel_31s", 1)
    assert 0.9 < row["yield"] <= 1.0
    assert sum(row["lags"].values()) == 55
    assert row["max_lag"] <= 2 and row["within_2"] == 1.0
    assert row["still_sampling"] == [] and row["late_readings"] == 0
    assert "intel_31s: yield" in done.stdout


def test_loops_reads_the_tree_of_every_seed(tmp_path: Path) -> None:
    """bench/loops.py on the 25-node grid, one seed, a 6 s watch: a row for the seed within
    what was watched. (Whether loops last is tests/test_emu_lossy.py's to hold; the
    detection, tests/test_emu_network.py's.)"""
    out = tmp_path / "loops.json"
    done = run_bench(
        "loops.py",
        *("--cases", "logistic25", "--seeds", "1", "--epochs", "14", "--jobs", "1"),
        *("--out", str(out)),
        timeout=240,
    )
    (row,) = json.loads(out.read_text())
    assert (row["case"], row["seed"]) == ("logistic25", 1)
    assert 0 <= row["longest_loop_ms"] <= 6000 and 0 <= row["loop_node_s"] <= 24 * 6
    assert "logistic25: longest loop" in done.stdout


def test_loops_watches_a_case_within_capacity_for_its_own_epochs(tmp_path: Path) -> None:
    """The Intel lab at 4,096 ms: 10 epochs of the case's period, the last 2 watched (8 s in
    reads 250 ms apart, of 54 motes and the root), not 2 s."""
    out = tmp_path / "loops.json"
    run_bench(
        "loops.py",
        *("--cases", "intel_4s", "--seeds", "1", "--epochs", "10", "--jobs", "1"),
        *("--out", str(out)),
        timeout=240,
    )
    (row,) = json.loads(out.read_text())
    assert (row["case"], row["seed"], row["watched_s"]) == ("intel_4s", 1, 8.0)
    assert 0 <= row["longest_loop_ms"] <= 8000 and 0 <= row["loop_node_s"] <= 55 * 8.0
