"""Hypothesis strategies that write TinySQL: valid-ish queries from the grammar, then mutated.

A query is built as a list of tokens (keywords, names, numbers, operators) following the
grammar of gateway/tinysql/parser.py, with catalog names most of the time so that many
queries get past the binder and reach the planner and the encoder. Mutations then drop,
duplicate, swap or insert tokens, and the values stretch to the edges: huge and long
numbers, units, unknown and unicode identifiers, deep nesting, long AND chains.

``check_no_traceback`` is the property: a string either compiles through parse -> plan ->
encode (and explains), or is refused with a TinySQLError whose position lies inside it.
"""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

from motebase.gateway.catalog import default_catalog
from motebase.gateway.encoder import encode_query
from motebase.gateway.plan import TinySQLError, compile_query
from motebase.gateway.plan.capacity import capacity
from motebase.gateway.plan.explain import explain

_CATALOG = default_catalog()
ATTRIBUTES = sorted(_CATALOG.attributes)
AGGREGATES = sorted(_CATALOG.aggregates)
UNITS = ["ms", "s", "sec", "min", "h", "hours", "d", "days", "week", "months", "years"]
KEYWORDS = [
    "SELECT", "FROM", "sensors", "WHERE", "GROUP", "BY", "HAVING", "EPOCH", "DURATION",
    "SAMPLE", "PERIOD", "ONCE", "LIFETIME", "MIN", "RATE", "FOR", "OUTPUT", "ACTION", "AND",
    "OR", "NOT", "AS", "NO", "INTERLEAVE", "STOP", "QUERY", "epochs", "INTO", "ON", "TRIGGER",
]  # fmt: skip
PUNCTUATION = ["(", ")", ",", ".", ";", ":", "*", "+", "-", "/", "%", ">>", "=", "<>", "!="]
COMPARISONS = ["=", "<>", "!=", ">", ">=", "<", "<="]
ARITHMETIC = ["+", "-", "*", "/", "%", ">>"]

Tokens = list[str]


# --- leaves -------------------------------------------------------------------------------


@cache
def numbers() -> st.SearchStrategy[str]:
    small = st.integers(-5, 3000).map(str)
    wide = st.integers(-(2**40), 2**40).map(str)
    decimal = st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)).map(
        lambda p: f"{p[0]}.{p[1]}"
    )
    long_digits = st.integers(20, 400).map(lambda n: "9" * n)
    # Past 4,300 digits int() refuses the text (CPython's integer-string limit).
    giant = st.integers(4290, 4400).map(lambda n: "9" * n)
    tiny = st.integers(20, 400).map(lambda n: "0." + "0" * n + "1")
    edges = st.sampled_from(["0", "0.0", "32767", "32768", "-32768", "65535", "255", "256"])
    return _rarely(small, st.one_of(edges, wide, decimal, long_digits, tiny, giant), 3)


@cache
def identifiers() -> st.SearchStrategy[str]:
    ascii_name = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
    unicode_name = st.text(
        st.characters(categories=["L", "Nd", "Nl", "No"], exclude_characters="\n"),
        min_size=1,
        max_size=12,
    )
    return st.one_of(ascii_name, unicode_name)


@cache
def names() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(ATTRIBUTES),
        st.sampled_from(ATTRIBUTES),
        st.sampled_from(ATTRIBUTES).map(lambda a: f"sensors.{a}"),
        identifiers(),
    )


@cache
def durations() -> st.SearchStrategy[Tokens]:
    """``n``, ``n unit`` or ``nunit`` (a unit glued to the digits)."""
    unit = st.sampled_from(UNITS)
    return st.one_of(
        numbers().map(lambda n: [n]),
        st.tuples(numbers(), unit).map(list),
        st.tuples(numbers(), unit).map(lambda p: [p[0] + p[1]]),
    )


# --- expressions and conditions -----------------------------------------------------------


@cache
def expressions(max_leaves: int = 6) -> st.SearchStrategy[Tokens]:
    leaf = st.one_of(names().map(lambda n: [n]), numbers().map(lambda n: [n]))

    def extend(inner: st.SearchStrategy[Tokens]) -> st.SearchStrategy[Tokens]:
        binary = st.tuples(inner, st.sampled_from(ARITHMETIC), inner).map(
            lambda t: [*t[0], t[1], *t[2]]
        )
        call = st.tuples(
            st.sampled_from([*AGGREGATES, "COUNT", "winavg"]),
            st.lists(st.one_of(inner, durations(), st.just(["*"])), min_size=0, max_size=4),
        ).map(lambda t: [t[0], "(", *_joined(t[1], ","), ")"])
        return st.one_of(
            binary, call, inner.map(lambda e: ["(", *e, ")"]), inner.map(lambda e: ["-", *e])
        )

    return st.recursive(leaf, extend, max_leaves=max_leaves)


