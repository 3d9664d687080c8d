"""TinySQL parser: both dialects, STOP QUERY, and errors with line/column."""

from __future__ import annotations

import pytest

from motebase.gateway.tinysql import SelectQuery, StopQuery, TinySQLError, ast, parse_statement
from motebase.gateway.tinysql.lexer import MAX_NUMBER_LENGTH
from motebase.gateway.tinysql.parser import MAX_DEPTH


def select(sql: str) -> SelectQuery:
    statement = parse_statement(sql)
    assert isinstance(statement, SelectQuery)
    return statement


def error_of(sql: str) -> TinySQLError:
    with pytest.raises(TinySQLError) as info:
        parse_statement(sql)
    return info.value


# --- the TinyDB tools' dialect ------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "select light from sensors where light > 3 epoch duration 2048",
        "SELECT LIGHT FROM SENSORS WHERE LIGHT > 3 EPOCH DURATION 2048",
        "Select Light From Sensors Where Light > 3 Epoch Duration 2048",
        "select sensors.light where sensors.light > 3 epoch duration 2048;",
    ],
)
def test_keywords_in_any_case_give_the_same_tree(sql: str) -> None:
    query = select(sql)
    assert [item.expr.name for item in query.items if isinstance(item.expr, ast.Name)] == ["light"]
    assert isinstance(query.where, ast.Comparison)
    assert query.where.op == ">"
    assert isinstance(query.timing, ast.EpochDuration)
    assert query.timing.period.value == 2048
    assert query.timing.period.unit is None


def test_epoch_duration_with_for_clause() -> None:
    query = select("select light epoch duration 512 for 10")
    assert isinstance(query.timing, ast.EpochDuration)
    assert query.for_clause is not None
    assert (query.for_clause.count.value, query.for_clause.count.unit) == (10, None)


def test_tools_temporal_aggregate_puts_constants_first() -> None:
    query = select("select winavg(8, 4, light) epoch duration 256")
    call = query.items[0].expr
    assert isinstance(call, ast.AggCall)
    assert call.name == "WINAVG"
    assert [type(a).__name__ for a in call.args] == ["Number", "Number", "Name"]
    assert query.items[0].column == "winavg(8, 4, light)"


def test_arithmetic_precedence_and_parenthesised_operand() -> None:
    query = select("select light + 2 * temp >> 1 where (light / 10) > 50")
    expr = query.items[0].expr
    assert isinstance(expr, ast.BinaryOp) and expr.op == ">>"
    assert isinstance(expr.left, ast.BinaryOp) and expr.left.op == "+"
    assert isinstance(expr.left.right, ast.BinaryOp) and expr.left.right.op == "*"
    where = query.where
    assert isinstance(where, ast.Comparison)
    assert isinstance(where.left, ast.BinaryOp) and where.left.op == "/"


def test_parenthesised_conditions_and_or_are_parsed_for_the_planner_to_judge() -> None:
    query = select("select light where (light > 3 and temp < 2) or nodeid = 1")
    assert isinstance(query.where, ast.BoolOp)
    assert query.where.op == "OR"
    assert isinstance(query.where.left, ast.BoolOp) and query.where.left.op == "AND"


def test_output_action_with_and_without_argument() -> None:
    action = select("select light where light < 400 output action SetSnd(512)").output_action
    assert action == ast.OutputAction("SetSnd", 512, action.pos) if action else False
    bare = select("select light output action Blink").output_action
    assert bare is not None and (bare.command, bare.argument) == ("Blink", None)


def test_attribute_named_group_is_not_the_group_by_keyword() -> None:
    query = select("select group, avg(light) group by group")
    assert query.items[0].expr == ast.Name("group", query.items[0].pos)
    assert isinstance(query.group_by, ast.Name) and query.group_by.name == "group"


# --- the paper's dialect (Appendix B) -----------------------------------------------------


def test_sample_period_for_duration() -> None:
    query = select("SELECT nodeid, light FROM sensors SAMPLE PERIOD 1s FOR 10s")
    assert isinstance(query.timing, ast.SamplePeriod)
    assert (query.timing.period.value, query.timing.period.unit) == (1, "S")
    assert query.for_clause is not None
    assert (query.for_clause.count.value, query.for_clause.count.unit) == (10, "S")


