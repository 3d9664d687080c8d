"""Planner: where TinyDB's 16-bit arithmetic and partial states overflow (gateway/plan/overflow.py),
and the windows motes refuse."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from motebase.gateway.catalog import default_catalog
from motebase.gateway.plan import TinySQLError, compile_query
from motebase.gateway.plan.explain import explain
from motebase.gateway.plan.model import FieldArith
from motebase.gateway.plan.overflow import arith_range, max_nodes, narrow_limits, overflow_notes

CATALOG = default_catalog()
SUM, MIN, MAX, CNT, AVG, EXPAVG, WINAVG, WINSUM, WINMIN, WINMAX, WINCNT = range(1, 12)


def limits(sql: str) -> list[tuple[str, tuple[int, int], int | None]]:
    plan = compile_query(sql)
    return [
        (limit.aggregate.name, limit.reading, limit.max_nodes)
        for limit in narrow_limits(plan.aggregates, CATALOG.attributes)
    ]


def notes(sql: str) -> tuple[str, ...]:
    return compile_query(sql).explanation.notes


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("select sum(light)", [("SUM", (0, 1023), 32)]),  # 32 x 1023 = 32,736
        ("select avg(light)", [("AVG", (0, 1023), 32)]),  # the sum, not the count, limits
        ("select count(*)", [("CNT", (0, 255), 32767)]),
        ("select max(light), min(temp)", [("MAX", (0, 1023), None), ("MIN", (0, 1023), None)]),
        ("select expavg(14, light)", [("EXPAVG", (0, 1023), None)]),
        ("select winsum(3, 1, light)", [("WINSUM", (0, 1023), 10)]),  # 3 epochs per node
        ("select winavg(8, 4, light)", [("WINAVG", (0, 1023), 4)]),
        ("select wincnt(4, 1, light)", [("WINCNT", (0, 1023), 8191)]),
        ("select winmax(4, 1, light)", [("WINMAX", (0, 1023), None)]),
        ("select sum(light - 2000)", [("SUM", (-2000, -977), 16)]),  # 16 x -2000 >= -32,768
        ("select sum(light / 4)", [("SUM", (0, 255), 128)]),
        ("select sum(light * 100)", [("SUM", (0, 102300), 0)]),
        ("select sum(light % 7)", [("SUM", (0, 6), 5461)]),
    ],
)
def test_largest_network_a_tinydb_state_holds(
    sql: str, expected: list[tuple[str, tuple[int, int], int | None]]
) -> None:
    assert limits(sql) == expected


def test_the_limits_match_the_measured_overflows() -> None:
    # measured on TinyDB: 100 nodes of light 200-800 (SUM -31,997), WINAVG(light, 8, 4) over
    # 25 nodes (-15.68): both far past what 16 bits hold
    (sum_limit,) = narrow_limits(compile_query("select sum(light)").aggregates, CATALOG.attributes)
    assert sum_limit.max_nodes is not None and sum_limit.max_nodes < 100
    assert max_nodes(WINAVG, (8, 4), (200, 800)) == 5  # 5 x 8 x 800 = 32,000, well below 25
    assert max_nodes(SUM, (), (200, 800)) == 40


def test_explain_notes_the_node_limit_of_each_state() -> None:
    text = explain(compile_query("SELECT SUM(light) FROM sensors"))
    assert (
        "note: SUM(light) overflows the 16-bit TinyDB state beyond 32 nodes; motebase motes "
        "use 32-bit states"
    ) in text
    assert "beyond 4 nodes" in notes("select winavg(8, 4, light) epoch duration 256")[0]
    assert "in one group" in notes("select avg(light), nodeid group by nodeid")[0]
    assert not any("overflows" in n for n in notes("select max(light), min(temp)"))


def test_explain_notes_per_reading_arithmetic_outside_int16() -> None:
    (reading, state) = notes("select sum(light * 100)")
    assert reading.startswith("light * 100 ranges over 0..102,300, outside TinyDB's 16-bit")
    assert "motebase motes compute in 32 bits" in reading
    assert "SUM(light * 100) overflows the 16-bit TinyDB state even for one node" in state
    # selections and GROUP BY arithmetic too, each expression once
    found = notes("select max(light), nodeid where temp * 64 > 9000 group by nodeid * 200")
    assert sum("temp * 64 ranges over 0..65,472" in n for n in found) == 1
    assert sum("nodeid * 200 ranges over 0..51,000" in n for n in found) == 1
    assert notes("select max(light) where light * 10 > 900") == ()  # 10,230 fits


def test_notes_skip_attributes_the_catalog_does_not_know() -> None:
    plan = compile_query("select sum(light)")
    assert overflow_notes(plan.expressions, {}) == ()


@pytest.mark.parametrize(
    ("op", "const"),
    [("*", 7), ("*", -3), ("+", -40), ("-", 9), ("/", 3), ("/", -4), ("/", 0), ("%", 5),
     ("%", -6), (">>", 2), (">>", -1), ("", 0)],
)  # fmt: skip
@given(low=st.integers(-3000, 3000), width=st.integers(0, 60))
def test_arith_range_is_the_exact_range_of_c_arithmetic(
    op: str, const: int, low: int, width: int
) -> None:
    high = low + width
    values = [_c_apply(op, const, v) for v in range(low, high + 1)]
    got = arith_range(low, high, FieldArith(op, const))
    if op == "%":  # a bound: C's remainder keeps the dividend's sign, |r| < |c|
        assert got[0] <= min(values) and max(values) <= got[1]
    else:
        assert got == (min(values), max(values))


def _c_apply(op: str, c: int, v: int) -> int:
    if op == "*":
        return v * c
    if op == "+":
        return v + c
    if op == "-":
        return v - c
    if op in ("/", "%") and c != 0:
        q = abs(v) // abs(c) * (1 if (v >= 0) == (c >= 0) else -1)
        return q if op == "/" else v - q * c
    if op == ">>" and c >= 0:
        return v >> c
    return v


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("select winavg(6, 1, light)", "more than 4 epochs longer than its slide"),
        ("select winsum(10, 1, light)", "more than 8 epochs longer than its slide"),
        ("select winsum(0, 1, light)", "a window of 0 epochs"),
        ("select winmax(3, 0, light)", "a slide of 0 epochs"),
    ],
)
def test_windows_the_motes_refuse(sql: str, fragment: str) -> None:
    with pytest.raises(TinySQLError) as info:
        compile_query(sql)
    assert fragment in info.value.message
    assert (info.value.line, info.value.column) == (1, 8)


def test_windows_the_motes_accept() -> None:
    for sql in (
        "select winavg(5, 1, light)",
        "select winsum(9, 1, light)",
        "select winsum(200, 200, light)",
    ):
        assert compile_query(sql).aggregates
