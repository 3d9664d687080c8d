"""Recursive-descent parser for both TinySQL dialects.

One grammar accepts the TinyDB tools' dialect (``EPOCH DURATION n [FOR k]``) and the
paper's (TODS 2005 Appendix B: ``SAMPLE PERIOD``, ``LIFETIME``, ``HAVING``, temporal
aggregates, ``NO INTERLEAVE``, ``OUTPUT ACTION``), keywords in any case::

    statement  := select | STOP QUERY n
    select     := SELECT [NO INTERLEAVE] item {',' item} [FROM source {',' source}]
                  [WHERE cond] [GROUP BY expr] [HAVING cond] {trailing} [';']
    trailing   := EPOCH DURATION time [FOR time] | SAMPLE PERIOD time [FOR time] | ONCE
                | LIFETIME time [MIN SAMPLE RATE time] | FOR time | OUTPUT ACTION name [(n)]
    cond       := conj {OR conj};  conj := neg {AND neg};  neg := NOT neg | '(' cond ')' | cmp
    cmp        := expr ('='|'<>'|'!='|'>'|'>='|'<'|'<=') expr
    expr       := sum {'>>' sum};  sum := term {('+'|'-') term}
    term       := unary {('*'|'/'|'%') unary}
    unary      := '-' unary | NUMBER[unit] | name ['.' name] | name '(' [arg {',' arg}] ')'
                | '(' expr ')'

Semantic checks (catalog names, what the wire format can carry, OR) happen in the
planner; only constructs this gateway does not implement at all (events, storage points,
buffers) are refused here, with "not supported yet".

Depth is bounded, so that neither this parser nor the planner's tree walks can exhaust
Python's stack. Around any point of a query there are at most ``MAX_DEPTH`` (32) levels of
parentheses, NOT, unary minus and aggregate calls, and at most ``MAX_DEPTH`` binary
operators (AND, OR, comparisons, arithmetic) one inside another; operators group to the
left, so ``c1 AND c2 AND ... AND cn`` puts n of them around c1 (n - 1 ANDs and its
comparison). Real queries stay far below both: the query message carries 16 expressions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import NoReturn, TypeVar

from motebase.gateway.tinysql import ast
from motebase.gateway.tinysql.errors import TinySQLError
from motebase.gateway.tinysql.lexer import Kind, Token, tokenize

T = TypeVar("T")

#: Words that start a clause; they can never be attribute names.
RESERVED = frozenset(
    [
        "SELECT",
        "FROM",
        "WHERE",
        "BY",
        "HAVING",
        "EPOCH",
        "SAMPLE",
        "ONCE",
        "LIFETIME",
        "OUTPUT",
        "AND",
        "OR",
        "NOT",
        "FOR",
        "INTO",
        "ON",
        "TRIGGER",
        "CREATE",
        "DROP",
        "STOP",
        "AS",
    ]
)

#: Time units and their length in milliseconds.
TIME_UNITS: dict[str, float] = {
    **dict.fromkeys(("MS", "MSEC", "MSECS", "MILLISECOND", "MILLISECONDS"), 1.0),
    **dict.fromkeys(("S", "SEC", "SECS", "SECOND", "SECONDS"), 1000.0),
    **dict.fromkeys(("MIN", "MINS", "MINUTE", "MINUTES"), 60_000.0),
    **dict.fromkeys(("H", "HR", "HRS", "HOUR", "HOURS"), 3_600_000.0),
    **dict.fromkeys(("D", "DAY", "DAYS"), 86_400_000.0),
    **dict.fromkeys(("WEEK", "WEEKS"), 7 * 86_400_000.0),
    **dict.fromkeys(("MONTH", "MONTHS"), 30 * 86_400_000.0),
    **dict.fromkeys(("YEAR", "YEARS"), 365 * 86_400_000.0),
}
#: Units a FOR clause may also count in.
EPOCH_UNITS = frozenset(("EPOCH", "EPOCHS", "ROUND", "ROUNDS"))

#: Deepest nesting and deepest condition or expression tree a query may have.
MAX_DEPTH = 32

_COMPARISONS = {"=": "=", "<>": "<>", "!=": "<>", ">": ">", ">=": ">=", "<": "<", "<=": "<="}
_NOT_SUPPORTED = "not supported yet"


def parse_statement(sql: str) -> ast.Statement:
    """Parse one TinySQL statement: a SELECT query or ``STOP QUERY n``."""
    return _Parser(sql).statement()


class _Parser:
    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.tokens = tokenize(sql)
        self.i = 0
        self.depth = 0  # open parentheses, NOTs, minus signs and calls around the cursor

    # --- statements ---------------------------------------------------------------------

    def statement(self) -> ast.Statement:
        word = self._peek().upper if self._peek().kind is Kind.WORD else ""
        if word == "STOP":
            return self._stop()
        if word == "SELECT":
            return self._select()
        if word == "ON":
            self._unsupported("event-triggered queries (ON EVENT)")
        if word == "CREATE":
            self._unsupported("CREATE BUFFER / CREATE STORAGE POINT")
        if word == "DROP":
            self._unsupported("DROP ALL (storage tables)")
        self._fail("SELECT or STOP QUERY")

    def _stop(self) -> ast.StopQuery:
        start = self._advance()
        self._expect_word("QUERY")
        token = self._expect_kind(Kind.NUMBER, "a query id")
        qid = _integer(token)
        if not 0 <= qid <= 254:
            raise TinySQLError(
                f"query id {qid} is outside 0..254",
                token.line,
                token.column,
                "a query id between 0 and 254",
            )
        self._end()
        return ast.StopQuery(qid, _pos(start))

    def _select(self) -> ast.SelectQuery:
        self._advance()
        no_interleave = self._accept_words("NO", "INTERLEAVE")
        items = self._comma_list(self._select_item)
        if self._at_word("INTO"):
            self._unsupported("SELECT ... INTO (storage points)")
        if self._accept_word("FROM"):
            self._comma_list(self._source)
        where = self._condition() if self._accept_word("WHERE") else None
        group_by = None
        if self._at_words("GROUP", "BY"):
            self.i += 2
            group_by = self._expr()
        having = self._condition() if self._accept_word("HAVING") else None
        clauses = _Trailing()
        while self._trailing_clause(clauses):
            pass
        self._end()
        for tree in (*(item.expr for item in items), where, group_by, having):
            if tree is not None:
                _check_depth(tree)
        return ast.SelectQuery(
            items=tuple(items),
            where=where,
            group_by=group_by,
            having=having,
            timing=clauses.timing,
            for_clause=clauses.for_clause,
            output_action=clauses.output_action,
            no_interleave=no_interleave,
            source=self.sql,
        )

    def _select_item(self) -> ast.SelectItem:
        first = self._peek()
        expr = self._expr()
        text = self._text_since(first)
        alias = None
        if self._accept_word("AS"):
            alias = self._expect_kind(Kind.WORD, "a column alias").text
        return ast.SelectItem(expr, text, alias, _pos(first))

    def _source(self) -> None:
        token = self._expect_kind(Kind.WORD, "a source name (sensors)")
        if token.upper != "SENSORS":
            raise TinySQLError(
                f"FROM {token.text}: reading storage points, buffers or other queries is "
                f"{_NOT_SUPPORTED}; only FROM sensors is",
                token.line,
                token.column,
                "sensors",
            )

    # --- trailing clauses (any order, each once) -------------------------------------------

    def _trailing_clause(self, clauses: _Trailing) -> bool:
        token = self._peek()
        if self._at_words("EPOCH", "DURATION"):
            self.i += 2
            clauses.set_timing(ast.EpochDuration(self._time("an epoch duration"), _pos(token)))
            self._optional_for(clauses)
        elif self._at_words("SAMPLE", "PERIOD"):
            self.i += 2
            clauses.set_timing(ast.SamplePeriod(self._time("a sample period"), _pos(token)))
            self._optional_for(clauses)
            for word in ("INTERPOLATE", "COMBINE"):
                if self._at_word(word):
                    self._unsupported(f"SAMPLE PERIOD ... {word}")
        elif self._accept_word("ONCE"):
            clauses.set_timing(ast.Once(_pos(token)))
        elif self._accept_word("LIFETIME"):
            duration = self._time("a lifetime such as 30 days")
            rate = None
            if self._accept_words("MIN", "SAMPLE", "RATE"):
                rate = self._time("a minimum sample rate")
            clauses.set_timing(ast.Lifetime(duration, rate, _pos(token)))
        elif self._at_word("FOR"):
            self._optional_for(clauses)
        elif self._accept_words("OUTPUT", "ACTION"):
            clauses.set_output(self._output_action(token))
        elif self._at_word("TRIGGER"):
            self._unsupported("TRIGGER ACTION")
        else:
            return False
        return True

    def _optional_for(self, clauses: _Trailing) -> None:
        token = self._peek()
        if self._accept_word("FOR"):
            clauses.set_for(
                ast.ForClause(
                    self._time("a number of epochs or a duration", extra_units=EPOCH_UNITS),
                    _pos(token),
                )
            )

    def _output_action(self, start: Token) -> ast.OutputAction:
        if self._at_word("SIGNAL"):
            self._unsupported("OUTPUT ACTION SIGNAL (events)")
        if self._at_word("SELECT") or self._at_op("("):
            self._unsupported("OUTPUT ACTION (SELECT ...) (nested queries)")
        name = self._expect_kind(Kind.WORD, "a command name")
        argument = None
        if self._accept_op("("):
            if not self._at_op(")"):
                argument = self._signed_integer("a numeric command argument")
            self._expect_op(")")
        return ast.OutputAction(name.text, argument, _pos(start))

    def _time(self, what: str, extra_units: frozenset[str] = frozenset()) -> ast.TimeValue:
        token = self._expect_kind(Kind.NUMBER, what)
        unit = None
        following = self._peek()
        is_unit = following.kind is Kind.WORD and (
            following.upper in TIME_UNITS or following.upper in extra_units
        )
        # In 'LIFETIME 30 days MIN SAMPLE RATE r', MIN starts the next clause.
        starts_min_rate = following.upper == "MIN" and self._peek(1).upper == "SAMPLE"
        if is_unit and not starts_min_rate:
            unit = self._advance().upper
        return ast.TimeValue(_number(token), unit, _pos(token))

    # --- conditions ---------------------------------------------------------------------

    def _condition(self) -> ast.Condition:
        left = self._conjunction()
        while self._at_word("OR"):
            op = self._advance()
            left = ast.BoolOp("OR", left, self._conjunction(), _pos(op))
        return left

    def _conjunction(self) -> ast.Condition:
        left = self._negation()
        while self._at_word("AND"):
            op = self._advance()
            left = ast.BoolOp("AND", left, self._negation(), _pos(op))
        return left

    def _negation(self) -> ast.Condition:
        if self._at_word("NOT"):
            token = self._advance()
            with self._level(token):
                return ast.Not(self._negation(), _pos(token))
        if not self._at_op("("):
            return self._comparison()
        # '(' opens either a parenthesised condition or an arithmetic operand such as
        # '(light / 10) > 50'; try the comparison first and keep the error that got furthest.
        return self._first_of(self._comparison, self._parenthesised_condition)

    def _parenthesised_condition(self) -> ast.Condition:
        with self._level(self._expect_op("(")):
            condition = self._condition()
        self._expect_op(")")
        return condition

    def _comparison(self) -> ast.Comparison:
        left = self._expr()
        token = self._peek()
        if token.kind is not Kind.OP or token.text not in _COMPARISONS:
            self._fail("a comparison operator (=, <>, >, >=, <, <=)")
        self._advance()
        return ast.Comparison(_COMPARISONS[token.text], left, self._expr(), _pos(token))

    # --- expressions --------------------------------------------------------------------

    def _expr(self) -> ast.Expr:
        return self._binary(self._sum, (">>",))

    def _sum(self) -> ast.Expr:
        return self._binary(self._term, ("+", "-"))

    def _term(self) -> ast.Expr:
        return self._binary(self._unary, ("*", "/", "%"))

    def _binary(self, operand: Callable[[], ast.Expr], ops: tuple[str, ...]) -> ast.Expr:
        left = operand()
        while self._peek().kind is Kind.OP and self._peek().text in ops:
            op = self._advance()
            left = ast.BinaryOp(op.text, left, operand(), _pos(op))
        return left

    def _unary(self) -> ast.Expr:
        token = self._peek()
        if self._accept_op("-"):
            with self._level(token):
                operand = self._unary()
            if isinstance(operand, ast.Number):
                return ast.Number(-operand.value, _pos(token), operand.unit)
            return ast.Negate(operand, _pos(token))
        if self._accept_op("("):
            with self._level(token):
                inner = self._expr()
            self._expect_op(")")
            return inner
        if token.kind is Kind.NUMBER:
            return self._number_literal()
        if token.kind is Kind.STRING:
            raise TinySQLError(
                "string constants are " + _NOT_SUPPORTED, token.line, token.column, "a number"
            )
        if token.kind is Kind.WORD and token.upper not in RESERVED:
            return self._name_or_call()
        self._fail("an attribute, aggregate or number")

    def _number_literal(self) -> ast.Number:
        token = self._advance()
        unit = None
        following = self._peek()
        # Only a unit written right after the digits ('8s') belongs to the constant here;
        # in an expression a spaced word is the next clause.
        if following.kind is Kind.WORD and following.offset == token.offset + len(token.text):
            if following.upper not in TIME_UNITS:
                raise TinySQLError(
                    f"unknown time unit {following.text!r}",
                    following.line,
                    following.column,
                    "ms, s, min, h or days",
                )
            unit = self._advance().upper
        return ast.Number(_number(token), _pos(token), unit)

    def _name_or_call(self) -> ast.Expr:
        token = self._advance()
        if self._accept_op("("):
            args: list[ast.Expr] = []
            if not self._at_op(")"):
                with self._level(token):
                    args = self._comma_list(self._call_argument)
            self._expect_op(")")
            return ast.AggCall(token.upper, tuple(args), _pos(token), self._text_since(token))
        if self._accept_op("."):
            # 'sensors.light': the only table is sensors, so the qualifier carries nothing.
            if token.upper != "SENSORS":
                raise TinySQLError(
                    f"unknown table {token.text!r}: only sensors is known",
                    token.line,
                    token.column,
                    "sensors.<attribute>",
                )
            token = self._expect_kind(Kind.WORD, "an attribute name")
        return ast.Name(token.text.lower(), _pos(token))

    def _call_argument(self) -> ast.Expr:
        token = self._peek()
        if self._accept_op("*"):
            return ast.Star(_pos(token))
        return self._expr()

    @contextlib.contextmanager
    def _level(self, opener: Token) -> Iterator[None]:
        """One more level of nesting, opened by ``opener``; past MAX_DEPTH, an error there."""
        if self.depth >= MAX_DEPTH:
            raise TinySQLError(
                f"nested too deeply: a query nests at most {MAX_DEPTH} levels of "
                "parentheses, NOT, unary minus and aggregate calls",
                opener.line,
                opener.column,
            )
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    # --- token helpers ------------------------------------------------------------------

    def _peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def _advance(self) -> Token:
        token = self._peek()
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return token

    def _at_word(self, word: str) -> bool:
        token = self._peek()
        return token.kind is Kind.WORD and token.upper == word

    def _at_words(self, *words: str) -> bool:
        return all(
            self._peek(k).kind is Kind.WORD and self._peek(k).upper == w
            for k, w in enumerate(words)
        )

    def _accept_word(self, word: str) -> bool:
        if self._at_word(word):
            self.i += 1
            return True
        return False

    def _accept_words(self, *words: str) -> bool:
        """Accept a multi-word keyword; once its first word matched, the rest must follow."""
        if not self._accept_word(words[0]):
            return False
        for word in words[1:]:
            self._expect_word(word)
        return True

    def _expect_word(self, word: str) -> Token:
        if not self._at_word(word):
            self._fail(word)
        return self._advance()

    def _at_op(self, op: str) -> bool:
        token = self._peek()
        return token.kind is Kind.OP and token.text == op

    def _accept_op(self, op: str) -> bool:
        if self._at_op(op):
            self.i += 1
            return True
        return False

    def _expect_op(self, op: str) -> Token:
        if not self._at_op(op):
            self._fail(f"'{op}'")
        return self._advance()

    def _expect_kind(self, kind: Kind, what: str) -> Token:
        token = self._peek()
        if token.kind is not kind or (kind is Kind.WORD and token.upper in RESERVED):
            self._fail(what)
        return self._advance()

    def _signed_integer(self, what: str) -> int:
        negative = self._accept_op("-")
        value = _integer(self._expect_kind(Kind.NUMBER, what))
        return -value if negative else value

    def _comma_list(self, element: Callable[[], T]) -> list[T]:
        out = [element()]
        while self._accept_op(","):
            out.append(element())
        return out

    def _first_of(self, *alternatives: Callable[[], T]) -> T:
        mark, errors = self.i, []
        for alternative in alternatives:
            self.i = mark
            try:
                return alternative()
            except TinySQLError as exc:
                errors.append(exc)
        raise max(errors, key=lambda e: (e.line, e.column))

    def _text_since(self, first: Token) -> str:
        last = self.tokens[self.i - 1]
        end = last.offset + len(last.text) + (2 if last.kind is Kind.STRING else 0)
        return " ".join(self.sql[first.offset : end].split())

    def _end(self) -> None:
        self._accept_op(";")
        if self._peek().kind is not Kind.END:
            self._fail("end of query")

    def _fail(self, expected: str) -> NoReturn:
        token = self._peek()
        raise TinySQLError(
            f"expected {expected}, found {token.describe()}", token.line, token.column, expected
        )

    def _unsupported(self, what: str) -> NoReturn:
        token = self._peek()
        raise TinySQLError(f"{what} is {_NOT_SUPPORTED}", token.line, token.column)


class _Trailing:
    """The trailing clauses seen so far; each may appear once."""

    def __init__(self) -> None:
        self.timing: ast.Timing | None = None
        self.for_clause: ast.ForClause | None = None
        self.output_action: ast.OutputAction | None = None

    def set_timing(self, timing: ast.Timing) -> None:
        if self.timing is not None:
            raise TinySQLError(
                "a query has a single EPOCH DURATION, SAMPLE PERIOD, ONCE or LIFETIME clause",
                timing.pos.line,
                timing.pos.column,
            )
        self.timing = timing

    def set_for(self, clause: ast.ForClause) -> None:
        if self.for_clause is not None:
            raise TinySQLError("duplicate FOR clause", clause.pos.line, clause.pos.column)
        self.for_clause = clause

    def set_output(self, action: ast.OutputAction) -> None:
        if self.output_action is not None:
            raise TinySQLError("duplicate OUTPUT ACTION", action.pos.line, action.pos.column)
        self.output_action = action


def _check_depth(root: ast.Expr | ast.Condition) -> None:
    """Refuse more than MAX_DEPTH binary operators one inside another, at the first one.

    Chains (``a AND b AND ...``, ``a + b + ...``) are parsed in loops, so only this walk,
    which needs no stack of its own, sees how deep they make the tree; the other levels
    (parentheses, NOT, minus, calls) were counted while parsing.
    """
    pending: list[tuple[ast.Expr | ast.Condition, int]] = [(root, 0)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, ast.BinaryOp | ast.Comparison | ast.BoolOp):
            depth += 1
            if depth > MAX_DEPTH:
                raise TinySQLError(_too_deep(node), node.pos.line, node.pos.column)
        pending += [(child, depth) for child in reversed(_children(node))]


def _children(node: ast.Expr | ast.Condition) -> tuple[ast.Expr | ast.Condition, ...]:
    if isinstance(node, ast.BinaryOp | ast.Comparison | ast.BoolOp):
        return (node.left, node.right)
    if isinstance(node, ast.Negate | ast.Not):
        return (node.operand,)
    if isinstance(node, ast.AggCall):
        return node.args
    return ()


def _too_deep(node: ast.BinaryOp | ast.Comparison | ast.BoolOp) -> str:
    limit = f"at most {MAX_DEPTH} operators one inside another"
    if isinstance(node, ast.BoolOp):
        return f"too many conditions joined with {node.op}: a condition nests {limit}"
    return f"too many operators chained: an expression nests {limit}"


def _pos(token: Token) -> ast.Pos:
    return ast.Pos(token.line, token.column)


def _number(token: Token) -> int | float:
    return float(token.text) if "." in token.text else int(token.text)


def _integer(token: Token) -> int:
    if "." in token.text:
        raise TinySQLError(
            f"expected a whole number, found {token.text}",
            token.line,
            token.column,
            "a whole number",
        )
    return int(token.text)
