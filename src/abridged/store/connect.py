"""Where the database is and how to connect: URL resolution, engines, SQLite pragmas, and the
store's boundary with its environment (driver and system failures become typed errors)."""

from __future__ import annotations

import errno
import logging
import os
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Literal

import platformdirs
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from abridged.errors import (
    AbridgedError,
    SettingError,
    StoreEnvironmentError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreUnavailableError,
)
from abridged.store import fast

log = logging.getLogger("abridged.store")

ENV_VAR = "ABRIDGED_DB"
DB_FILENAME = "abridged.db"
# Seconds a SQLite transaction waits for a lock held by another connection or process. A
# reader in WAL mode never waits for a writer; it can only meet a lock while another process
# recovers or checkpoints the log, which takes milliseconds: it gives up after 2 s. A writer
# queues behind other processes' write transactions (each a few milliseconds; many queued
# workers add up): it waits up to 30 s, then raises ``StoreLockedError``.
SQLITE_READ_TIMEOUT_S = 2.0
SQLITE_WRITE_TIMEOUT_S = 30.0
SQLITE_BUSY_TIMEOUT_S = SQLITE_WRITE_TIMEOUT_S  # the name older callers know
# PostgreSQL's ``lock_timeout`` by default: a write waits for a row lock (another writer's
# transaction on the same conversation) as long as a SQLite writer waits for the file's lock,
# then raises ``StoreLockedError`` (the server's default, 0, waits forever).
PG_LOCK_TIMEOUT_S = SQLITE_WRITE_TIMEOUT_S
#: ``synchronous`` settings offered for SQLite (see ``StoreBase``: the durability promise).
SQLITE_SYNCHRONOUS = ("NORMAL", "FULL")

Mode = Literal["read", "write"]

# What the environment can raise at the store's boundary (driver errors, the system's).
DRIVER_ERRORS: tuple[type[BaseException], ...] = (
    sa_exc.DBAPIError,
    sa_exc.DisconnectionError,
    sa_exc.TimeoutError,
    OSError,
)
# What opening a connection can raise besides: a bad port is a ValueError or an OverflowError
# from the driver, which also parses the host.
_CONNECT_ERRORS: tuple[type[BaseException], ...] = (*DRIVER_ERRORS, ValueError, OverflowError)


def default_path() -> Path:
    """The default SQLite file: in the user's data directory (``platformdirs``)."""
    return Path(platformdirs.user_data_dir("abridged", appauthor=False)) / DB_FILENAME


def _sqlite_file(path: Path) -> URL:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise environment_error(exc, "open", None, path=str(path.parent)) from exc
    return make_url(f"sqlite+aiosqlite:///{path}")


def resolve_url(url: str | os.PathLike[str] | None = None) -> URL:
    """The async SQLAlchemy URL to use.

    ``url`` (or ``ABRIDGED_DB`` when ``url`` is None) may be a file path, a ``sqlite://`` URL or a
    ``postgresql://`` URL; drivers are normalised to ``aiosqlite`` and ``asyncpg``. With neither,
    the SQLite file in the user's data directory is used (its directory is created).
    """
    raw = os.fspath(url) if url is not None else os.environ.get(ENV_VAR)
    if not raw:
        return _sqlite_file(default_path())
    if "://" not in raw:
        return _sqlite_file(Path(raw).expanduser())
    try:
        parsed = make_url(raw)
    except (sa_exc.ArgumentError, ValueError) as exc:  # a port that is not a number: ValueError
        raise StoreError("not a database URL or path", url=_safe(raw)) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise StoreError(
                "the store needs a SQLite file (an in-memory database is lost between connections)",
                url=safe_url(parsed),
            )
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend in {"postgresql", "postgres"}:
        return parsed.set(drivername="postgresql+asyncpg")
    raise StoreError(
        "unsupported database: use a SQLite path or a postgresql:// URL", url=safe_url(parsed)
    )


_URL_PASSWORD = re.compile(r"(://[^:/@?#]*:)[^@/?#]*@")


def _safe(raw: str) -> str:
    try:
        return safe_url(make_url(raw))
    except (sa_exc.ArgumentError, ValueError):
        return _URL_PASSWORD.sub(r"\1***@", raw.split("?", 1)[0])


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


