"""SIGTERM ends `mote spark` as Ctrl-C does: checkpoints consistent, the summary, exit 0."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from synthetic_log import write_log
from test_query_sigterm import StderrLines

pytestmark = pytest.mark.spark

MOTE = "from motebase.gateway.cli.main import main; main()"
ROOT = Path(__file__).resolve().parent.parent
# Where a frame of our code is: the installed package, or the checkout's sources.
OUR_CODE = ("motebase", *(f"{ROOT / part}/" for part in ("gateway", "spark", "emu")))


def test_sigterm_while_streaming_ends_with_the_summary_and_exit_0(tmp_path: Path) -> None:
    log, out = tmp_path / "log", tmp_path / "out"
    write_log(log, range(1, 11), nodes=5)
    proc = subprocess.Popen(
        [sys.executable, "-c", MOTE, "spark", "--log", str(log), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,  # the installed package, not the checkout `-c` would put first
    )
    proc.stderr = proc.stdout  # StderrLines reads the merged output as it comes
    lines = StderrLines(proc)
    try:
        deadline = time.monotonic() + 240  # Spark's start on a loaded machine
        while not any(s.startswith("streaming ") for s in lines.lines):
            assert proc.poll() is None, lines.text()
            assert time.monotonic() < deadline, lines.text()
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0, lines.text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines.join()
    text = lines.text()
    # Spark's own runner of a Python streaming source may print tracebacks when the stream
    # stops while it talks to the JVM (EOF in read_int, then a broken pipe from its socket
    # helpers, chained: CI on a loaded machine, SIGTERM before the first batch). Spark's
    # noise, not ours: no traceback may pass through motebase's code.
    for block in text.split("Traceback (most recent call last):")[1:]:
        frames = [line.strip() for line in block.splitlines() if line.strip().startswith("File ")]
        assert frames, text
        assert not [f for f in frames if any(ours in f for ours in OUR_CODE)], text
    assert "interrupted; checkpoints are consistent, rerun to resume" in text
    assert "Parquet tables in" in text or "no Parquet output yet" in text
