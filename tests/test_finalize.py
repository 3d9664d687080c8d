"""Finalizing aggregate partial states (wire format §9.3, and motebase's wide layout): bytes
written by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from motebase.gateway.finalize import FinalizeError, expavg_step, finalize
from motebase.gateway.plan import compile_query
from motebase.gateway.protocol.aggregates import decode_state, encode_state, state_size


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


# --- the wide layout: motebase motes on both ends (32-bit values, uint32 counts) -----------


@pytest.mark.parametrize(
    ("op", "args", "state", "decoded", "expected"),
    [
        (SUM, (), "80380100", {"value": 80000}, 80000),
        (SUM, (), "6079feff", {"value": -100000}, -100000),
        (CNT, (), "70110100", {"count": 70000}, 70000),
        (MIN, (), "a015ffff 2c01", {"value": -60000, "id": 300}, -60000),
        (MAX, (), "a0860100 409c", {"value": 100000, "id": 40000}, 100000),  # ids are uint16
        (AVG, (), "f0490200 02000000", {"sum": 150000, "count": 2}, 75000.0),
        (AVG, (), "00000000 00000000", {"sum": 0, "count": 0}, None),
        (AVG, (), "c0270900 70110100", {"sum": 600000, "count": 70000}, 600000 / 70000),
        (EXPAVG, (14,), "f0490200 02000000", {"sum": 150000, "count": 2}, 75000.0),
        (WINSUM, (3, 1), "f0490200", {"value": 150000}, 150000),
        (WINCNT, (3, 1), "06000000", {"count": 6}, 6),
        (WINMIN, (9, 1), "a015ffff 0100", {"value": -60000, "id": 1}, -60000),
        (WINMAX, (2, 4), "a0860100 0000", {"value": 100000, "id": 0}, 100000),
        (WINAVG, (8, 4), "c0270900 08000000", {"sum": 600000, "count": 8}, 75000.0),
    ],
)
def test_wide_states_decode_and_finalize(
    op: int, args: tuple[int, ...], state: str, decoded: dict[str, int], expected: float | None
) -> None:
    raw = bytes.fromhex(state)
    assert state_size(op, args, wide=True) == len(raw)
    assert decode_state(op, raw, args, wide=True) == decoded
    assert encode_state(op, decoded, args, wide=True) == raw
    value = finalize(Spec(op, args), raw + bytes(25 - len(raw)), wide=True)
    assert value.value == expected
    assert value.partial == raw


def test_the_same_bytes_read_narrow_are_tinydbs_16_bit_state() -> None:
    raw = bytes.fromhex("80380100")  # wide: 80,000
    assert finalize(Spec(SUM), raw).value == 0x3880  # narrow: the low word, 14,464
    assert finalize(Spec(SUM), raw, wide=True).value == 80000


def test_wide_windows_carry_no_ring() -> None:
    # narrow WINAVG(8, 4): 9 + 4 x 4 bytes; wide: the window's {sum, count} only
    assert state_size(WINAVG, (8, 4)) == 25
    assert state_size(WINAVG, (8, 4), wide=True) == 8
    assert state_size(WINMIN, (3, 1), wide=True) == 6


def test_truncated_wide_state_is_an_error() -> None:
    with pytest.raises(FinalizeError, match="wide partial state"):
        finalize(Spec(AVG), bytes.fromhex("f0490200"), wide=True)


def test_aggregates_without_a_wide_layout_are_an_error() -> None:
    with pytest.raises(FinalizeError, match="no known state layout"):
        finalize(Spec(12), bytes(25), wide=True)  # DELTA


def test_expavg_step_is_the_papers_recursion() -> None:
    # b = 14 new bits: v += (avg - v) / 4, from 0
    v = expavg_step(0.0, 400.0, 14)
    assert v == 100.0
    v = expavg_step(v, 400.0, 14)
    assert v == 175.0
    assert expavg_step(v, 800.0, 14) == 175.0 + (800.0 - 175.0) / 4
    # b >= 16: weight 1, the new average replaces the value
    assert expavg_step(175.0, 800.0, 16) == 800.0
    assert expavg_step(175.0, 800.0, 40) == 800.0
    assert expavg_step(0.0, 65536.0, 0) == 1.0  # 2^-16


def test_the_emulators_ground_truth_smooths_with_the_same_step() -> None:
    from motebase.emu.truth import _expavg

    series = {1: [400], 2: [], 3: [300, 500], 5: [1000, 2000, 3000]}
    want, v = {}, 0.0
    for epoch in (1, 3, 5):
        values = series[epoch]
        v = expavg_step(v, sum(values) / len(values), 13)
        want[epoch] = v
    assert _expavg((13,), series) == want
