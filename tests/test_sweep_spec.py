"""Sweep specs and points (motebase.emu.sweep): the grid's expansion, the errors a bad spec
gets, and one point run as a Spark task runs it (no Spark here: tests/test_spark_sweep.py)."""

from __future__ import annotations

import json
import math

import pytest

from motebase.emu.sweep import METRICS, SweepSpecError, held_rms, parse_spec, run_point

SPEC = """
query = "SELECT nodeid, light FROM sensors SAMPLE PERIOD 2048"
epochs = 3
nodes = 9
lossless = true

[grid]
seed = [1, 2]
topology = ["grid", "random"]
"""


def test_the_grid_expands_last_key_fastest_over_the_fixed_keys() -> None:
    spec = parse_spec(SPEC)
    points = spec.points()
    assert [(p["seed"], p["topology"]) for p in points] == [
        (1, "grid"),
        (1, "random"),
        (2, "grid"),
        (2, "random"),
    ]
    assert all(p["nodes"] == 9 and p["epochs"] == 3 and p["warmup_s"] == 30.0 for p in points)
    assert spec.keys == [
        "epochs",
        "warmup_s",
        "adapt_rate",
        "drain_s",  # 0: no battery drain after the epochs (bench/papers/lifetime.py uses it)
        "query",
        "nodes",
        "lossless",
        "seed",
        "topology",
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("query = 'SELECT nodeid FROM sensors'\ncolour = 3", "unknown key 'colour'"),
        ("query = 'q'\n[grid]\nseed = 3", "grid.seed must be a non-empty list"),
        ("query = 'q'\n[grid]\nseed = []", "grid.seed must be a non-empty list"),
        ("query = 'q'\nseed = 1\n[grid]\nseed = [1]", "seed: fixed and in the grid"),
        ("epochs = 3", "no query"),
        ("query = ", "not TOML"),
    ],
)
def test_a_bad_spec_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(SweepSpecError, match=says):
        parse_spec(text)


def test_a_point_is_a_row_of_its_parameters_and_scores() -> None:
    (point, *_) = parse_spec(SPEC).points()
    row = run_point(point)
    assert list(row) == [*point, *METRICS]
    assert row["error"] is None and row["kind"] == "tuple" and row["sound"] is True
    assert row["tuple_yield"] == 1.0  # lossless: every tuple
    assert row["exact_fraction"] is None and row["rate_changes"] == 0
    report = json.loads(row["accuracy"])
    assert report["1"]["tuple_yield"] == 1.0


def test_a_failing_point_is_a_row_with_its_error() -> None:
    (point, *_) = parse_spec(SPEC).points()
    row = run_point({**point, "topology": "moon"})
    assert row["error"].startswith("ConfigError: unknown topology 'moon'")
    assert row["tuple_yield"] is None and row["wall_s"] >= 0


def test_an_aggregate_point_scores_exact_epochs_and_the_count() -> None:
    spec = parse_spec(SPEC.replace("nodeid, light", "COUNT(*)"))
    row = run_point(spec.points()[0])
    assert row["kind"] == "aggregate" and row["error"] is None
    assert row["exact_fraction"] == 1.0 and row["count_median"] == 9.0
    assert row["tuple_yield"] is None


def test_a_point_counts_its_frames_and_where_the_lost_ones_went() -> None:
    """The radio counters a saturated channel is explained by (bench/papers/rate_falloff.py):
    on the lossless radio frames go out and none collides, is given up or is turned away."""
    (point, *_) = parse_spec(SPEC).points()
    row = run_point(point)
    assert row["frames_sent"] > 0
    assert row["receptions_collided"] == 0 and row["sends_dropped"] == 0
    assert row["queue_dropped"] == 0


# A tuple that fills its frame (seven 2-byte fields: two no longer fit, result/bundle.h),
# from node 1 only, as bench/papers/table5.py asks for it.
SLOW_RADIO = {
    "query": "SELECT accel_x, temp, noise, voltage, accel_y, mag_y, light FROM sensors "
    "WHERE nodeid = 1 SAMPLE PERIOD 256",
    "epochs": 40,
    "warmup_s": 30.0,
    "adapt_rate": False,
    "drain_s": 0.0,
    "nodes": 2,
    "lossless": True,
    "qlen": 5,
    "traces": {"accel_x": list(range(100, 140))},
    "series": True,
}


