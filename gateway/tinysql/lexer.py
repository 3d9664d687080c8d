"""TinySQL tokens.

Keywords are not separate token kinds: TinySQL has attributes such as ``group`` that share
a spelling with keywords, so the parser recognises keywords by position (soft keywords).
A number immediately followed by letters (``500ms``, ``8s``) lexes as NUMBER then WORD;
the parser reads that as a duration. Numbers are ASCII digits only (``str.isdigit`` also
takes superscripts, which ``int`` refuses, and other scripts' digits) and at most
``MAX_NUMBER_LENGTH`` characters long.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from motebase.gateway.tinysql.errors import TinySQLError


class Kind(Enum):
    WORD = "word"
    NUMBER = "number"
    STRING = "string"
    OP = "operator"
    END = "end of query"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str
    line: int
    column: int
    offset: int

    @property
    def upper(self) -> str:
        return self.text.upper()

    def describe(self) -> str:
        if self.kind is Kind.END:
            return "end of query"
        return f"{self.kind.value} {self.text!r}"


#: Longest number literal, in characters. No quantity the wire carries needs more than a
#: dozen digits; the cap keeps every literal inside float range (a 400-digit LIFETIME would
#: overflow to inf) and below CPython's 4,300-digit limit on int(str).
MAX_NUMBER_LENGTH = 40

# Longest first, so '>=' wins over '>'.
_OPERATORS = (
    ">>",
    ">=",
    "<=",
    "<>",
    "!=",
    "=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "%",
    "(",
    ")",
    ",",
    ".",
    ";",
    ":",
)


def tokenize(source: str) -> list[Token]:
    """Split ``source`` into tokens, ending with one END token."""
    return list(_Scanner(source).tokens())


class _Scanner:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        self.line = 1
        self.line_start = 0

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        while True:
            self._skip_blank()
            if self.pos >= len(self.source):
                out.append(self._token(Kind.END, self.pos, self.pos))
                return out
            out.append(self._next())

    def _next(self) -> Token:
        start, ch = self.pos, self.source[self.pos]
        if ch.isalpha() or ch == "_":
            return self._token(Kind.WORD, start, self._scan_while(_is_word_char))
        if _is_digit(ch):
            return self._number(start)
        if ch in "'\"":
            return self._string(start, ch)
        for op in _OPERATORS:
            if self.source.startswith(op, start):
                return self._token(Kind.OP, start, start + len(op))
        raise TinySQLError(
            f"unexpected character {ch!r}",
            self.line,
            self._column(start),
            "a keyword, name, number or operator",
        )

    def _number(self, start: int) -> Token:
        end = self._scan_while(_is_digit)
        if (
            end + 1 < len(self.source)
            and self.source[end] == "."
            and _is_digit(self.source[end + 1])
        ):
            self.pos = end + 1
            end = self._scan_while(_is_digit)
        if end - start > MAX_NUMBER_LENGTH:
            raise TinySQLError(
                f"number {self.source[start : start + 12]}... is {end - start} characters "
                f"long; at most {MAX_NUMBER_LENGTH} are allowed",
                self.line,
                self._column(start),
                f"a number of at most {MAX_NUMBER_LENGTH} characters",
            )
        return self._token(Kind.NUMBER, start, end)

    def _string(self, start: int, quote: str) -> Token:
        end = self.source.find(quote, start + 1)
        if end < 0 or "\n" in self.source[start:end]:
            raise TinySQLError(
                "unterminated string constant", self.line, self._column(start), f"a closing {quote}"
            )
        token = Token(
            Kind.STRING, self.source[start + 1 : end], self.line, self._column(start), start
        )
        self.pos = end + 1
        return token

    def _scan_while(self, predicate: Callable[[str], bool]) -> int:
        end = self.pos
        while end < len(self.source) and predicate(self.source[end]):
            end += 1
        return end

    def _skip_blank(self) -> None:
        while self.pos < len(self.source):
            ch = self.source[self.pos]
            if ch == "\n":
                self.line += 1
                self.line_start = self.pos + 1
            elif ch == "-" and self.source.startswith("--", self.pos):
                newline = self.source.find("\n", self.pos)
                self.pos = len(self.source) if newline < 0 else newline
                continue
            elif not ch.isspace():
                return
            self.pos += 1

    def _token(self, kind: Kind, start: int, end: int) -> Token:
        self.pos = end
        return Token(kind, self.source[start:end], self.line, self._column(start), start)

    def _column(self, offset: int) -> int:
        return offset - self.line_start + 1


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"