def _secrets(url: URL | None) -> list[str]:
    if url is None:
        return []
    found = [url.password] if url.password else []
    for name, value in url.query.items():
        if _SECRET_QUERY.search(name):
            found += [value] if isinstance(value, str) else list(value)
    return [str(s) for s in found if s]


def _scrub(text: str, url: URL | None) -> str:
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def check_lock_timeout(value: object) -> float | None:
    """``Store(lock_timeout=...)``: ``None`` (the default, 30 s) or seconds, 0.001 .. 86400."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.001 <= value <= 86400:
        raise SettingError("lock_timeout", value, "seconds, 0.001 .. 86400 (or None: 30 s)")
    return float(value)


def check_synchronous(value: object) -> str:
    """A SQLite ``synchronous`` setting, upper-cased; ``SettingError`` unless NORMAL or FULL."""
    name = value.upper() if isinstance(value, str) else value
    if name not in SQLITE_SYNCHRONOUS:
        raise SettingError("sqlite_synchronous", value, "'NORMAL' or 'FULL'")
    return str(name)


def sqlite_path(url: URL) -> Path | None:
    """The file of a SQLite URL (``None`` for another database, or a SQLite URI filename)."""
    if url.get_backend_name() != "sqlite" or not url.database or url.query.get("uri"):
        return None
    return Path(url.database)


def _read_only_filesystem(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _connect_url(url: URL) -> URL:
    """The URL engines connect with. A database file on a read-only filesystem (a snapshot, a
    read-only mount) is opened immutable: SQLite cannot create the WAL's ``-shm`` file there,
    so it would refuse even to read; nothing can change the file, so reads need no lock."""
    path = sqlite_path(url)
    if path is None or not path.exists() or not _read_only_filesystem(path):
        return url
    return url.set(
        database=path.resolve().as_uri(),
        query={**url.query, "mode": "ro", "immutable": "1", "uri": "true"},
    )


def create_engine(
    url: URL,
    *,
    sqlite_synchronous: str = "NORMAL",
    lock_timeout: float | None = None,
    **kwargs: Any,
) -> AsyncEngine:
    """An async engine; for SQLite: foreign keys on, ``synchronous`` (NORMAL by default), short
    busy timeouts for reads and longer ones for writes (``lock_timeout``, else 30 s), and
    writers that take the write lock at BEGIN (``BEGIN IMMEDIATE``), so that two processes
    never deadlock upgrading a read lock. WAL is set once, when the store opens (``use_wal``),
    not at every connection. For PostgreSQL: every connection's ``lock_timeout`` (else 30 s),
    so that a wait for a row lock ends in ``StoreLockedError``, and a ping only for a connection
    that rested in the pool (``ping_when_idle``)."""
    timeout = check_lock_timeout(lock_timeout)
    if url.get_backend_name() != "sqlite":
        if url.get_backend_name() == "postgresql":
            args = dict(kwargs.pop("connect_args", {}))
            server = dict(args.get("server_settings", {}))
            wait = timeout if timeout is not None else PG_LOCK_TIMEOUT_S
            server.setdefault("lock_timeout", str(max(1, round(wait * 1000))))
            args["server_settings"] = server
            kwargs["connect_args"] = args
            engine = create_async_engine(url, **kwargs)
            ping_when_idle(engine.sync_engine)
            return engine
        return create_async_engine(url, pool_pre_ping=True, **kwargs)
    engine = create_async_engine(
        _connect_url(url),
        connect_args={"timeout": SQLITE_READ_TIMEOUT_S},
        pool_reset_on_return=None,
        **kwargs,
    )
    _sqlite_hooks(engine.sync_engine, check_synchronous(sqlite_synchronous), timeout)
    return engine


#: A pooled connection back in the pool for less than this is taken out again without a ping:
#: a turn takes a connection out about ten times within a model call, and each ping is one
#: round trip more; a connection idle longer (a model call, a quiet conversation) is pinged,
#: so a server restart or an idle timeout is still met by a fresh connection. HikariCP's
#: ``aliveBypassWindowMs`` (500 ms) is the same rule.
PING_AFTER_IDLE_S = 0.5
#: Set in a connection record's ``info`` at a checkout that pinged (``bench/store_round_trips.py``
#: counts those as round trips).
PINGED = "abridged.pinged"
_IDLE_SINCE = "abridged.idle_since"


def ping_when_idle(engine: Engine) -> None:
    """Ping a pooled connection when it is taken out after ``PING_AFTER_IDLE_S`` or more in the
    pool (SQLAlchemy's ``pool_pre_ping`` pings at every checkout); a failed ping replaces the
    connection, as ``pool_pre_ping`` does."""
    pool, dialect = engine.pool, engine.dialect

    def rested(_dbapi_connection: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    def taken(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        idle = time.monotonic() - record.info.get(_IDLE_SINCE, 0.0)
        record.info[PINGED] = idle >= PING_AFTER_IDLE_S
        if not record.info[PINGED]:
            return
        try:
            dialect.do_ping(dbapi_connection)
        except Exception as exc:  # whatever failed, the next attempt is a fresh connection
            raise sa_exc.DisconnectionError(f"ping after {idle:.1f} s idle failed") from exc

    event.listen(pool, "connect", rested)
    event.listen(pool, "checkin", rested)
    event.listen(pool, "checkout", taken)


def create_sqlite_sync_engine(
    url: URL, *, sqlite_synchronous: str = "NORMAL", lock_timeout: float | None = None
) -> Engine:
    """A synchronous engine on the same SQLite file, with the same settings, for the store's
    runner (``abridged.store.threaded``: whole transactions, on the event loop's thread when
    the lock is free, else in its worker thread)."""
    engine = sa_create_engine(
        _connect_url(url).set(drivername="sqlite+pysqlite"),
        connect_args={"timeout": SQLITE_READ_TIMEOUT_S, "check_same_thread": False},
        pool_reset_on_return=None,
    )
    _sqlite_hooks(engine, check_synchronous(sqlite_synchronous), check_lock_timeout(lock_timeout))
    return engine


_BUSY_KEY = "abridged_busy_timeout_ms"


def _sqlite_hooks(engine: Engine, synchronous: str, write_timeout: float | None = None) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN itself.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.close()
        record.info[_BUSY_KEY] = int(SQLITE_READ_TIMEOUT_S * 1000)  # the connect timeout

    @event.listens_for(engine, "reset")
    def _on_reset(dbapi_connection: Any, _record: Any, state: Any) -> None:
        # The pool does not roll back on return (it would cost a thread hop per transaction),
        # so a transaction left open (its COMMIT failed: a full disk, an I/O error) is rolled
        # back here: otherwise the pooled connection would keep the write lock.
        driver = getattr(dbapi_connection, "driver_connection", dbapi_connection)
        if state.asyncio_safe and getattr(driver, "in_transaction", True):
            dbapi_connection.rollback()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        options = conn.get_execution_options()
        mode = options.get("abridged_mode", "write")
        writes = write_timeout if write_timeout is not None else SQLITE_WRITE_TIMEOUT_S
        seconds = SQLITE_READ_TIMEOUT_S if mode == "read" else writes
        # ``abridged_wait=False``: fail at once on a lock held elsewhere (``threaded``'s
        # attempt on the event loop's thread, which must never sleep in SQLite's busy handler)
        wait = int(seconds * 1000) if options.get("abridged_wait", True) else 0
        info = conn.connection.info
        if info.get(_BUSY_KEY) != wait:
            info.pop(_BUSY_KEY, None)
            fast.execute_plain(conn, f"PRAGMA busy_timeout={wait}")
            info[_BUSY_KEY] = wait
        fast.execute_plain(conn, "BEGIN" if mode == "read" else "BEGIN IMMEDIATE")


async def use_wal(engine: AsyncEngine) -> None:
    """Put a SQLite file in WAL mode (readers never wait for the writer). The mode is stored in
    the file, so this is done once, when the store opens; a file that cannot be switched (a
    read-only one, or locked right now) is left as it is: it can still be read."""
    if engine.dialect.name != "sqlite":
        return

    def switch(sync_conn: Connection) -> None:
        cursor = sync_conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute("PRAGMA journal_mode")
            row = cursor.fetchone()
            if row is None or str(row[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
        finally:
            cursor.close()

    driver_error = engine.dialect.loaded_dbapi.Error
    async with connection(engine, "open") as conn:
        try:
            await conn.run_sync(switch)
        except (sa_exc.DBAPIError, driver_error) as exc:
            log.info("the SQLite file stays in its journal mode: %s", exc)


@asynccontextmanager
async def connection(engine: AsyncEngine, operation: str) -> AsyncIterator[AsyncConnection]:
    """A connection of ``engine``; failing to connect raises a ``StoreEnvironmentError``
    naming ``operation`` (a driver error, a refused connection, an unknown host, a bad port)."""
    conn = engine.connect()
    try:
        await conn.start()
    except _CONNECT_ERRORS as exc:
        raise environment_error(exc, operation, engine.url) from exc
    try:
        yield conn
    finally:
        try:
            await conn.close()
        except DRIVER_ERRORS as exc:  # the work is done (or already failed): not the caller's
            log.info("closing a connection failed: %s", exc)


@asynccontextmanager
async def transaction(
    engine: AsyncEngine, mode: Mode = "write", *, operation: str | None = None
) -> AsyncIterator[AsyncConnection]:
    """One transaction. ``read`` sees one consistent snapshot (REPEATABLE READ on PostgreSQL, a
    deferred BEGIN on SQLite); ``write`` takes SQLite's write lock at once and runs in READ
    COMMITTED on PostgreSQL, where the single writer serialises on the conversation's row.

    This is the store's boundary: a failure of the driver or the system (connecting, any
    statement, the commit) rolls the transaction back and raises a ``StoreEnvironmentError``
    subclass naming ``operation`` and the cause; the store's own errors pass unchanged."""
    name = operation or f"{mode} transaction"
    async with connection(engine, name) as conn:
        with store_boundary(name, engine.url):
            if engine.dialect.name == "sqlite":
                await conn.execution_options(abridged_mode=mode)
            elif mode == "read":
                await conn.execution_options(isolation_level="REPEATABLE READ")
            async with conn.begin():
                yield conn