@cache
def comparisons() -> st.SearchStrategy[Tokens]:
    return st.tuples(expressions(3), st.sampled_from(COMPARISONS), expressions(2)).map(
        lambda t: [*t[0], t[1], *t[2]]
    )


@cache
def conditions() -> st.SearchStrategy[Tokens]:
    def extend(inner: st.SearchStrategy[Tokens]) -> st.SearchStrategy[Tokens]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(["AND", "AND", "OR"]), inner).map(
                lambda t: [*t[0], t[1], *t[2]]
            ),
            inner.map(lambda c: ["NOT", *c]),
            inner.map(lambda c: ["(", *c, ")"]),
        )

    return st.one_of(
        st.recursive(comparisons(), extend, max_leaves=5),
        long_chains(),
        deep_nesting(),
    )


@cache
def long_chains() -> st.SearchStrategy[Tokens]:
    """``light > 1 AND light > 1 AND ...`` with up to 3,000 comparisons."""
    comparison = st.tuples(
        st.sampled_from(ATTRIBUTES), st.sampled_from(COMPARISONS), st.integers(-5, 3000)
    ).map(lambda t: [t[0], t[1], str(t[2])])
    return st.tuples(comparison, st.sampled_from(["AND", "OR"]), st.integers(2, 3000)).map(
        lambda t: _joined([t[0]] * t[2], t[1])
    )


@cache
def deep_nesting() -> st.SearchStrategy[Tokens]:
    """Up to 300 parentheses, NOTs or minus signs around one comparison."""
    comparison = st.tuples(st.sampled_from(ATTRIBUTES), st.integers(-5, 3000)).map(
        lambda t: [t[0], ">", str(t[1])]
    )
    return st.tuples(
        st.sampled_from(["(", "NOT", "-"]), st.integers(1, 300), comparison, st.booleans()
    ).map(_nest)


def _nest(spec: tuple[str, int, Tokens, bool]) -> Tokens:
    opener, depth, inner, balanced = spec
    closers = [")"] * depth if opener == "(" and balanced else []
    return [opener] * depth + inner + closers


# --- a whole query ------------------------------------------------------------------------


def queries() -> st.SearchStrategy[Tokens]:
    """Half from the whole grammar (most of them refused), half plausible queries that
    mostly compile, so that the planner and the encoder see many shapes too."""
    return st.one_of(grammar_queries(), plausible_queries())


@st.composite
def grammar_queries(draw: st.DrawFn) -> Tokens:
    """The tokens of one SELECT (or now and then a STOP QUERY), clauses in grammar order."""
    if draw(st.integers(0, 19)) == 0:
        return ["STOP", "QUERY", draw(numbers())]
    tokens = ["SELECT"]
    if draw(st.integers(0, 9)) == 0:
        tokens += ["NO", "INTERLEAVE"]
    items = draw(st.lists(_select_item(), min_size=1, max_size=4))
    tokens += _joined(items, ",")
    if draw(st.booleans()):
        tokens += ["FROM", "sensors"]
    if draw(st.booleans()):
        tokens += ["WHERE", *draw(conditions())]
    if draw(st.integers(0, 3)) == 0:
        tokens += ["GROUP", "BY", *draw(expressions(2))]
    if draw(st.integers(0, 4)) == 0:
        tokens += ["HAVING", *draw(conditions())]
    for clause in draw(st.lists(_trailing_clause(), max_size=3)):
        tokens += clause
    if draw(st.booleans()):
        tokens.append(";")
    return tokens


