"""docs/tinysql.md cannot drift from the parser: every ```sql example in it goes through the
parser and the planner (the accepted ones compile, the ones marked `-- refused: MESSAGE`
fail with that message), and every keyword, time unit and aggregate the grammar and the
catalog know appears in the page."""

from __future__ import annotations

import re

import pytest
from docs_text import DOCS, code_blocks

from motebase.gateway.catalog import default_catalog
from motebase.gateway.plan import StopQuery, TinySQLError, compile_query, parse_statement
from motebase.gateway.tinysql.parser import EPOCH_UNITS, RESERVED, TIME_UNITS

PAGE = DOCS / "tinysql.md"
EXAMPLES = code_blocks(PAGE, "sql")
#: Words of the grammar that are not in RESERVED (they follow another keyword).
CLAUSE_WORDS = ("GROUP", "DURATION", "PERIOD", "RATE", "ACTION", "INTERLEAVE", "QUERY", "NO")


def _refusal(example: str) -> str | None:
    first = example.splitlines()[0]
    match = re.match(r"-- refused: (.+)", first)
    return match.group(1) if match else None


def _sql(example: str) -> str:
    return "\n".join(line for line in example.splitlines() if not line.startswith("--"))


def _compile(sql: str) -> None:
    statement = parse_statement(sql)
    if not isinstance(statement, StopQuery):
        compile_query(sql)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: _sql(e)[:60])
def test_every_example_does_what_the_page_says(example: str) -> None:
    sql, refusal = _sql(example), _refusal(example)
    if refusal is None:
        _compile(sql)
        return
    with pytest.raises(TinySQLError) as caught:
        _compile(sql)
    assert refusal in str(caught.value)


def test_the_page_has_examples_of_both_outcomes() -> None:
    refused = [e for e in EXAMPLES if _refusal(e)]
    assert len(refused) >= 10 and len(EXAMPLES) - len(refused) >= 25


def _words(text: str) -> set[str]:
    return {w.upper() for w in re.findall(r"[A-Za-z_]+", text)}


def test_every_keyword_time_unit_and_aggregate_is_on_the_page() -> None:
    words = _words(PAGE.read_text())
    catalog = default_catalog()
    aggregates = {
        name
        for agg in catalog.aggregates.values()
        if agg.op_id  # NOOP is no aggregate a query can name
        for name in (agg.name, *agg.aliases)
    }
    expected = RESERVED | set(CLAUSE_WORDS) | set(TIME_UNITS) | EPOCH_UNITS | aggregates
    assert expected - words == set()


def test_every_select_example_that_compiles_uses_a_known_attribute() -> None:
    catalog = default_catalog()
    for example in EXAMPLES:
        if _refusal(example) is None and example.lstrip().upper().startswith("SELECT"):
            names = _words(_sql(example)) & {a.upper() for a in catalog.attributes}
            assert names or "COUNT(*)" in example, example
