"""Every line of the original tools' tinydb-testqueries.txt behaves as the file says.

The first block must compile and encode, the second must be refused, with one deliberate
exception: ``epoch duration 123456`` fits the wire (10-ms units up to 327,660 ms) and the
original tools accepted it too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from motebase.gateway.encoder import encode_query
from motebase.gateway.plan import TinySQLError, compile_query

# A verbatim copy of ../shared/data/tinydb-testqueries.txt (the original tools' test list),
# kept in the repo so the test runs wherever the repo is cloned.
TESTQUERIES = Path(__file__).parent / "data" / "tinydb-testqueries.txt"
ACCEPTED_DESPITE_FILE = {"select light epoch duration 123456"}


def _blocks() -> tuple[list[str], list[str]]:
    expected_ok: list[str] = []
    expected_fail: list[str] = []
    current = expected_ok
    for raw in TESTQUERIES.read_text().splitlines():
        line = raw.strip()
        if line.startswith("#"):
            current = expected_fail if "fail" in line else expected_ok
        elif line:
            current.append(line)
    return expected_ok, expected_fail


WORKING, FAILING = _blocks()


def test_the_file_has_both_blocks() -> None:
    assert len(WORKING) == 24
    assert len(FAILING) == 3


@pytest.mark.parametrize("sql", WORKING + sorted(ACCEPTED_DESPITE_FILE))
@pytest.mark.parametrize("optimize", [False, True])
def test_expected_to_work(sql: str, optimize: bool) -> None:
    plan = compile_query(sql, optimize=optimize)
    messages = encode_query(plan, 1)
    assert len(messages) == len(plan.fields) + len(plan.expressions) + (
        1 if plan.output_action else 0
    )
    assert all(len(m) == 40 and m[0] == 1 for m in messages)
    assert plan.output_columns


@pytest.mark.parametrize("sql", [q for q in FAILING if q not in ACCEPTED_DESPITE_FILE])
def test_expected_to_fail(sql: str) -> None:
    with pytest.raises(TinySQLError):
        compile_query(sql)


def test_group_by_the_aggregated_field_fails_with_the_tools_reason() -> None:
    with pytest.raises(TinySQLError) as info:
        compile_query("select avg(light) group by light")
    assert info.value.message == "Can't group by aggregate field."
    assert (info.value.line, info.value.column) == (1, 28)


def test_plain_field_in_aggregate_query_fails_with_the_tools_reason() -> None:
    with pytest.raises(TinySQLError) as info:
        compile_query("select avg(light),temp")
    assert info.value.message == "Can't SELECT non-aggregate fields in aggregate query."
    assert (info.value.line, info.value.column) == (1, 19)


def test_the_large_epoch_is_carried_in_ten_ms_units() -> None:
    plan = compile_query("select light epoch duration 123456")
    assert (plan.epoch_units, plan.epoch_ms) == (12345, 123450)


def test_count_is_cnt_on_the_wire() -> None:
    plan = compile_query("select count(light),max(temp),min(voltage),sum(nodeid)")
    assert [(a.name, a.op_id, a.attribute) for a in plan.aggregates] == [
        ("CNT", 4, "light"),
        ("MAX", 3, "temp"),
        ("MIN", 2, "voltage"),
        ("SUM", 1, "nodeid"),
    ]
    assert plan.output_columns == ("count(light)", "max(temp)", "min(voltage)", "sum(nodeid)")