@st.composite
def plausible_queries(draw: st.DrawFn) -> Tokens:
    """A tuple or an aggregate query over catalog attributes, WHERE a conjunction of
    ``attribute [op constant] cmp constant``, a timing clause: what users write."""
    attribute = st.sampled_from(ATTRIBUTES)
    aggregate = draw(st.booleans())
    if aggregate:
        items = draw(st.lists(_aggregate_call(), min_size=1, max_size=3, unique_by=tuple))
    else:
        items = draw(st.lists(_row_item(), min_size=1, max_size=4, unique_by=tuple))
    tokens = ["SELECT", *_joined(items, ","), "FROM", "sensors"]
    predicates = draw(st.lists(_predicate(), max_size=4))
    if predicates:
        tokens += ["WHERE", *_joined(predicates, "AND")]
    if aggregate and draw(st.booleans()):
        tokens += ["GROUP", "BY", draw(attribute)]
        if draw(st.booleans()):
            tokens += ["/", str(draw(st.integers(1, 8)))]
    if aggregate and draw(st.integers(0, 3)) == 0:
        tokens += ["HAVING", *items[0], draw(st.sampled_from(COMPARISONS)), draw(_constants())]
    tokens += draw(_plausible_timing())
    if draw(st.integers(0, 5)) == 0:
        command = draw(st.sampled_from(["SetLed", "beep", "abcdefgh", "abcdefghi"]))
        tokens += ["OUTPUT", "ACTION", command, "(", draw(_constants()), ")"]
    return tokens


def _rarely(
    common: st.SearchStrategy[str], rare: st.SearchStrategy[str], odds: int
) -> st.SearchStrategy[str]:
    """``rare`` about once in ``odds`` draws (one_of would pick each half the time)."""
    return st.integers(1, odds).flatmap(lambda k: rare if k == 1 else common)


@cache
def _constants() -> st.SearchStrategy[str]:
    edges = st.sampled_from(["0", "32767", "32768", "-32768", "-32769", "1.5"])
    return _rarely(st.integers(-100, 1100).map(str), edges, 16)


@cache
def _aggregate_call() -> st.SearchStrategy[Tokens]:
    attribute = st.sampled_from(ATTRIBUTES)
    plain = st.tuples(st.sampled_from(["MAX", "MIN", "AVG", "SUM", "COUNT"]), attribute).map(
        lambda t: [t[0], "(", t[1], ")"]
    )
    count_star = st.just(["COUNT", "(", "*", ")"])
    paper = st.tuples(
        st.sampled_from(["WINAVG", "WINMAX", "WINSUM", "WINCNT"]),
        attribute,
        st.integers(1, 12),
        st.integers(1, 12),
        st.sampled_from(["", "s"]),
    ).map(lambda t: [t[0], "(", t[1], ",", f"{t[2]}{t[4]}", ",", f"{t[3]}{t[4]}", ")"])
    tools = st.tuples(st.integers(0, 300), attribute).map(
        lambda t: ["expavg", "(", str(t[0]), ",", t[1], ")"]
    )
    return st.one_of(plain, plain, count_star, paper, tools)


@cache
def _row_item() -> st.SearchStrategy[Tokens]:
    attribute = st.sampled_from(ATTRIBUTES)
    return st.one_of(
        attribute.map(lambda a: [a]),
        st.tuples(attribute, st.sampled_from(ARITHMETIC), st.integers(1, 100)).map(
            lambda t: [t[0], t[1], str(t[2])]
        ),
    )


@cache
def _predicate() -> st.SearchStrategy[Tokens]:
    arith = st.one_of(
        st.just([]),
        st.tuples(st.sampled_from(ARITHMETIC), st.integers(1, 16)).map(lambda t: [t[0], str(t[1])]),
    )
    return st.tuples(
        st.sampled_from(ATTRIBUTES), arith, st.sampled_from(COMPARISONS), _constants()
    ).map(lambda t: [t[0], *t[1], t[2], t[3]])


@cache
def _plausible_timing() -> st.SearchStrategy[Tokens]:
    period = st.one_of(
        st.integers(1, 340_000).map(lambda n: ["EPOCH", "DURATION", str(n)]),
        st.tuples(st.integers(0, 600), st.sampled_from(["s", "ms", "min"])).map(
            lambda t: ["SAMPLE", "PERIOD", f"{t[0]}{t[1]}"]
        ),
    )
    epochs = st.one_of(st.just([]), st.integers(0, 40_000).map(lambda n: ["FOR", str(n)]))
    lifetime = st.tuples(
        st.integers(0, 2000), st.sampled_from(["days", "h", "ms"]), st.integers(0, 10)
    ).map(
        lambda t: [
            "LIFETIME",
            str(t[0]),
            t[1],
            *(["MIN", "SAMPLE", "RATE", str(t[2])] * (t[2] > 5)),
        ]
    )
    return st.one_of(
        st.just([]),
        st.tuples(period, epochs).map(lambda t: t[0] + t[1]),
        st.just(["ONCE"]),
        lifetime,
    )


@cache
def _select_item() -> st.SearchStrategy[Tokens]:
    alias = st.one_of(st.just([]), identifiers().map(lambda a: ["AS", a]))
    return st.tuples(expressions(), alias).map(lambda t: t[0] + t[1])


