"""bench/spark_ingest.py runs and reports (not a timing test): both pipelines land every
reading of its log in Parquet (the script checks the counts) at a tiny size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_scripts import run_bench

pytestmark = pytest.mark.spark


def test_ingest_bench_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "si.json"
    run_bench("spark_ingest.py", "--rows", "3000", "--repeat", "1", "--out", str(out), timeout=300)
    report = json.loads(out.read_text())
    assert (report["rows"], report["repeat"], report["master"]) == (3000, 1, "local[2]")
    assert report["motebase"]["median_rows_per_s"] > 0
    assert report["plain_json"]["median_rows_per_s"] > 0


def test_snooping_paper_script_writes_its_table(tmp_path: Path) -> None:
    """bench/papers/snooping.py at a tiny size: every case of the table, from points run
    as Spark tasks; snooping never adds messages, and only it suppresses records."""
    out = tmp_path / "snooping.json"
    done = run_bench(
        "papers/snooping.py",
        *("--nodes", "9", "--epochs", "3", "--seeds", "1", "--out", str(out)),
        timeout=300,
        # Not the checkout: Spark's Python workers start in the driver's directory, and
        # a clean checkout's motebase/ (no emulator built) would shadow the installed one.
        cwd=tmp_path,
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
    assert "snooping cuts result messages" in done.stdout


def test_lifetime_paper_script_writes_its_table(tmp_path: Path) -> None:
    """bench/papers/lifetime.py at a tiny size (1 week, scaled 2000-fold: 13.5 J, 5 min of
    virtual time): the keys docs/papers.md quotes, and motes that do go flat."""
    out = tmp_path / "lifetime.json"
    done = run_bench(
        "papers/lifetime.py",
        *("--weeks", "1", "--nodes", "4", "--seeds", "1", "--scale", "2000"),
        *("--out", str(out)),
        timeout=300,
        cwd=tmp_path,  # as above: not the checkout
    )
    report = json.loads(out.read_text())
    assert report["estimate_s_24w"] is None  # the slot schedule cannot give 24 weeks
    assert 0.5 < report["emulated_over_requested_1w"] < 1.5
    assert "| 1w |" in done.stdout
