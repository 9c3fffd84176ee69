"""Where the database is and how to connect: URL resolution, engines, SQLite pragmas."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import platformdirs
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from abridged.errors import StoreError

ENV_VAR = "ABRIDGED_DB"
DB_FILENAME = "abridged.db"
# Seconds a SQLite writer waits for another process's write lock before giving up.
SQLITE_BUSY_TIMEOUT_S = 30.0

Mode = Literal["read", "write"]


def default_path() -> Path:
    """The default SQLite file: in the user's data directory (``platformdirs``)."""
    return Path(platformdirs.user_data_dir("abridged", appauthor=False)) / DB_FILENAME


def resolve_url(url: str | os.PathLike[str] | None = None) -> URL:
    """The async SQLAlchemy URL to use.

    ``url`` (or ``ABRIDGED_DB`` when ``url`` is None) may be a file path, a ``sqlite://`` URL or a
    ``postgresql://`` URL; drivers are normalised to ``aiosqlite`` and ``asyncpg``. With neither,
    the SQLite file in the user's data directory is used (its directory is created).
    """
    raw = os.fspath(url) if url is not None else os.environ.get(ENV_VAR)
    if not raw:
        path = default_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        return make_url(f"sqlite+aiosqlite:///{path}")
    if "://" not in raw:
        path = Path(raw).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        return make_url(f"sqlite+aiosqlite:///{path}")
    try:
        parsed = make_url(raw)
    except ArgumentError as exc:
        raise StoreError("not a database URL or path", url=_safe(raw)) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise StoreError(
                "the store needs a SQLite file (an in-memory database is lost between connections)",
                url=parsed.render_as_string(hide_password=True),
            )
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend in {"postgresql", "postgres"}:
        return parsed.set(drivername="postgresql+asyncpg")
    raise StoreError(
        "unsupported database: use a SQLite path or a postgresql:// URL",
        url=parsed.render_as_string(hide_password=True),
    )


def _safe(raw: str) -> str:
    try:
        return make_url(raw).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable>"


_SECRET_QUERY = re.compile(r"pass|pwd|secret|token|key", re.IGNORECASE)


def safe_url(url: URL) -> str:
    """The URL with its password hidden (for messages and logs), also when it is given as a
    query parameter (``?password=...``, ``sslpassword``, ``token``, ``sslkey`` ...)."""
    hidden = {
        name: ("***" if isinstance(value, str) else tuple("***" for _ in value))
        if _SECRET_QUERY.search(name)
        else value
        for name, value in url.query.items()
    }
    return url.set(query=hidden).render_as_string(hide_password=True).replace("%2A%2A%2A", "***")


def create_engine(url: URL, **kwargs: Any) -> AsyncEngine:
    """An async engine; for SQLite: WAL, foreign keys on, ``synchronous=NORMAL``, busy timeout,
    and writers that take the write lock at BEGIN (``BEGIN IMMEDIATE``), so that two processes
    never deadlock upgrading a read lock."""
    if url.get_backend_name() != "sqlite":
        return create_async_engine(url, pool_pre_ping=True, **kwargs)
    engine = create_async_engine(
        url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S}, pool_reset_on_return=None, **kwargs
    )
    _sqlite_hooks(engine.sync_engine)
    return engine


def create_sqlite_sync_engine(url: URL) -> Engine:
    """A synchronous engine on the same SQLite file, with the same settings (for the append path,
    which runs whole transactions in one worker thread)."""
    engine = sa_create_engine(
        url.set(drivername="sqlite+pysqlite"),
        connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False},
        pool_reset_on_return=None,
    )
    _sqlite_hooks(engine)
    return engine


def _sqlite_hooks(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN itself.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_BUSY_TIMEOUT_S * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("abridged_mode", "write")
        conn.exec_driver_sql("BEGIN" if mode == "read" else "BEGIN IMMEDIATE")


@asynccontextmanager
async def transaction(engine: AsyncEngine, mode: Mode = "write") -> AsyncIterator[AsyncConnection]:
    """One transaction. ``read`` sees one consistent snapshot (REPEATABLE READ on PostgreSQL, a
    deferred BEGIN on SQLite); ``write`` takes SQLite's write lock at once and runs in READ
    COMMITTED on PostgreSQL, where the single writer serialises on the conversation's row."""
    async with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            await conn.execution_options(abridged_mode=mode)
        elif mode == "read":
            await conn.execution_options(isolation_level="REPEATABLE READ")
        async with conn.begin():
            yield conn
