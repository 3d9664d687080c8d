"""The one error TinySQL reports: where it went wrong and what was expected there."""

from __future__ import annotations


class TinySQLError(ValueError):
    """A query the gateway cannot accept.

    ``line`` and ``column`` are 1-based and point at the offending token; ``expected``
    says what would have been valid there (empty when the problem is not a syntax error,
    e.g. an unknown attribute or a query the wire format cannot carry).
    """

    def __init__(self, message: str, line: int, column: int, expected: str = "") -> None:
        self.message = message
        self.line = line
        self.column = column
        self.expected = expected
        super().__init__(f"line {line}, column {column}: {message}")
