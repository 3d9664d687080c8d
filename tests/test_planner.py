"""Planner: field/expression layout, selection ordering (paper Fig. 6), exemplary-aggregate
pushdown, LIFETIME arithmetic, epochs, gateway-side projection and HAVING."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from motebase.gateway.catalog import default_catalog
from motebase.gateway.encoder import encode_query
from motebase.gateway.plan import BatteryState, TinySQLError, compile_query
from motebase.gateway.plan.explain import explain
from motebase.gateway.plan.pushdown import improve_probability

CATALOG = default_catalog()


def energy(name: str) -> float:
    attribute = CATALOG.attributes[name]
    return 0.0 if attribute.constant else attribute.energy_uj


def compile_error(sql: str, children: int = 0) -> TinySQLError:
    with pytest.raises(TinySQLError) as info:
        compile_query(sql, children=children)
    return info.value


# --- layout ---------------------------------------------------------------------------------


def test_fields_in_select_order_then_where_and_group_by_only_attributes() -> None:
    plan = compile_query("select max(light) where nodeid > 3")
    assert [(f.name, f.index, f.wire_type) for f in plan.fields] == [
        ("light", 0, 4),
        ("nodeid", 1, 4),
    ]
    plan = compile_query("select avg(light), min(temp) where depth < 3 group by nodeid")
    assert [f.name for f in plan.fields] == ["light", "temp", "depth", "nodeid"]
    depth = plan.field("depth")
    assert depth is not None and depth.wire_type == 2


def test_tools_order_reverses_where_predicates_and_appends_aggregates() -> None:
    plan = compile_query(
        "select max(light), min(temp) where light > 200 and temp < 100 and nodeid > 2",
        optimize=False,
    )
    described = [e.describe() for e in plan.expressions]
    assert described == ["nodeid > 2", "temp < 100", "light > 200", "MAX(light)", "MIN(temp)"]
    assert [e.expr_idx for e in plan.expressions] == [0, 1, 2, 3, 4]
    assert [a.expr_idx for a in plan.aggregates] == [3, 4]


def test_aggregate_plan_records_grouping_and_arithmetic() -> None:
    plan = compile_query("select avg(light + 10), nodeid group by nodeid / 4")
    (agg,) = plan.aggregates
    assert (agg.name, agg.op_id, agg.attribute, agg.field_index) == ("AVG", 5, "light", 0)
    assert (agg.arith.op_code, agg.arith.const) == (3, 10)
    assert agg.group is not None
    assert (agg.group.field_index, agg.group.arith.op_code, agg.group.arith.const) == (1, 2, 4)
    assert plan.group_by == "nodeid"
    assert plan.output_columns == ("avg(light + 10)", "nodeid")


def test_both_temporal_aggregate_spellings_give_the_same_expression() -> None:
    paper = compile_query("SELECT WINAVG(light, 8s, 4s) FROM sensors SAMPLE PERIOD 1s")
    tools = compile_query("select winavg(8, 4, light) epoch duration 1000")
    for plan in (paper, tools):
        (agg,) = plan.aggregates
        assert (agg.name, agg.op_id, agg.temporal, agg.args) == ("WINAVG", 7, True, (8, 4))
    assert encode_query(paper, 1) == encode_query(tools, 1)


def test_count_star_counts_with_the_free_nodeid_field() -> None:
    (agg,) = compile_query("select count(*)").aggregates
    assert (agg.name, agg.attribute) == ("CNT", "nodeid")


# --- epochs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "units", "epoch_ms", "num_epochs"),
    [
        ("select light", 102, 1020, None),
        ("select light epoch duration 2048", 204, 2040, None),
        ("select light epoch duration 512 for 7", 51, 510, 7),
        ("SELECT light SAMPLE PERIOD 1s FOR 10s", 100, 1000, 10),
        ("SELECT light SAMPLE PERIOD 500ms FOR 2 min", 50, 500, 240),
        ("SELECT light SAMPLE PERIOD 2s FOR 3s", 200, 2000, 2),
        ("select light once", 0x7FFF, None, None),
    ],
)
def test_epoch_units(sql: str, units: int, epoch_ms: int | None, num_epochs: int | None) -> None:
    plan = compile_query(sql)
    assert (plan.epoch_units, plan.epoch_ms, plan.num_epochs) == (units, epoch_ms, num_epochs)


@pytest.mark.parametrize(
    "sql",
    [
        "select light epoch duration 64",
        "select light epoch duration 327670",
        "select light epoch duration 700000",
        "select light once for 3",
        "select light epoch duration 100 for 0",
    ],
)
def test_epochs_the_wire_cannot_carry_are_refused(sql: str) -> None:
    compile_error(sql)


def test_longest_epoch_the_wire_carries() -> None:
    assert compile_query("select light epoch duration 327669").epoch_units == 0x7FFE


# --- semantic errors ------------------------------------------------------------------------


def test_unknown_attribute_is_named_with_its_position() -> None:
    error = compile_error("select light\nwhere humidity > 3")
    assert "unknown attribute 'humidity'" in error.message
    assert (error.line, error.column) == (2, 7)


def test_or_is_refused_with_the_reason() -> None:
    error = compile_error("select light where light > 3 or temp < 2")
    assert "conjunction" in error.message
    assert (error.line, error.column) == (1, 30)


@pytest.mark.parametrize(
    ("sql", "fragment", "column"),
    [
        ("select light group by nodeid", "GROUP BY needs an aggregate", 23),
        ("select light where avg(light) > 3", "use HAVING", 20),
        ("select light where light > temp", "compares one attribute with a constant", 20),
        ("select light where light * temp > 3", "one arithmetic operator", 20),
        ("select winavg(light) epoch duration 256", "expects 2 constant", 8),
        ("select frobnicate(light)", "unknown aggregate 'FROBNICATE'", 8),
        ("select light, light", "duplicate output column", 15),
        ("select light having max(light) > 3", "HAVING needs an aggregate", 21),
        ("select light where light > 40000", "does not fit 16 bits", 28),
        ("select avg(max(light))", "cannot be nested", 12),
        ("select sum(*)", "COUNT(*)", 12),
        ("SELECT WINAVG(light, 8s, 4s) ONCE", "needs a sample period", 22),
        ("stop query 3", "STOP QUERY", 1),
    ],
)
def test_semantic_errors(sql: str, fragment: str, column: int) -> None:
    error = compile_error(sql)
    assert fragment in error.message
    assert (error.line, error.column) == (1, column)


# --- selection ordering (paper §4.2.2, Fig. 6) ---------------------------------------------------


def test_fig6_accel_first_wins_for_comparable_selectivities() -> None:
    # Written so the tools' reversed order would sample the magnetometer first.
    plan = compile_query("select accel_x, mag_x where accel_x > 500 and mag_x > 500")
    assert [s.attribute for s in plan.selections] == ["accel_x", "mag_x"]
    s = 523 / 1024  # values 501..1023 of 0..1023
    explanation = plan.explanation
    assert explanation.chosen.energy_uj == pytest.approx(energy("accel_x") + s * energy("mag_x"))
    assert explanation.naive.energy_uj == pytest.approx(energy("mag_x") + s * energy("accel_x"))
    assert explanation.reordered
    text = explain(plan)
    assert "tools' order" in text and "optimised" in text and "why: sampling accel_x first" in text


def test_fig6_mag_first_wins_when_its_predicate_is_very_selective() -> None:
    plan = compile_query("select accel_x, mag_x where mag_x > 1020 and accel_x > 3")
    assert [s.attribute for s in plan.selections] == ["mag_x", "accel_x"]
    s_mag, s_accel = 3 / 1024, 1020 / 1024
    cost = plan.explanation.chosen.energy_uj
    assert cost == pytest.approx(energy("mag_x") + s_mag * energy("accel_x"))
    assert cost < energy("accel_x") + s_accel * energy("mag_x")


def test_without_optimisation_the_tools_order_is_kept() -> None:
    plan = compile_query(
        "select accel_x, mag_x where accel_x > 500 and mag_x > 500", optimize=False
    )
    assert [s.attribute for s in plan.selections] == ["mag_x", "accel_x"]
    assert "optimisation off" in explain(plan)


def test_equal_costs_keep_the_tools_order() -> None:
    plan = compile_query("select light, temp where light > 511 and temp > 511")
    assert [s.attribute for s in plan.selections] == ["temp", "light"]
    assert not plan.explanation.reordered


def test_selectivity_is_uniform_over_the_catalog_range() -> None:
    plan = compile_query(
        "select light where light > 200 and temp <= 99 and voltage = 7 and noise <> 7"
    )
    by_attribute = {s.attribute: s.selectivity for s in plan.selections}
    assert by_attribute == pytest.approx(
        {"light": 823 / 1024, "temp": 100 / 1024, "voltage": 1 / 1024, "noise": 1023 / 1024}
    )


def _independent_cost(order: list[tuple[str, float]], needed: list[str]) -> float:
    sampled: set[str] = set()
    reach, cost = 1.0, 0.0
    for attribute, selectivity in order:
        if attribute not in sampled:
            cost += reach * energy(attribute)
            sampled.add(attribute)
        reach *= selectivity
    return cost + reach * sum(energy(a) for a in needed if a not in sampled)


PREDICATE = st.tuples(
    st.sampled_from(["light", "accel_x", "mag_x", "nodeid", "temp"]),
    st.sampled_from([">", "<"]),
    st.integers(min_value=0, max_value=1023),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(PREDICATE, min_size=1, max_size=5))
def test_chosen_order_is_the_cheapest_of_all_orders(
    predicates: list[tuple[str, str, int]],
) -> None:
    where = " and ".join(f"{a} {op} {v}" for a, op, v in predicates)
    plan = compile_query(f"select light where {where}")
    needed = [f.name for f in plan.fields]
    ranges = {
        name: (CATALOG.attributes[name].min_value, CATALOG.attributes[name].max_value)
        for name in needed
    }

    def passing(attribute: str, op: str, value: int) -> float:
        lo, hi = ranges[attribute]
        hits = sum(1 for x in range(lo, hi + 1) if (x > value if op == ">" else x < value))
        return hits / (hi - lo + 1)

    jobs = [(a, passing(a, op, v)) for a, op, v in predicates]
    best = min(_independent_cost(list(p), needed) for p in itertools.permutations(jobs))
    chosen = [(s.attribute, passing(s.attribute, s.op, s.value)) for s in plan.selections]
    assert _independent_cost(chosen, needed) == pytest.approx(best, abs=1e-9)
    assert plan.explanation.chosen.energy_uj == pytest.approx(best, abs=1e-9)


# --- exemplary-aggregate pushdown (§4.2.1) -------------------------------------------------------


def test_windowed_max_with_expensive_predicate_samples_the_aggregate_first() -> None:
    plan = compile_query(
        "SELECT WINMAX(light, 8s, 8s) FROM sensors WHERE mag_x > 900 SAMPLE PERIOD 1s"
    )
    decision = plan.explanation.pushdown
    assert decision is not None
    s = 123 / 1024
    p = sum(1 / (1 + s * (k - 1)) for k in range(1, 9)) / 8
    assert decision.window == 8
    assert decision.improve_probability == pytest.approx(p)
    assert decision.predicates_first_uj == pytest.approx(energy("mag_x") + s * energy("light"))
    assert decision.aggregate_first_uj == pytest.approx(energy("light") + p * energy("mag_x"))
    assert decision.push_down
    assert "sample the aggregate attribute first" in explain(plan)


def test_plain_max_never_pushes_down() -> None:
    plan = compile_query("select max(light) where mag_x > 900")
    decision = plan.explanation.pushdown
    assert decision is not None and decision.improve_probability == 1.0
    assert not decision.push_down


def test_pushdown_does_not_apply_to_non_exemplary_aggregates() -> None:
    assert compile_query("select avg(light) where mag_x > 900").explanation.pushdown is None


def test_improve_probability_of_a_two_epoch_window() -> None:
    assert improve_probability(2, 0.5) == pytest.approx((1 + 1 / 1.5) / 2)


# --- LIFETIME (§3.6) --------------------------------------------------------------------------


#: A querying node listens 114 ms in its parent's down slot (schedule.h) at 46.2 mW (CPU +
#: radio) -- every 1,024 ms below 6,144-ms epochs, twice an epoch from there on -- and
#: sleeps at 0.045 mW otherwise.
DOWN = 114 / 1024
SLEEP_MW = 0.045
LEAF_FLOOR_MW = DOWN * 46.2 + (1 - DOWN) * SLEEP_MW
#: The whole awake time of a long epoch for a child of the root, the down slots included.
LONG_EPOCH_AWAKE_MS = 361.0


def _spend_mw(e_s_uj: float, floor_mw: float, period_ms: float) -> float:
    """Average power of a node sampling every period_ms: the floor and e_s per epoch."""
    return floor_mw + e_s_uj / period_ms


def test_the_papers_24_weeks_plan_two_down_waves_an_epoch() -> None:
    """TODS 2005 §3.6's example. 27,000 J over 4,032 h is 1.86 mW; a leaf listening in
    every control period's down slot spent 5.18 mW on that alone. From 6,144-ms epochs the
    wave comes twice an epoch and a child of the root sleeps but for 361 ms an epoch: a
    sample every 10.45 s (the paper: 15.2 s; docs/papers.md)."""
    plan = compile_query("SELECT nodeid, light FROM sensors LIFETIME 24 weeks")
    estimate = plan.explanation.lifetime
    assert estimate is not None and estimate.long_epochs
    model = CATALOG.energy
    e_s = (
        energy("light")
        + model.cpu_uj_per_sample
        + model.radio_tx_uj_per_message
        + LONG_EPOCH_AWAKE_MS * 46.2
    )
    assert e_s == pytest.approx(18_967.29)
    p_h = 27_000.0 / 4032.0
    period = 3_600_000.0 / ((p_h - SLEEP_MW * 3.6) / (e_s * 1e-6))
    assert period == pytest.approx(10449.6, abs=0.1)
    assert estimate.e_s_uj == pytest.approx(e_s)
    assert estimate.floor_mw == pytest.approx(SLEEP_MW)
    assert estimate.period_ms == pytest.approx(period)
    assert plan.epoch_units == 1045
    text = explain(plan)
    assert "schedule: down wave twice an epoch (epochs from 6.144 s)" in text
    assert "epoch awake 361.0 ms x 46.2 mW = 18,967.29 µJ" in text
    assert "period = 3600 s / T = 10.450 s" in text


def test_the_papers_4_and_1_weeks_keep_the_wave_of_every_period() -> None:
    # 4 weeks: 11.16 mW. Just under 4,096-ms epochs a child of the root still waits for the
    # end of the root's interval and spends 12.3 mW; from 4,096 on the root's beacon in
    # every epoch ends that wait and it spends 10.5 mW: the period is the step, 4.1 s.
    four = compile_query("SELECT nodeid, light FROM sensors LIFETIME 4 weeks")
    estimate = four.explanation.lifetime
    assert estimate is not None and not estimate.long_epochs
    assert estimate.floor_mw == pytest.approx(LEAF_FLOOR_MW)
    assert estimate.period_ms == pytest.approx(4096.35, abs=0.01)
    assert four.epoch_units == 410
    assert _spend_mw(estimate.e_s_uj, estimate.floor_mw, estimate.period_ms) == pytest.approx(
        27_000.0 / 672.0 / 3.6
    )
    # 1 week: 44.6 mW, nearly awake all along; the period only moves the rest.
    one = compile_query("SELECT nodeid, light FROM sensors LIFETIME 1 weeks")
    assert one.explanation.lifetime is not None
    assert one.explanation.lifetime.period_ms == pytest.approx(263.70, abs=0.01)
    assert one.epoch_units == 27


def test_lifetime_sets_the_epoch_from_the_energy_budget() -> None:
    plan = compile_query("SELECT light LIFETIME 30 days", battery=BatteryState(2500, 3.0))
    model = CATALOG.energy
    estimate = plan.explanation.lifetime
    assert estimate is not None
    fixed = energy("light") + model.cpu_uj_per_sample + model.radio_tx_uj_per_message
    # 37.5 J/h (10.42 mW), less the leaf's floor of 5.18 mW, pays for a sample every 4.2 s:
    # the schedule's measured awake time there, 425 ms an epoch (interpolated between 4.1
    # and 4.2 s), included.
    assert estimate.epoch_awake_ms == pytest.approx(425.29, abs=0.01)
    assert estimate.e_s_uj == pytest.approx(fixed + estimate.epoch_awake_ms * 46.2)
    assert estimate.period_ms == pytest.approx(4191.91, abs=0.01)
    assert _spend_mw(estimate.e_s_uj, LEAF_FLOOR_MW, estimate.period_ms) == pytest.approx(
        37.5 / 3.6
    )
    assert plan.epoch_units == math.ceil(estimate.period_ms / 10)
    assert estimate.c_rem_j == pytest.approx(27_000.0)
    assert estimate.p_h == pytest.approx(37.5)
    assert estimate.floor_mw == pytest.approx(LEAF_FLOOR_MW)
    text = explain(plan)
    assert "p_h = c_rem / l = 27,000.0 J / 720.00 h = 37.5000 J/h" in text
    assert "schedule: down wave every 1.024 s" in text
    assert "p_f = schedule floor (leaf): awake 11.1%" in text
    assert "T = (p_h - p_f) / e_s" in text


def test_lifetime_counts_forwarded_children_and_remaining_charge() -> None:
    # A relay of aggregates also listens through two of the epoch's 8 intervals.
    plan = compile_query(
        "SELECT AVG(light), MAX(accel_x) LIFETIME 5 days",
        battery=BatteryState(2500, 3.0, remaining_fraction=0.5),
        children=3,
    )
    estimate = plan.explanation.lifetime
    assert estimate is not None
    model = CATALOG.energy
    e_s = (
        energy("light")
        + energy("accel_x")
        + model.cpu_uj_per_sample
        + 3 * model.radio_rx_uj_per_message
        + model.radio_tx_uj_per_message
        + estimate.epoch_awake_ms * 46.2
    )
    awake = DOWN + 2 / 8
    floor = awake * 46.2 + (1 - awake) * SLEEP_MW
    assert estimate.e_s_uj == pytest.approx(e_s)
    assert estimate.floor_mw == pytest.approx(floor)
    assert estimate.period_ms == pytest.approx(1689.75, abs=0.01)
    assert _spend_mw(e_s, floor, estimate.period_ms) == pytest.approx(0.5 * 27_000.0 / 120.0 / 3.6)
    assert plan.epoch_units == math.ceil(estimate.period_ms / 10)


def test_a_relay_of_tuples_listens_all_along() -> None:
    error = compile_error("SELECT light LIFETIME 30 days", children=3)
    # 46.2 mW around the clock: 27,000 J last 162 h.
    assert "cannot be met at any sample period" in error.message
    assert "awake 100.0%" in error.message and "at most 162 h" in error.message


def test_aggregate_lifetime_sends_one_merged_record() -> None:
    estimate = compile_query("SELECT AVG(light) LIFETIME 10 days", children=5).explanation.lifetime
    assert estimate is not None and (estimate.messages_rx, estimate.messages_tx) == (5, 1)


def test_a_lifetime_between_the_regimes_is_planned_at_the_first_long_epoch() -> None:
    # 60 days: every short epoch spends more than 5.2 mW (the floor alone is 5.18 mW), the
    # first long one 2.2 mW: planned there, at 6.15 s, and outlasting the request.
    plan = compile_query("SELECT light LIFETIME 1440 hours")
    estimate = plan.explanation.lifetime
    assert estimate is not None and estimate.long_epochs and not estimate.spends_budget
    assert estimate.period_ms == 6144.0
    assert plan.epoch_units == 615
    assert "spends less than p_h and every shorter one more" in explain(plan)


def test_min_sample_rate_rejects_an_unachievable_lifetime() -> None:
    error = compile_error("SELECT light LIFETIME 30 days MIN SAMPLE RATE 10")
    assert "cannot be met" in error.message
    assert (error.line, error.column) == (1, 47)
    # the budget allows one sample every 4.2 s: one every 5 s is fine, every 1 s not
    assert compile_query("SELECT light LIFETIME 30 days MIN SAMPLE RATE 0.2").epoch_units > 0
    compile_error("SELECT light LIFETIME 30 days MIN SAMPLE RATE 1")
    compile_error("SELECT light LIFETIME 30 days MIN SAMPLE RATE 100ms")


def test_lifetime_longer_than_the_longest_epoch_is_refused() -> None:
    # 4,000 days: 0.078 mW, 0.033 mW over sleep, pays for 13.1 mJ every 395 s.
    assert "longest epoch" in compile_error("SELECT light LIFETIME 4000 days").message


def test_short_lifetime_uses_the_shortest_epoch_the_tools_accept() -> None:
    plan = compile_query("SELECT light LIFETIME 1 hours")
    assert plan.epoch_units == 7
    assert "shortest epoch" in explain(plan)


# --- what the gateway evaluates itself ---------------------------------------------------------


def test_select_list_arithmetic_is_a_post_projection() -> None:
    plan = compile_query("select light + 10, temp / 10")
    assert [f.name for f in plan.fields] == ["light", "temp"]
    assert plan.expressions == ()
    assert plan.output_columns == ("light + 10", "temp / 10")
    assert plan.project({"light": 5, "temp": 123}) == {"light + 10": 15, "temp / 10": 12}
    assert plan.project({"light": None, "temp": -15}) == {"light + 10": None, "temp / 10": -1}
    assert "applied by the gateway" in explain(plan)


@pytest.mark.parametrize(
    ("sql", "row", "columns"),
    [
        # the select list is the row: a copy (QueryPlan._copied_columns)
        ("SELECT nodeid, light", {"nodeid": 3, "light": None}, {"nodeid": 3, "light": None}),
        # the same names in another order, or more names than columns: evaluated
        ("SELECT light, nodeid", {"nodeid": 3, "light": 9}, {"light": 9, "nodeid": 3}),
        ("SELECT light WHERE temp > 5", {"light": 9, "temp": 7}, {"light": 9}),
        ("SELECT light AS a, light AS b", {"light": 9}, {"a": 9, "b": 9}),
        ("SELECT light, light * 2", {"light": 9}, {"light": 9, "light * 2": 18}),
        ("SELECT MAX(light)", {"MAX(light)": 4}, {"MAX(light)": 4}),
    ],
)
def test_project_gives_the_columns_in_select_order(
    sql: str, row: dict[str, int | None], columns: dict[str, int | None]
) -> None:
    plan = compile_query(sql)
    projected = plan.project(row)
    assert projected == columns
    assert list(projected) == list(columns)
    assert projected is not row
    evaluated = {column.name: column.value.evaluate(row) for column in plan.outputs}
    assert list(evaluated.items()) == list(projected.items())


def test_having_with_an_aggregate_outside_the_select_list() -> None:
    plan = compile_query(
        "SELECT AVG(light), nodeid FROM sensors GROUP BY nodeid "
        "HAVING AVG(light) > 100 OR MAX(temp) < 3"
    )
    assert [(a.column, a.hidden) for a in plan.aggregates] == [
        ("AVG(light)", False),
        ("MAX(temp)", True),
    ]
    assert plan.output_columns == ("AVG(light)", "nodeid")
    assert plan.having_matches({"AVG(light)": 150, "MAX(temp)": 9, "nodeid": 1})
    assert plan.having_matches({"AVG(light)": 50, "MAX(temp)": 2, "nodeid": 1})
    assert not plan.having_matches({"AVG(light)": 50, "MAX(temp)": 9, "nodeid": 1})
    assert not plan.having_matches({"AVG(light)": None, "MAX(temp)": None, "nodeid": 1})
    assert plan.project({"AVG(light)": 50.5, "MAX(temp)": 9, "nodeid": 1}) == {
        "AVG(light)": 50.5,
        "nodeid": 1,
    }


def test_no_having_matches_everything() -> None:
    assert compile_query("select max(light)").having_matches({})


def test_no_interleave_and_output_action_are_recorded() -> None:
    plan = compile_query("SELECT NO INTERLEAVE light OUTPUT ACTION SetSnd(512)")
    assert plan.no_interleave
    assert plan.output_action is not None
    assert (plan.output_action.command, plan.output_action.param) == ("SetSnd", 512)


# --- what the query message cannot carry, refused at plan time --------------------------------


def test_a_lifetime_of_zero_is_refused_at_the_lifetime_clause() -> None:
    for sql in ("SELECT light FROM sensors LIFETIME 0 days", "SELECT light LIFETIME 0.0 h"):
        error = compile_error(sql)
        assert error.message.endswith("must be longer than zero")
        assert (error.line, error.column) == (1, sql.index("LIFETIME") + 1)
    assert compile_error("SELECT light LIFETIME 0 days").message == (
        "LIFETIME 0 days must be longer than zero"
    )


def test_an_output_action_name_longer_than_char8_is_refused_at_plan_time() -> None:
    sql = "SELECT light FROM sensors OUTPUT ACTION abcdefghij"
    error = compile_error(sql)
    assert error.message == (
        "OUTPUT ACTION abcdefghij: the query message carries a command name of at most 8 "
        "Latin-1 characters (CmdBufInfo.name is char[8])"
    )
    assert (error.line, error.column) == (1, 27)
    plan = compile_query("SELECT light FROM sensors OUTPUT ACTION abcdefgh(-32768)")
    assert encode_query(plan, 1)[-1][19:30] == b"abcdefgh\x00\x00\x80"


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        ("λ", "OUTPUT ACTION λ: the query message carries a command name of at most 8"),
        ("beep(32768)", "OUTPUT ACTION beep(32768): the argument does not fit 16 bits"),
        ("beep(-32769)", "OUTPUT ACTION beep(-32769): the argument does not fit 16 bits"),
    ],
)
def test_output_actions_the_buffer_part_cannot_carry(action: str, fragment: str) -> None:
    error = compile_error(f"SELECT light OUTPUT ACTION {action}")
    assert error.message.startswith(fragment)
    assert (error.line, error.column) == (1, 14)


def test_too_many_predicates_points_at_the_first_that_does_not_fit() -> None:
    predicates = [f"light > {k}" for k in range(20)]
    sql = "SELECT light FROM sensors WHERE " + " AND ".join(predicates)
    error = compile_error(sql)
    assert error.message == (
        "too many predicates: the query message carries at most 16 expressions (WHERE "
        "predicates and aggregates), this WHERE has 20"
    )
    assert (error.line, error.column) == (1, sql.index("light > 16") + 1)


def test_too_many_expressions_points_at_the_first_aggregate_that_does_not_fit() -> None:
    aggregates = ", ".join(f"{a}({b})" for a in ("max", "min", "sum") for b in ("light", "temp"))
    sql = f"SELECT {aggregates} WHERE " + " AND ".join(f"light > {k}" for k in range(12))
    error = compile_error(sql)
    assert error.message == (
        "a query has at most 16 expressions (WHERE predicates and aggregates), this one needs 18"
    )
    # 12 predicates and 4 aggregates fit: sum(light), the fifth aggregate, does not.
    assert (error.line, error.column) == (1, sql.index("sum(light)") + 1)


def test_a_query_that_reads_no_attribute_is_refused() -> None:
    error = compile_error("SELECT 1 + 2 AS three FROM sensors")
    assert error.message == (
        "the query reads no attribute, so there is no query message to send; select an "
        "attribute or an aggregate"
    )
    assert (error.line, error.column) == (1, 8)
