"""tox.ini's interpreter shares (tests/conftest.py, ``--share K/N``): every test file falls
in exactly one share, so py310, py312 and py313 together run each file once."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import TESTS, shares_of, suite_files


@pytest.mark.parametrize("shares", [1, 2, 3, 4])
def test_the_shares_split_the_test_files_between_them(shares: int) -> None:
    files = suite_files()
    share_by_file = shares_of(files, shares)
    dealt = {k: {name for name in files if share_by_file[name] == k} for k in range(1, shares + 1)}
    assert set().union(*dealt.values()) == set(files)
    assert sum(len(names) for names in dealt.values()) == len(files)
    assert max(map(len, dealt.values())) - min(map(len, dealt.values())) <= 1


def test_a_share_out_of_range_is_a_usage_error() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "--share",
            "4/3",
            str(TESTS / "test_shares.py"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "--share takes K/N with 1 <= K <= N, not '4/3'" in done.stderr
