"""Run one of bench/'s scripts the way a user does, for the tests that keep them from rotting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_bench(
    script: str, *args: str, timeout: float, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """``python bench/SCRIPT ARGS`` from the checkout's root (or ``cwd``); raises if it
    fails."""
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        check=True,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
