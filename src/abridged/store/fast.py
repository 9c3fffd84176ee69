"""Prebuilt statements on SQLite's own cursor: compiled once, bound and read without
SQLAlchemy's execution machinery, which costs about 40 us a statement where SQLite takes 5 us
to run it (a turn's lease and messages are a handful of statements around every model call).
On other databases, ``Connection.execute`` as usual: the result has the same shape."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql.expression import Executable

__all__ = ["Outcome", "execute", "execute_plain"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a statement returned: its rows (as dicts, by column label) and the row count."""

    rows: list[dict[str, Any]]
    rowcount: int

    def first(self) -> dict[str, Any] | None:
        """The first row, if any."""
        return self.rows[0] if self.rows else None


@dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]
    defaults: tuple[Any, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]


# Keyed by the statement object: the statements run here are module-level constants, built
# once and alive as long as the process.
_COMPILED: dict[tuple[int, str], tuple[Executable, _Compiled]] = {}


def _compile(statement: Executable, dialect: Dialect) -> _Compiled:
    key = (id(statement), dialect.name)
    found = _COMPILED.get(key)
    if found is not None and found[0] is statement:
        return found[1]
    compiled = statement.compile(dialect=dialect)  # type: ignore[attr-defined]
    names = tuple(compiled.positiontup or ())
    binds = [compiled.binds[name] for name in names]
    result = _Compiled(
        compiled.string,
        names,
        tuple(b.value for b in binds),
        tuple(b.type.bind_processor(dialect) for b in binds),
    )
    _COMPILED[key] = (statement, result)
    return result


def execute(conn: Connection, statement: Executable, params: Mapping[str, Any]) -> Outcome:
    """Run a prebuilt ``statement`` (bound parameters by name; unnamed ones keep the values it
    was built with) in ``conn``'s transaction. SQLite's errors come out as SQLAlchemy's
    ``DBAPIError`` subclasses, as from ``Connection.execute``."""
    if conn.dialect.name != "sqlite":
        result = conn.execute(statement, dict(params))
        rows = [dict(row) for row in result.mappings()] if result.returns_rows else []
        return Outcome(rows, result.rowcount)
    compiled = _compile(statement, conn.dialect)
    values = []
    for name, default, process in zip(
        compiled.names, compiled.defaults, compiled.processors, strict=True
    ):
        value = params.get(name, default)
        values.append(process(value) if process is not None else value)
    driver = conn.connection.driver_connection
    assert driver is not None
    return _run(conn, driver, compiled.sql, values)


def execute_plain(conn: Connection, sql: str) -> None:
    """A statement with no parameters or result (``BEGIN``, a ``PRAGMA``) in ``conn``, sent
    directly on sqlite3's own connection (through SQLAlchemy it costs more than SQLite takes
    to run it), with the listeners called and the errors SQLAlchemy's, as ``execute``; on
    any other driver, ``exec_driver_sql``."""
    driver = conn.connection.driver_connection
    if not isinstance(driver, sqlite3.Connection):
        conn.exec_driver_sql(sql)
        return
    _run(conn, driver, sql, [])


def _run(conn: Connection, driver: Any, sql: str, values: list[Any]) -> Outcome:
    cursor = driver.cursor()
    try:
        if conn.dispatch.before_cursor_execute:  # listeners (fault injection in the tests)
            conn.dispatch.before_cursor_execute(conn, cursor, sql, values, None, False)
        cursor.execute(sql, values)
        if cursor.description is None:
            return Outcome([], cursor.rowcount)
        keys = [column[0] for column in cursor.description]
        rows = [dict(zip(keys, row, strict=True)) for row in cursor.fetchall()]
        return Outcome(rows, cursor.rowcount)
    except sqlite3.Error as exc:
        raise sa_exc.DBAPIError.instance(sql, values, exc, sqlite3.Error) from exc
    finally:
        cursor.close()
