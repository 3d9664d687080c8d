"""Finalizing aggregate partial states (wire format §9.3): bytes written by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from gateway.finalize import FinalizeError, finalize
from gateway.plan import compile_query


@dataclass(frozen=True)
class Spec:
    op_id: int
    args: tuple[int, ...] = ()
    expr_idx: int = 0
    name: str = "AGG"
    column: str = "AGG(light)"
    attribute: str = "light"


SUM, MIN, MAX, CNT, AVG, EXPAVG, WINAVG, WINSUM, WINMIN, WINMAX, WINCNT = range(1, 12)


@pytest.mark.parametrize(
    ("op", "state", "expected"),
    [
        (SUM, bytes.fromhex("e803 0000"), 1000),
        (SUM, bytes.fromhex("f6ff 0000"), -10),  # signed: a sum of negative readings
        (MIN, bytes.fromhex("2a00 0700"), 42),  # value 42 held by node 7
        (MAX, bytes.fromhex("ff7f 0300"), 32767),
        (MAX, bytes.fromhex("0080 0300"), -32768),
        (CNT, bytes.fromhex("1900 0000"), 25),
        (EXPAVG, bytes.fromhex("6400 05"), 100),
    ],
)
def test_single_value_aggregates_read_the_first_int16(op: int, state: bytes, expected: int) -> None:
    value = finalize(Spec(op), state)
    assert value.value == expected
    assert value.partial == state


def test_avg_is_sum_over_count() -> None:
    assert finalize(Spec(AVG), bytes.fromhex("0a00 0400")).value == 2.5  # 10 / 4


def test_avg_of_nothing_is_null_not_nan() -> None:
    assert finalize(Spec(AVG), bytes.fromhex("0000 0000")).value is None


def test_winavg_reports_the_last_window_sum_over_count() -> None:
    # winavg(8, 4, light): lastResult {sum 300, count 4}, head, tail, size, nvals,
    # epochsLeft, then a ring of w - s = 4 {sum, count} entries.
    state = bytes.fromhex("2c01 040000 00 04 00 02") + bytes(16)
    value = finalize(Spec(WINAVG, (8, 4)), state)
    assert value.value == 75.0
    assert value.partial == state


@pytest.mark.parametrize("op", [WINSUM, WINMIN, WINMAX, WINCNT])
def test_windowed_aggregates_report_last_result_value(op: int) -> None:
    # window 3, slide 1: lastResult {value -5, id 2}, five header bytes, ring of 2 int16.
    state = bytes.fromhex("fbff 020000 00 02 00 010100 0200")
    assert finalize(Spec(op, (3, 1)), state).value == -5


def test_padding_after_the_state_is_dropped() -> None:
    record_area = bytes.fromhex("0700 0100") + bytes(21)  # the 25-byte area of a record
    value = finalize(Spec(MAX), record_area)
    assert value.value == 7
    assert value.partial == bytes.fromhex("0700 0100")


def test_missing_record_gives_null() -> None:
    value = finalize(Spec(SUM), None)
    assert value.value is None
    assert value.partial is None


def test_truncated_state_is_an_error() -> None:
    with pytest.raises(FinalizeError, match="AGG"):
        finalize(Spec(AVG), bytes.fromhex("0a00"))


def test_aggregate_without_a_layout_is_an_error() -> None:
    with pytest.raises(FinalizeError, match="no known state layout"):
        finalize(Spec(15), bytes(25))  # ADPDELTA: not wired in a default build


def test_finalize_accepts_the_planners_aggregates() -> None:
    plan = compile_query("SELECT AVG(light), MAX(temp) FROM sensors EPOCH DURATION 2048")
    avg, mx = plan.aggregates
    assert finalize(avg, bytes.fromhex("0900 0200")).value == 4.5
    result = finalize(mx, bytes.fromhex("3412 0500"))
    assert (result.value, result.column, result.attribute) == (0x1234, mx.column, "temp")