@contextmanager
def store_boundary(operation: str, url: URL) -> Iterator[None]:
    """The store's error boundary around a transaction: a driver's or the system's failure in
    the block is raised as the ``StoreEnvironmentError`` subclass naming ``operation``; the
    store's own errors pass unchanged."""
    try:
        yield
    except AbridgedError:
        raise
    except DRIVER_ERRORS as exc:
        raise environment_error(exc, operation, url) from exc


# -- classifying what the environment raised

# SQLite's primary result codes (the low byte of an extended code).
_SQLITE_KINDS: dict[int, type[StoreEnvironmentError]] = {
    3: StoreReadOnlyError,  # SQLITE_PERM
    5: StoreLockedError,  # SQLITE_BUSY
    6: StoreLockedError,  # SQLITE_LOCKED
    8: StoreReadOnlyError,  # SQLITE_READONLY
    13: StoreFullError,  # SQLITE_FULL
    14: StoreUnavailableError,  # SQLITE_CANTOPEN
}
# PostgreSQL SQLSTATEs (exact codes first, then their two-character class).
_PG_KINDS: dict[str, type[StoreEnvironmentError]] = {
    "53100": StoreFullError,  # disk_full
    "53300": StoreUnavailableError,  # too_many_connections
    "25006": StoreReadOnlyError,  # read_only_sql_transaction
    "55P03": StoreLockedError,  # lock_not_available
    "40P01": StoreLockedError,  # deadlock_detected
    "57P01": StoreUnavailableError,  # admin_shutdown
    "57P02": StoreUnavailableError,  # crash_shutdown
    "57P03": StoreUnavailableError,  # cannot_connect_now
    "3D000": StoreUnavailableError,  # invalid_catalog_name: no such database
    "08": StoreUnavailableError,  # connection_exception
    "28": StoreUnavailableError,  # invalid_authorization_specification
}
# What drivers say, when they give no code (checked in order, lower case).
_TEXT_KINDS: tuple[tuple[str, type[StoreEnvironmentError]], ...] = (
    ("database or disk is full", StoreFullError),
    ("no space left on device", StoreFullError),
    ("disk full", StoreFullError),
    ("readonly database", StoreReadOnlyError),
    ("read-only", StoreReadOnlyError),
    ("database is locked", StoreLockedError),
    ("database table is locked", StoreLockedError),
    ("unable to open database file", StoreUnavailableError),
    ("connection refused", StoreUnavailableError),
    ("connection is closed", StoreUnavailableError),
    ("connection was closed", StoreUnavailableError),
    ("terminating connection", StoreUnavailableError),
)
_OS_KINDS: dict[int, type[StoreEnvironmentError]] = {
    errno.ENOSPC: StoreFullError,
    errno.EDQUOT: StoreFullError,
    errno.EROFS: StoreReadOnlyError,
    errno.EACCES: StoreReadOnlyError,
    errno.EPERM: StoreReadOnlyError,
    errno.ENOENT: StoreUnavailableError,
    errno.ENOTDIR: StoreUnavailableError,
}
_HEADLINES: dict[type[StoreEnvironmentError], str] = {
    StoreUnavailableError: "the database cannot be reached",
    StoreReadOnlyError: "the database cannot be written (read-only)",
    StoreFullError: "the database's disk is full",
    StoreLockedError: "another writer held the database's lock too long",
    StoreEnvironmentError: "the database failed",
}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, the driver's error it wraps and their causes, each once."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        item = todo.pop(0)
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo += [getattr(item, "orig", None), item.__cause__]