@cache
def _trailing_clause() -> st.SearchStrategy[Tokens]:
    argument = st.one_of(
        st.just([]),
        st.just(["(", ")"]),
        numbers().map(lambda n: ["(", n, ")"]),
    )
    command = st.one_of(identifiers(), st.sampled_from(["SetLed", "beep", "abcdefghij"]))
    return st.one_of(
        durations().map(lambda d: ["EPOCH", "DURATION", *d]),
        durations().map(lambda d: ["SAMPLE", "PERIOD", *d]),
        st.just(["ONCE"]),
        st.tuples(durations(), st.one_of(st.just([]), durations())).map(
            lambda t: ["LIFETIME", *t[0], *(["MIN", "SAMPLE", "RATE", *t[1]] if t[1] else [])]
        ),
        st.tuples(durations(), st.sampled_from(["", "epochs"])).map(
            lambda t: ["FOR", *t[0], *([t[1]] if t[1] else [])]
        ),
        st.tuples(command, argument).map(lambda t: ["OUTPUT", "ACTION", t[0], *t[1]]),
    )


# --- mutations ----------------------------------------------------------------------------


@cache
def random_tokens() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(KEYWORDS),
        st.sampled_from(PUNCTUATION),
        st.sampled_from(COMPARISONS),
        numbers(),
        identifiers(),
        st.text(min_size=1, max_size=3),
        st.sampled_from(
            ["'", '"', "'abc'", "--", "\n", "\t", "\x00", "é", "\u00b2", "\u0661\u0662", "ß"]
        ),
    )


@st.composite
def mutated(draw: st.DrawFn, tokens: Tokens, at_least: int = 0) -> Tokens:
    """``tokens`` with ``at_least`` up to ``at_least + 4`` random edits."""
    out = list(tokens)
    for _ in range(draw(st.integers(at_least, at_least + 4))):
        kind = draw(st.sampled_from(["drop", "duplicate", "swap", "insert", "replace"]))
        if not out:
            kind = "insert"
        i = draw(st.integers(0, max(len(out) - 1, 0)))
        if kind == "drop":
            del out[i]
        elif kind == "duplicate":
            out.insert(i, out[i])
        elif kind == "swap" and i + 1 < len(out):
            out[i], out[i + 1] = out[i + 1], out[i]
        elif kind == "insert":
            out.insert(i, draw(random_tokens()))
        elif kind == "replace":
            out[i] = draw(random_tokens())
    return out


def rendered(tokens: Tokens, separators: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(separators, min_size=len(tokens), max_size=len(tokens)).map(
        lambda seps: "".join(t + s for t, s in zip(tokens, seps, strict=True))
    )


_SEPARATORS = st.sampled_from([" ", " ", " ", "\n", "  ", "\t", ""])


@st.composite
def sql_strings(draw: st.DrawFn, at_least_mutations: int = 0) -> str:
    """A query from the grammar, mutated, as text (tokens separated by blanks mostly)."""
    tokens = draw(queries())
    if at_least_mutations or draw(st.booleans()):
        tokens = draw(mutated(tokens, at_least_mutations))
    # Long inputs are built without per-token draws: hypothesis caps the data it draws.
    if len(tokens) > 200:
        return " ".join(tokens)
    return draw(rendered(tokens, _SEPARATORS))


def _joined(parts: list[Tokens], separator: str) -> Tokens:
    out: Tokens = []
    for k, part in enumerate(parts):
        if k:
            out.append(separator)
        out += part
    return out


# --- the property -------------------------------------------------------------------------


def check_no_traceback(sql: str) -> bool:
    """True when ``sql`` compiles, encodes and explains; False when it is refused with a
    TinySQLError pointing inside ``sql``. Any other exception propagates."""
    try:
        plan = compile_query(sql)
    except TinySQLError as exc:
        assert_points_inside(sql, exc)
        return False
    messages = encode_query(plan, 1)
    assert messages and all(len(m) == 40 for m in messages)
    explain(plan)
    load = capacity(plan, nodes=25)
    if load is not None:
        load.describe()
    return True


def assert_points_inside(sql: str, error: TinySQLError) -> None:
    """The error's line and column name a character of ``sql`` (or the end of a line)."""
    lines = sql.split("\n")
    assert 1 <= error.line <= len(lines), (error, len(lines))
    assert 1 <= error.column <= len(lines[error.line - 1]) + 1, (error, lines[error.line - 1])
    assert error.message, error