def test_sample_period_in_milliseconds_and_once() -> None:
    timing = select("SELECT light SAMPLE PERIOD 500ms").timing
    assert isinstance(timing, ast.SamplePeriod) and timing.period.unit == "MS"
    assert isinstance(select("SELECT light ONCE").timing, ast.Once)


def test_lifetime_with_min_sample_rate() -> None:
    timing = select("SELECT light LIFETIME 30 days MIN SAMPLE RATE 1").timing
    assert isinstance(timing, ast.Lifetime)
    assert (timing.duration.value, timing.duration.unit) == (30, "DAYS")
    assert timing.min_sample_rate is not None and timing.min_sample_rate.value == 1


def test_paper_temporal_aggregate_with_durations() -> None:
    call = select("SELECT WINAVG(light, 8s, 4s) FROM sensors SAMPLE PERIOD 1s").items[0].expr
    assert isinstance(call, ast.AggCall)
    assert isinstance(call.args[0], ast.Name)
    assert [(a.value, a.unit) for a in call.args[1:] if isinstance(a, ast.Number)] == [
        (8, "S"),
        (4, "S"),
    ]


def test_no_interleave_having_and_count_star() -> None:
    query = select(
        "SELECT NO INTERLEAVE COUNT(*), AVG(temp) FROM sensors GROUP BY nodeid "
        "HAVING AVG(temp) > 100 SAMPLE PERIOD 10s"
    )
    assert query.no_interleave
    assert isinstance(query.having, ast.Comparison)
    count = query.items[0].expr
    assert isinstance(count, ast.AggCall) and isinstance(count.args[0], ast.Star)


def test_trailing_clauses_in_any_order() -> None:
    query = select("select light output action SetSnd(1) sample period 2s for 3")
    assert query.output_action is not None
    assert isinstance(query.timing, ast.SamplePeriod)


def test_stop_query() -> None:
    statement = parse_statement("STOP QUERY 7")
    assert isinstance(statement, StopQuery) and statement.qid == 7
    assert parse_statement("stop query 0;") == StopQuery(0, ast.Pos(1, 1))


# --- errors ---------------------------------------------------------------------------------


def test_error_points_at_line_and_column_and_says_what_was_expected() -> None:
    error = error_of("select light\nwhere light >")
    assert (error.line, error.column) == (2, 14)
    assert error.expected == "an attribute, aggregate or number"
    assert "line 2, column 14" in str(error)


def test_missing_comparison_operator() -> None:
    error = error_of("select light where light 5")
    assert (error.line, error.column) == (1, 26)
    assert "comparison operator" in error.expected


def test_garbage_after_the_query() -> None:
    error = error_of("select light epoch duration 100 extra")
    assert (error.line, error.column, error.expected) == (1, 33, "end of query")


def test_keyword_where_an_attribute_belongs() -> None:
    error = error_of("select from sensors")
    assert (error.line, error.column) == (1, 8)
    assert "keyword" not in error.expected and "attribute" in error.expected


def test_unexpected_character() -> None:
    error = error_of("select light where light > 3 & temp < 2")
    assert (error.line, error.column) == (1, 30)


def test_two_sample_periods_are_refused() -> None:
    error = error_of("select light epoch duration 100 sample period 1s")
    assert (error.line, error.column) == (1, 33)


def test_stop_query_id_range() -> None:
    error = error_of("stop query 255")
    assert (error.line, error.column) == (1, 12)


@pytest.mark.parametrize(
    ("sql", "column", "what"),
    [
        ("ON EVENT bird_detect(loc): SELECT light", 1, "ON EVENT"),
        ("CREATE BUFFER birds SIZE 10 (light uint16)", 1, "CREATE BUFFER"),
        ("CREATE STORAGE POINT recent SIZE 8 AS (SELECT light)", 1, "STORAGE POINT"),
        ("SELECT light INTO birds", 14, "INTO"),
        ("SELECT light FROM recent_light", 19, "FROM recent_light"),
        ("SELECT light OUTPUT ACTION SIGNAL hot(light)", 28, "SIGNAL"),
        ("SELECT light TRIGGER ACTION SetSnd(1)", 14, "TRIGGER"),
        ("DROP ALL", 1, "DROP ALL"),
    ],
)
def test_events_and_storage_points_are_not_supported_yet(sql: str, column: int, what: str) -> None:
    error = error_of(sql)
    assert "not supported yet" in str(error)
    assert what in str(error)
    assert (error.line, error.column) == (1, column)