def _kind(exc: BaseException, path: Path | None) -> type[StoreEnvironmentError]:
    chain = list(_chain(exc))
    for item in chain:
        code = getattr(item, "sqlite_errorcode", None)
        if isinstance(code, int) and (code & 0xFF) in _SQLITE_KINDS:
            kind = _SQLITE_KINDS[code & 0xFF]
            return _cannot_open(path) if kind is StoreUnavailableError else kind
        state = getattr(item, "sqlstate", None)
        if isinstance(state, str) and (state in _PG_KINDS or state[:2] in _PG_KINDS):
            return _PG_KINDS.get(state) or _PG_KINDS[state[:2]]
    for item in chain:
        if isinstance(item, OSError) and item.errno in _OS_KINDS:
            return _OS_KINDS[item.errno]
        text = str(item).lower()
        for needle, kind in _TEXT_KINDS:
            if needle in text:
                return _cannot_open(path) if kind is StoreUnavailableError else kind
    for item in chain:
        connection_lost = isinstance(item, sa_exc.DBAPIError) and item.connection_invalidated
        if connection_lost or isinstance(
            item,
            ConnectionError
            | TimeoutError
            | socket.gaierror
            | sa_exc.InterfaceError
            | sa_exc.DisconnectionError
            | sa_exc.TimeoutError
            | ValueError
            | OverflowError,
        ):
            return StoreUnavailableError
    return StoreEnvironmentError


