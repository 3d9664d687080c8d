"""TinySQL: the query language of TinyDB, in both the tools' and the paper's dialect."""

from gateway.tinysql.ast import SelectQuery, Statement, StopQuery
from gateway.tinysql.errors import TinySQLError
from gateway.tinysql.parser import parse_statement

__all__ = ["SelectQuery", "Statement", "StopQuery", "TinySQLError", "parse_statement"]