def test_string_constants_are_not_supported_yet() -> None:
    error = error_of("select light where name = 'abc'")
    assert "not supported yet" in str(error)
    assert (error.line, error.column) == (1, 27)


# --- limits: depth and number length --------------------------------------------------------

WHERE = "select light from sensors where "  # 32 characters: the condition starts at column 33


def nested(opener: str, depth: int, inner: str = "light > 1") -> str:
    closers = ")" * depth if opener == "(" else ""
    return WHERE + (opener + " ") * depth + inner + closers


@pytest.mark.parametrize("opener", ["(", "NOT", "-"])
def test_nesting_up_to_the_limit_parses(opener: str) -> None:
    select(nested(opener, MAX_DEPTH))


@pytest.mark.parametrize(
    ("opener", "width"),
    [("(", len("( ")), ("NOT", len("NOT ")), ("-", len("- "))],
)
def test_nesting_past_the_limit_is_refused_where_it_goes_too_deep(opener: str, width: int) -> None:
    error = error_of(nested(opener, 200))
    assert error.message == (
        "nested too deeply: a query nests at most 32 levels of parentheses, NOT, unary "
        "minus and aggregate calls"
    )
    # The 33rd opener, which would open a 33rd level.
    assert (error.line, error.column) == (1, 33 + MAX_DEPTH * width)


def test_parenthesised_arithmetic_past_the_limit_is_refused() -> None:
    error = error_of("select max(" + "(" * 100 + "light" + ")" * 101)
    assert "nested too deeply" in error.message
    # max( is the first level; the 32nd '(' opens the 33rd.
    assert (error.line, error.column) == (1, len("select max(") + MAX_DEPTH)


def test_two_thousand_ands_are_refused_with_the_position_of_the_and_that_is_too_deep() -> None:
    sql = WHERE + " AND ".join(["light > 1"] * 2000)
    error = error_of(sql)
    assert error.message == (
        "too many conditions joined with AND: a condition nests at most 32 operators one "
        "inside another"
    )
    # The tree groups to the left, so the root is the last AND: the 33rd AND from the end
    # is the 33rd operator from the top, the first one too many.
    and_columns = [i + 2 for i in range(len(sql)) if sql.startswith(" AND ", i)]
    assert (error.line, error.column) == (1, and_columns[-(MAX_DEPTH + 1)])


def test_a_chain_of_arithmetic_past_the_limit_is_refused() -> None:
    error = error_of("select " + " + ".join(["light"] * 500))
    assert error.message == (
        "too many operators chained: an expression nests at most 32 operators one inside another"
    )


def test_the_longest_chain_within_the_limit_parses() -> None:
    # n comparisons: n - 1 ANDs over a comparison, n operators one inside another.
    query = select(WHERE + " AND ".join(["light > 1"] * MAX_DEPTH))
    assert isinstance(query.where, ast.BoolOp)
    error_of(WHERE + " AND ".join(["light > 1"] * (MAX_DEPTH + 1)))


def test_a_number_longer_than_the_limit_is_refused_where_it_starts() -> None:
    assert MAX_NUMBER_LENGTH == 40
    select("select light where light > " + "9" * 40)
    error = error_of("select light where light > " + "9" * 5000)
    assert error.message == "number 999999999999... is 5000 characters long; at most 40 are allowed"
    assert (error.line, error.column) == (1, 28)


# Superscript two, Arabic-Indic one, fullwidth seven: str.isdigit takes them all.
@pytest.mark.parametrize("digit", ["\u00b2", "\u0661", "\uff17"])
def test_only_ascii_digits_make_numbers(digit: str) -> None:
    error = error_of(f"select light where light > {digit}")
    assert error.message == f"unexpected character {digit!r}"
    assert (error.line, error.column) == (1, 28)