def _cannot_open(path: Path | None) -> type[StoreEnvironmentError]:
    """A SQLite file that cannot be opened: read-only when its directory cannot be written
    (WAL needs its ``-wal`` and ``-shm`` files beside it), else unavailable."""
    if path is not None and path.parent.exists() and not os.access(path.parent, os.W_OK):
        return StoreReadOnlyError
    return StoreUnavailableError


def _cause(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    if isinstance(exc, sa_exc.DBAPIError) and orig is not None:
        exc = orig  # the driver's words, without the statement and its parameters
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def environment_error(
    exc: BaseException, operation: str, url: URL | None, **context: Any
) -> StoreError:
    """The typed error for what the environment raised during ``operation``: a
    ``StoreEnvironmentError`` subclass, or a plain ``StoreError`` when the database refused the
    statement itself (a constraint, a value it cannot store). Never holds a password."""
    cause = _scrub(_cause(exc), url)
    where = {"url": safe_url(url)} if url is not None else {}
    if isinstance(exc, sa_exc.DBAPIError) and not isinstance(
        exc, sa_exc.OperationalError | sa_exc.InterfaceError | sa_exc.InternalError
    ):
        refused = sa_exc.IntegrityError | sa_exc.DataError | sa_exc.ProgrammingError
        if isinstance(exc, refused) and not exc.connection_invalidated:
            return StoreError(
                f"the database refused {operation}",
                operation=operation,
                cause=cause,
                **where,
                **context,
            )
    kind = _kind(exc, sqlite_path(url) if url is not None else None)
    return kind(
        f"{operation} failed: {_HEADLINES[kind]}",
        operation=operation,
        cause=cause,
        **where,
        **context,
    )
