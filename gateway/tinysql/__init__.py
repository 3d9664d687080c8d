"""TinySQL: the query language of TinyDB, in both the tools' and the paper's dialect."""

from motebase.gateway.tinysql.ast import SelectQuery, Statement, StopQuery
from motebase.gateway.tinysql.errors import TinySQLError
from motebase.gateway.tinysql.parser import parse_statement

__all__ = ["SelectQuery", "Statement", "StopQuery", "TinySQLError", "parse_statement"]
