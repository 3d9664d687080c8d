"""bench/'s Spark scripts run and report (not timing tests), at tiny sizes: the ingest and
latency benches as a user runs them, and bench/papers/' scripts, whose points are Spark
tasks, on the test session's Spark (each would otherwise start its own, ~15 s of each run)."""

from __future__ import annotations

import json
import runpy
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import spark_fixtures
from bench_scripts import ROOT, run_bench
from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark
spark_session = spark_fixtures.spark_session  # the one SparkSession of the test session
RunPaper = Callable[..., str]


@pytest.fixture
def run_paper(
    spark_session: SparkSession, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> RunPaper:
    """``python bench/papers/SCRIPT ARGS`` in this process: the script's ``__main__`` with
    its arguments, its points on the running session (paper.sweep_rows uses it)."""

    def run(script: str, *args: str) -> str:
        path = ROOT / "bench" / "papers" / script
        monkeypatch.setattr(sys, "argv", [str(path), *args])
        # as `python SCRIPT` does, its directory first (the script then puts bench/ first)
        monkeypatch.setattr(sys, "path", [str(path.parent), *sys.path])
        capsys.readouterr()
        runpy.run_path(str(path), run_name="__main__")
        return capsys.readouterr().out

    return run


def test_ingest_bench_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "si.json"
    run_bench("spark_ingest.py", "--rows", "3000", "--repeat", "1", "--out", str(out), timeout=300)
    report = json.loads(out.read_text())
    assert (report["rows"], report["repeat"], report["master"]) == (3000, 1, "local[2]")
    assert report["motebase"]["median_rows_per_s"] > 0
    assert report["plain_json"]["median_rows_per_s"] > 0


def test_latency_bench_writes_its_report(tmp_path: Path) -> None:
    """bench/spark_latency.py at a tiny size: every row appended in each case becomes
    visible in Parquet (the script checks it) and has a latency."""
    out = tmp_path / "sl.json"
    run_bench("spark_latency.py", "--seconds", "3", "--repeat", "1", "--out", str(out), timeout=400)
    report = json.loads(out.read_text())
    assert (report["rows_per_s"], report["master"]) == (50, "local[2]")
    for case in ("pipeline", "readings", "plain"):
        assert report[case]["all"]["rows"] == 150
        assert 0 < report[case]["warm"]["rows"] <= 150
        assert report[case]["all"]["p50_s"] > 0


def test_snooping_paper_script_writes_its_table(tmp_path: Path, run_paper: RunPaper) -> None:
    """bench/papers/snooping.py at a tiny size: every case of the table, from points run
    as Spark tasks; snooping never adds messages, and only it suppresses records."""
    out = tmp_path / "snooping.json"
    printed = run_paper(
        "snooping.py", *("--nodes", "9", "--epochs", "3", "--seeds", "1", "--out", str(out))
    )
    report = json.loads(out.read_text())
    assert sorted(report["cases"]) == [
        "dense_no_snoop",
        "dense_snoop",
        "sparse_no_snoop",
        "sparse_snoop",
    ]
    for density in ("sparse", "dense"):
        with_, without = report["cases"][f"{density}_snoop"], report["cases"][f"{density}_no_snoop"]
        assert without["records_suppressed"] == 0
        assert with_["messages_per_epoch"] <= without["messages_per_epoch"]
    assert "snooping cuts result messages" in printed


def test_slotting_paper_script_counts_a_level_an_epoch_unslotted(
    tmp_path: Path, run_paper: RunPaper
) -> None:
    """bench/papers/slotting.py at a tiny size: on the lossless radio the slotted COUNT is
    complete in epoch 1 whatever the depth, the unslotted one in the epoch numbered as the
    tree's depth (tests/test_slots_switch.py derives it)."""
    out, figure = tmp_path / "slotting.json", tmp_path / "slotting.svg"
    printed = run_paper(
        "slotting.py",
        *("--depths", "1,3", "--epochs", "4", "--out", str(out), "--svg", str(figure)),
    )
    depths = json.loads(out.read_text())["depths"]
    assert sorted(depths) == ["1", "3"]
    for depth, entry in depths.items():
        assert entry["slotted"]["epochs_to_complete"] == 1
        assert entry["unslotted"]["epochs_to_complete"] == int(depth)
    assert depths["3"]["unslotted"]["counts"] == [4, 7, 10, 10]
    assert figure.read_text().startswith("<svg")
    assert "| 3 | 1 | 3 | 4, 7, 10, 10, ... |" in printed


def test_rate_falloff_paper_script_shows_the_channel_fill(
    tmp_path: Path, run_paper: RunPaper
) -> None:
    """bench/papers/rate_falloff.py at a tiny size: on the ideal channel one mote below
    any knee delivers every tuple, exactly one a period; on the default radio four motes
    sending frame-sized tuples every 70 ms lose some, and a full queue is where they go."""
    out, figure = tmp_path / "rate_falloff.json", tmp_path / "rate_falloff.svg"
    printed = run_paper(
        "rate_falloff.py",
        *("--seeds", "1", "--window-s", "3", "--periods", "500,70"),
        *("--radios", "lossless,logistic", "--out", str(out), "--svg", str(figure)),
    )
    curves = json.loads(out.read_text())["curves"]
    for point in curves["lossless"]["frame"]["1"]["points"]:
        assert point["yield"] == 1.0
        assert point["delivered_per_s"] == pytest.approx(point["rate_per_mote"])
        assert point["receptions_collided"] == point["queue_dropped"] == 0
    slow, fast = curves["logistic"]["frame"]["4"]["points"]
    assert slow["yield"] > fast["yield"] and fast["yield"] < 0.9
    assert fast["queue_dropped"] > 0
    assert fast["delivered_per_s"] < fast["offered_per_s"]
    assert figure.read_text().startswith("<svg")
    assert "knee at 14.29 samples/s a mote" in printed


def test_deployment_paper_script_reports_every_mote(tmp_path: Path, run_paper: RunPaper) -> None:
    """bench/papers/deployment.py at a tiny size: every one of the lab's 54 motes has its
    yield and distance, the worst are the lowest, and the real 2004 network's ~40 % is
    worked out from the data set's own counts."""
    out, figure = tmp_path / "deployment.json", tmp_path / "deployment.svg"
    printed = run_paper(
        "deployment.py",
        *("--seeds", "1", "--epochs", "3", "--out", str(out), "--svg", str(figure)),
    )
    report = json.loads(out.read_text())
    per_node = report["per_node"]
    assert sorted(map(int, per_node)) == list(range(1, 55))
    assert all(0.0 <= n["yield"] <= 1.0 and n["distance_m"] > 0 for n in per_node.values())
    worst = [w["yield"] for w in report["worst"]]
    assert worst == sorted(worst) and worst[0] == report["per_node_quantiles"]["min"]
    assert report["real_2004"]["yield"] == pytest.approx(0.41, abs=0.01)
    assert report["motes_yield"] > report["real_2004"]["yield"]
    assert figure.read_text().startswith("<svg")
    assert "| yield, the 54 motes' readings |" in printed


def test_lifetime_paper_script_writes_its_table(tmp_path: Path, run_paper: RunPaper) -> None:
    """bench/papers/lifetime.py at a tiny size (1 week, scaled 2000-fold: 13.5 J, 5 min of
    virtual time): the keys docs/papers.md quotes, and motes that do go flat."""
    out = tmp_path / "lifetime.json"
    printed = run_paper(
        "lifetime.py",
        *("--weeks", "1", "--nodes", "4", "--seeds", "1", "--scale", "2000"),
        *("--out", str(out)),
    )
    report = json.loads(out.read_text())
    # two down waves an epoch from 6,144-ms epochs: 24 weeks a sample every 10.450 s
    assert report["estimate_s_24w"] == pytest.approx(10.450, abs=0.001)
    assert 0.5 < report["emulated_over_requested_1w"] < 1.5
    assert "| 1w |" in printed


def test_table5_paper_script_writes_its_table_and_fig13(
    tmp_path: Path, run_paper: RunPaper
) -> None:
    """bench/papers/table5.py at a tiny size: all nine policy x signal RMS errors, from
    points run as Spark tasks, with the radio delivering at most one sample in K."""
    out = tmp_path / "table5.json"
    printed = run_paper(
        "table5.py",
        *("--samples", "60", "--out", str(out), "--figures", str(tmp_path)),
    )
    report = json.loads(out.read_text())
    keys = [f"{p}_{s}" for p in ("naive", "winavg", "delta") for s in ("accel", "light", "mag")]
    assert all(report[key] > 0 for key in keys)
    for key in keys:
        counts = report["delivered"][key]
        assert counts["sampled"] == 60
        # 60 epochs of 256 ms and the drain, a frame a second at most: 17 s, 17 frames
        assert 10 <= counts["delivered"] <= 17
    for policy in ("delta", "winavg"):
        svg = (tmp_path / f"table5-fig13-{policy}.svg").read_text()
        readings = report["delivered"][f"{policy}_accel"]["readings"]
        assert svg.count("<circle") == len(readings)  # one dot a delivered reading
    assert "| accel |" in printed


def test_plan_energy_paper_script_spares_the_second_sensor(
    tmp_path: Path, run_paper: RunPaper
) -> None:
    """bench/papers/plan_energy.py at the grid's corners: where the first predicate never
    passes, the second sensor is never sampled in emulation, and the emulated energy is the
    model's; mag-first wins only where the accel predicate passes everything, and the
    planner picks the winner."""
    out = tmp_path / "plan_energy.json"
    printed = run_paper(
        "plan_energy.py",
        *("--grid", "0", "1", "--nodes", "4", "--epochs", "3"),
        *("--out", str(out), "--svg", str(tmp_path / "p.svg")),
    )
    report = json.loads(out.read_text())
    cells = {(c["s_accel"], c["s_mag"]): c for c in report["cells"]}
    for s_mag in (0.0, 1.0):
        accel_first = cells[(0.0, s_mag)]["plans"]["accel_first"]
        assert accel_first["samples"]["mag_x"] == 0 and accel_first["samples"]["accel_x"] > 0
        assert accel_first["energy_uj"] == pytest.approx(4.8)
    for s_accel in (0.0, 1.0):
        mag_first = cells[(s_accel, 0.0)]["plans"]["mag_first"]
        assert mag_first["samples"]["accel_x"] == 0
    for cell in cells.values():
        for plan in cell["plans"].values():
            assert plan["energy_uj"] == pytest.approx(plan["model_uj"], rel=1e-6)
    assert report["mag_first_wins_at"] == [[1.0, 0.0]]
    assert report["planner_picks_the_emulated_winner"] is True
    assert "| 0 | 0 | 4.8 / 4.8 |" in printed
