"""Grammar fuzzing of TinySQL: every string compiles or is refused with a position.

Queries come from tests/tinysql_grammar.py: the grammar's shapes with catalog names,
plausible queries, then dropped, duplicated, swapped and inserted tokens, huge and long
numbers, unicode, deep nesting and long AND chains. Each must either go through parse ->
plan -> encode (and `mote explain`'s rendering), or raise TinySQLError pointing inside the
string; any other exception is a traceback a user would see. `make fuzz` runs 10,000
mutated queries (tests/fuzz_tinysql.py).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from tinysql_grammar import check_no_traceback, sql_strings


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sql=sql_strings())
def test_every_query_compiles_or_is_refused_with_a_position(sql: str) -> None:
    check_no_traceback(sql)
