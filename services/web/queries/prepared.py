"""Hot read queries: built with SQLAlchemy Core once, compiled once, run on the driver.

Building a Core statement per request and executing it through SQLAlchemy costs about
0.3-0.6 ms of Python per statement (constructing the expression, its cache key, parameter
processing, result wrapping): more than SQLite takes to answer most of these queries. So a
page's statements are built once per *shape* (which optional filters are set, which order)
with named parameters (``param``), compiled once (``Prepared``), and a request only binds
values and reads the sqlite3 cursor's tuples. sqlite3 keeps the prepared statement in the
connection's own cache, keyed by the SQL text, so SQLite does not parse it again either.

The rows are what SQLAlchemy would have returned here: the schema's types (INTEGER, TEXT,
REAL) have no result processing on SQLite.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from sqlalchemy import BindParameter, Connection, Executable, Integer, bindparam
from sqlalchemy.dialects import sqlite
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

DIALECT = sqlite.dialect()


def param(name: str, *, integer: bool = False) -> BindParameter[Any]:
    """A named value the request gives when the statement runs (``Prepared.rows(name=...)``)."""
    return bindparam(name, type_=Integer() if integer else None, required=False)


class Prepared:
    """One compiled statement: its SQL text, and where each named value goes."""

    def __init__(self, stmt: Executable) -> None:
        assert isinstance(stmt, ClauseElement)
        # render_postcompile spells constant lists (``status IN (...)``) as plain parameters,
        # so the text never changes between runs.
        compiled = stmt.compile(dialect=DIALECT, compile_kwargs={"render_postcompile": True})
        assert isinstance(compiled, SQLCompiler)
        self.sql = compiled.string
        fixed = compiled.construct_params(_check=False)
        self._order: tuple[str, ...] = tuple(compiled.positiontup or ())
        self._fixed = {k: v for k, v in fixed.items() if v is not None}
        self.names = frozenset(n for n in self._order if n not in self._fixed)
        """The values a run must give."""

    def args(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The positional parameters for these values (KeyError if one is missing)."""
        fixed = self._fixed
        return tuple(fixed[n] if n in fixed else values[n] for n in self._order)

    def cursor(self, conn: Connection, values: Mapping[str, Any]) -> sqlite3.Cursor:
        """Run on the connection's sqlite3 connection."""
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        return driver.execute(self.sql, self.args(values))

    def rows(self, conn: Connection, **values: Any) -> list[dict[str, Any]]:
        """Every row, as a dict of the statement's column labels."""
        cur = self.cursor(conn, values)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def first(self, conn: Connection, **values: Any) -> dict[str, Any] | None:
        """The first row, or None."""
        cur = self.cursor(conn, values)
        row = cur.fetchone()
        names = [d[0] for d in cur.description]
        cur.close()
        return None if row is None else dict(zip(names, row, strict=True))

    def scalar(self, conn: Connection, **values: Any) -> Any:
        """The first column of the first row (None without a row)."""
        cur = self.cursor(conn, values)
        row = cur.fetchone()
        cur.close()
        return None if row is None else row[0]
