"""Schema migrations, run programmatically: check the schema at open, upgrade on request."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import URL, Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from abridged.errors import SchemaVersionError
from abridged.store.connect import create_engine, resolve_url, safe_url, transaction, use_wal
from abridged.store.schema import Base

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# The newest revision in ``migrations/versions`` (a test checks it is alembic's head): opening a
# store whose schema is current reads one row and does not import alembic at all.
HEAD = "0009"
VERSION_TABLE = "alembic_version"
# Serialises concurrent upgrades of one PostgreSQL database (any constant works).
_PG_LOCK_KEY = 0x61627269


def _config() -> Config:
    from alembic.config import Config  # noqa: PLC0415 (lazy: see HEAD)

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory  # noqa: PLC0415 (lazy: see HEAD)

    return ScriptDirectory.from_config(_config())


def head_revision() -> str:
    """The newest schema revision this abridged knows (from the migration scripts)."""
    return _scripts().get_heads()[0]


def upgrade_command(url: URL) -> str:
    """The command a person runs to upgrade the database at ``url`` (password hidden)."""
    return (
        "python -c \"import asyncio, abridged.store as s; asyncio.run(s.upgrade('"
        + safe_url(url)
        + "'))\""
    )


def _current(conn: Connection) -> str | None:
    if not inspect(conn).has_table(VERSION_TABLE):
        return None
    rows = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    return str(rows[0]) if len(rows) == 1 else None


def _known(revision: str) -> bool:
    from alembic.util.exc import CommandError  # noqa: PLC0415 (lazy: see HEAD)

    try:
        return _scripts().get_revision(revision) is not None
    except CommandError:
        return False


def _serialise(conn: Connection) -> None:
    """One schema check or upgrade at a time on PostgreSQL; it waits as long as another takes
    (a migration of a big table can outlast the store's ``lock_timeout``, which bounds the
    waits of ordinary writes, not this one)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SET LOCAL lock_timeout = 0"))
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})


def _upgrade_sync(conn: Connection) -> None:
    from alembic import command  # noqa: PLC0415 (lazy: see HEAD)

    _serialise(conn)
    config = _config()
    config.attributes["connection"] = conn
    command.upgrade(config, "head")


def _check_sync(conn: Connection, url: URL, *, create: bool, upgrade: bool) -> str:
    """Check (and if allowed, create or upgrade) the schema; returns what was done."""
    _serialise(conn)
    current = _current(conn)
    if current == HEAD:
        return "current"
    head = head_revision()
    if current is None:
        ours = set(Base.metadata.tables) & set(inspect(conn).get_table_names())
        if ours:
            raise SchemaVersionError(
                "the database has abridged tables but no schema revision: it was not made by "
                "abridged's migrations; move it aside or point ABRIDGED_DB elsewhere",
                url=safe_url(url),
                tables=sorted(ours),
            )
        if not create:
            raise SchemaVersionError(
                "the database has no abridged schema; create it with: " + upgrade_command(url),
                url=safe_url(url),
                expected=head,
            )
        _upgrade_sync(conn)
        return "created"
    if not _known(current):
        raise SchemaVersionError(
            f"the database schema is at revision {current!r}, which this abridged does not know "
            f"(it knows up to {head!r}): it was written by a newer abridged; upgrade abridged",
            url=safe_url(url),
            found=current,
            expected=head,
        )
    if not upgrade:
        raise SchemaVersionError(
            f"the database schema is at revision {current!r} but this abridged needs {head!r}; "
            "upgrade it with: " + upgrade_command(url),
            url=safe_url(url),
            found=current,
            expected=head,
        )
    _upgrade_sync(conn)
    return "upgraded"


async def ensure_schema(
    engine: AsyncEngine, url: URL, *, create: bool = True, upgrade: bool = False
) -> str:
    """Refuse a schema this abridged does not know; create it in an empty database.

    Returns ``"current"``, ``"created"`` or ``"upgraded"``. Raises ``SchemaVersionError`` with the
    upgrade command when the schema is older (unless ``upgrade``), newer or foreign.

    A current schema is checked in a read transaction, so that opening a store never waits
    for another process's writer; a SQLite file is put in WAL mode first (once: the mode is
    kept in the file).
    """
    await use_wal(engine)
    async with transaction(engine, "read", operation="open") as conn:
        current = await conn.run_sync(_current)
    if current == HEAD:
        return "current"
    async with transaction(engine, "write", operation="open") as conn:
        return await conn.run_sync(lambda c: _check_sync(c, url, create=create, upgrade=upgrade))


async def upgrade(url: str | None = None) -> str:
    """Bring the database at ``url`` (or the default) to the newest schema; for the CLI.

    Returns what was done: ``"current"``, ``"created"`` or ``"upgraded"``.
    """
    resolved = resolve_url(url)
    engine = create_engine(resolved)
    try:
        return await ensure_schema(engine, resolved, create=True, upgrade=True)
    finally:
        await engine.dispose()