def test_a_trace_is_read_one_sample_an_epoch_and_a_free_radio_delivers_it_all() -> None:
    row = run_point({**SLOW_RADIO, "policy": "naive"})
    assert row["error"] is None and row["tuple_yield"] == 1.0
    series = json.loads(row["series"])
    assert series["field"] == "accel_x"
    assert series["truth"]["1"] == [[e, 99.0 + e] for e in range(1, 41)]
    assert series["delivered"] == series["truth"]
    assert row["held_rms"] == 0.0


@pytest.mark.parametrize("policy", ["naive", "winavg", "delta"])
def test_a_slow_radio_delivers_one_frame_a_gap_and_the_policy_chooses(policy: str) -> None:
    row = run_point({**SLOW_RADIO, "policy": policy, "send_gap_ms": 1000.0})
    assert row["error"] is None
    delivered = json.loads(row["series"])["delivered"]["1"]
    # 40 epochs of 256 ms and 2 of draining take under 11 s: at most 11 frames of one
    # tuple each, against 40 sampled.
    assert 5 <= len(delivered) <= 11
    assert row["held_rms"] > 0.0
    if policy == "winavg":  # merged readings are averages: not what was sampled
        assert row["sound"] is False
    else:
        assert row["sound"] is True
        assert all(value == 99.0 + epoch for epoch, value in delivered)


def test_a_queue_length_the_motes_do_not_have_is_a_failed_point() -> None:
    row = run_point({**SLOW_RADIO, "qlen": 9})
    assert row["error"] is not None and "length" in row["error"]


def test_held_rms_holds_each_delivered_reading_until_the_next() -> None:
    truth = {1: [(1, 0.0), (2, 10.0), (3, 20.0), (4, 30.0)], 2: [(1, 5.0)]}
    # node 1: held 0, 0, 20, 20 -> errors 0, 10, 0, 10; node 2 delivered nothing: left out
    assert held_rms(truth, {1: [(1, 0.0), (3, 20.0)]}) == pytest.approx(math.sqrt(50.0))
    # before the first delivered reading, the first is held
    assert held_rms({1: [(1, 4.0), (2, 6.0)]}, {1: [(2, 6.0)]}) == pytest.approx(math.sqrt(2.0))
    assert held_rms(truth, {}) is None


# TODS 2005 §4.2 (bench/papers/plan_energy.py): a plan put on the wire in the tools' order,
# sensors with a set pass rate, and what the sampling cost.
def ordered(where: str, optimize: bool) -> dict[str, object]:
    (point,) = parse_spec(
        f"""
query = "SELECT accel_x, mag_x FROM sensors WHERE {where} SAMPLE PERIOD 1024"
epochs = 4
nodes = 4
lossless = true
optimize = {str(optimize).lower()}
sensors = {{ accel_x = {{ kind = "uniform" }}, mag_x = {{ kind = "uniform" }} }}
"""
    ).points()
    return point


def test_a_failing_first_predicate_spares_the_second_sensor() -> None:
    """Accel first (the tools' order: the predicate written last runs first), and no
    reading passes accel_x >= 1024: the magnetometer is never sampled, and the sensing
    energy is the accelerometer's samples at 4.8 uJ each."""
    row = run_point(ordered("mag_x >= 0 AND accel_x >= 1024", optimize=False))
    assert row["error"] is None
    samples = json.loads(row["samples"])
    assert "mag_x" not in samples and samples["accel_x"] > 0
    assert row["sensing_j"] == pytest.approx(samples["accel_x"] * 4.8e-6)


def test_uniform_readings_pass_a_predicate_at_its_modelled_selectivity() -> None:
    row = run_point(ordered("mag_x >= 0 AND accel_x >= 512", optimize=False))
    samples = json.loads(row["samples"])
    assert samples["mag_x"] / samples["accel_x"] == pytest.approx(0.5, abs=0.1)


def test_the_optimiser_reorders_what_the_tools_order_would_not() -> None:
    """mag_x >= 0 always passes, so the planner samples the accelerometer first whatever
    the written order; optimize = false keeps the tools' order, here magnetometer first."""
    where = "accel_x >= 1024 AND mag_x >= 0"
    optimised = json.loads(run_point(ordered(where, optimize=True))["samples"])
    tools = json.loads(run_point(ordered(where, optimize=False))["samples"])
    assert "mag_x" not in optimised
    assert tools["mag_x"] == tools["accel_x"] > 0


def test_an_unknown_sensor_kind_is_the_points_error() -> None:
    point = ordered("accel_x >= 0", optimize=True)
    row = run_point({**point, "sensors": {"accel_x": {"kind": "tide"}}})
    assert row["error"].startswith("SweepSpecError: sensors.accel_x: kind 'tide'")
