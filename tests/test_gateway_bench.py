"""bench/gateway_decode.py runs and reports (not a timing test), and the frames it times
are what it says: AM 240 tuples that the gateway decodes to their values."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench_scripts import ROOT, run_bench

from motebase.gateway.protocol.framing import Deframer
from motebase.gateway.protocol.packet import decode_packet

sys.path.insert(0, str(ROOT / "bench"))

import gateway_decode


def test_frames_decode_to_their_values() -> None:
    frames = list(Deframer().feed(gateway_decode.stream(60)))
    assert len(frames) == 60
    for i, frame in enumerate(frames):
        decoded = decode_packet(frame.payload, field_types=gateway_decode.TYPES)
        assert decoded.mhop is not None and decoded.mhop["originaddr"] == i % 25
        assert decoded.body["epoch"] == 1 + i // 25
        assert decoded.body["d"]["values"] == [i % 25, 500, 20]
    assert gateway_decode.naive_decode(gateway_decode.stream(60)) == 60


def test_bench_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "gw.json"
    run_bench(
        "gateway_decode.py", "--frames", "300", "--repeat", "1", "--out", str(out), timeout=120
    )
    report = json.loads(out.read_text())
    assert report["frames"] == 300
    assert report["mote_decode"]["best_frames_per_s"] > 0
    assert report["naive"]["median_frames_per_s"] > 0


def test_rows_bench_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    run_bench("gateway_rows.py", "--frames", "300", "--repeat", "1", "--out", str(out), timeout=120)
    report = json.loads(out.read_text())
    assert report["frames"] == 300
    for case in ("batches", "readings", "naive"):
        assert report[case]["best_frames_per_s"] > 0
    assert report["batches_over_naive_median"] > 0
