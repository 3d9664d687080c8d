"""Differential test: random queries on random emulated networks against the ground truth.

On a lossless network every answer must be exact -- every tuple, every aggregate value,
group key and row -- and on the default radio no answer may be unsound (COUNT above the
truth, MAX above or MIN below it, a tuple a node did not sample, a row for a node or
epoch that did not run the query). The grammar and the runner are in differential.py.

``make test`` runs a small budget (DIFFERENTIAL_EXAMPLES, default below); ``make fuzz``
runs a large one and records shrunk counterexamples in data/differential_regressions.json,
which every run replays first.
"""

from __future__ import annotations

import os

import pytest
from differential import (
    Case,
    cases,
    exactness_failures,
    open_regressions,
    record_regression,
    run_case,
    soundness_failures,
)
from hypothesis import HealthCheck, given, settings

EXAMPLES = int(os.environ.get("DIFFERENTIAL_EXAMPLES", "12"))
RECORD = os.environ.get("DIFFERENTIAL_RECORD") == "1"
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RECORD,  # CI runs the same cases every time; the fuzz run explores
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)


def check(case: Case) -> None:
    report = run_case(case)
    failures = (
        exactness_failures(report, case.topology) if case.lossless else soundness_failures(report)
    )
    if failures and RECORD:
        record_regression(case)
    assert not failures, f"{case}\n" + "\n".join(failures)


def _replays() -> list[object]:
    # A case whose defect is still open fails until it is fixed (strict: once it passes,
    # the "open" note must go).
    return [
        pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=why)) if why else case
        for case, why in open_regressions()
    ]


@pytest.mark.parametrize("case", _replays(), ids=lambda c: f"seed{c.seed}")
def test_recorded_counterexamples_stay_fixed(case: Case) -> None:
    check(case)


@SETTINGS
@given(case=cases(lossless=True))
def test_lossless_answers_equal_the_truth(case: Case) -> None:
    check(case)


@settings(SETTINGS, max_examples=max(1, EXAMPLES // 2))
@given(case=cases(lossless=False, max_nodes=49))
def test_default_radio_answers_are_sound(case: Case) -> None:
    check(case)
