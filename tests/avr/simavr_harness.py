"""Driving build/avr/sim/mote_sim (tests/avr/sim/mote_sim.c) from the avr tests.

The harness prints node 0's pty path first, a JSON stats line on each SIGUSR1 (a
snapshot: it runs on) and one on SIGTERM (then exits). Stats carry the simulated
``frequency``, the air's ``air_overlap_bytes`` and per node (``nodes``) its cycles,
cycles per sleep mode, stack high-water mark, ADC reads and the radio part's frame
counters. Simulated time is paced to wall time but may run slower than it on a
loaded machine, so waits here are bounded in simulated time, polled by snapshots.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "build" / "avr"
HARNESS = IMAGES / "sim" / "mote_sim"
MOTE = "from motebase.gateway.cli.main import main; main()"

Stats = dict[str, Any]


def run(cmd: list[str], **kw: Any) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout}{proc.stderr}"
    return str(proc.stdout)


def build() -> None:
    run(["make", "-C", str(ROOT), "avr"])
    run(["make", "-C", str(ROOT / "tests" / "avr" / "sim")])


def seconds(stats: Stats) -> float:
    """Simulated time: node 0's cycles (all nodes run in lockstep)."""
    return int(stats["nodes"][0]["cycles"]) / int(stats["frequency"])


class MoteSim:
    """One mote_sim process; ``pty`` is node 0's UART0."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen(
            [str(HARNESS), *args, str(IMAGES / "mica2.elf")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.pty = self.proc.stdout.readline().strip()
        assert self.pty.startswith("/dev/"), self.pty

    def snapshot(self) -> Stats:
        assert self.proc.stdout is not None
        self.proc.send_signal(signal.SIGUSR1)
        line = self.proc.stdout.readline()
        assert line, "mote_sim ended"
        stats: Stats = json.loads(line)
        return stats

    def run_until(self, at_s: float, timeout_s: float) -> Stats:
        """Snapshots until simulated time reaches ``at_s``; the last one."""
        deadline = time.monotonic() + timeout_s
        stats = self.snapshot()
        while seconds(stats) < at_s:
            assert time.monotonic() < deadline, f"simulated {seconds(stats):.1f} s of {at_s}"
            time.sleep(0.5)
            stats = self.snapshot()
        return stats

    def stop(self) -> Stats:
        """SIGTERM; the final stats. Fails on a non-zero exit (a crashed core)."""
        self.proc.send_signal(signal.SIGTERM)
        stdout, stderr = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, stderr
        stats: Stats = json.loads(stdout.strip().splitlines()[-1])
        return stats

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=30)
