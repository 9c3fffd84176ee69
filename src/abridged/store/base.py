"""The store's foundation: engine, schema check, transactions, the single writer's retry loop."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal, TypeVar

from sqlalchemy.engine import Engine, RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from abridged.core.protocols import Embedder
from abridged.errors import ConflictError, ContentionError
from abridged.store import codec, queries
from abridged.store.appender import KeyStoredError, Rows, in_one_statement, optimistic
from abridged.store.connect import (
    Mode,
    check_lock_timeout,
    check_synchronous,
    connection,
    create_engine,
    resolve_url,
    safe_url,
    store_boundary,
    transaction,
)
from abridged.store.embed import HashingEmbedder
from abridged.store.migrate import ensure_schema
from abridged.store.threaded import SqliteRunner, TransactionBody

T = TypeVar("T")
log = logging.getLogger("abridged.store")

WriteBody = Callable[[AsyncConnection, RowMapping], Awaitable[T]]


class StoreBase:
    """Engine, schema check at first use, transactions and background tasks.

    Failures of the environment (a server down, a read-only or full disk, a lock held too long
    by another process) raise ``StoreEnvironmentError`` subclasses naming the operation and
    the cause; the failed operation's transaction is rolled back, nothing acknowledged is lost.

    Durability on SQLite: the file is in WAL mode. With ``sqlite_synchronous="NORMAL"`` (the
    default) a commit is durable against a crash of the process, but a power loss or an
    operating-system crash can lose the last commits acknowledged before it (never corrupt
    the file, never keep half a transaction). ``"FULL"`` syncs the log at every commit: every
    acknowledged commit survives a power loss, at the cost of one disk sync per write.
    PostgreSQL's durability is the server's (``synchronous_commit``).
    """

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        create: bool = True,
        upgrade: bool = False,
        sqlite_synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        lock_timeout: float | None = None,
        **engine_options: Any,
    ) -> None:
        """``url``: a SQLite path or URL, or a ``postgresql://`` URL; by default ``ABRIDGED_DB``,
        else ``abridged.db`` in the user's data directory. ``embedder``: for session search
        (``None`` stores no vectors and searches text only). ``create``: make the schema in an
        empty database. ``upgrade``: migrate an older schema instead of refusing it.
        ``sqlite_synchronous``: ``"NORMAL"`` or ``"FULL"`` (see the class: durability; ignored
        on PostgreSQL); ``SettingError`` otherwise. ``lock_timeout``: seconds a write waits for
        a lock another writer holds (SQLite's write lock, a PostgreSQL row lock) before it
        raises ``StoreLockedError``; ``None``: 30 s."""
        synchronous = check_synchronous(sqlite_synchronous)
        wait = check_lock_timeout(lock_timeout)
        self._url = resolve_url(url)
        self.embedder: Embedder | None = HashingEmbedder() if embedder == "default" else embedder
        self._create = create
        self._upgrade = upgrade
        sqlite = self._url.get_backend_name() == "sqlite"
        options = {"sqlite_synchronous": synchronous} if sqlite else {}
        self._engine: AsyncEngine = create_engine(
            self._url, lock_timeout=wait, **options, **engine_options
        )
        self._runner = SqliteRunner(self._url, synchronous, wait) if sqlite else None
        self._ready = False
        self._ready_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.background_errors: list[BaseException] = []
        #: compare-and-swaps this store lost to another writer (each was re-read and retried)
        self.cas_conflicts = 0

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return safe_url(self._url)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    @property
    def engine(self) -> AsyncEngine:
        """The SQLAlchemy engine (for tests, benchmarks and migrations)."""
        return self._engine

    @property
    def sync_engines(self) -> tuple[Engine, ...]:
        """Every synchronous engine that runs this store's statements: the async engine's, and
        on SQLite the runner's (for event hooks in tests and fault injection)."""
        extra = (self._runner.engine,) if self._runner is not None else ()
        return (self._engine.sync_engine, *extra)

    async def open(self) -> StoreBase:
        """Check the schema (creating it in an empty database); done once, also on first use."""
        if self._ready:
            return self
        async with self._ready_lock:
            if not self._ready:
                await ensure_schema(
                    self._engine, self._url, create=self._create, upgrade=self._upgrade
                )
                self._ready = True
        return self

    async def close(self) -> None:
        """Wait for background finalisations, then close every connection."""
        await self.drain()
        if self._runner is not None:
            self._runner.close()
        await self._engine.dispose()

    async def __aenter__(self) -> StoreBase:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def drain(self) -> None:
        """Wait until every background finalisation has finished (their errors are kept in
        ``background_errors``, never raised into the user's path)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)

        def _done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                error = t.exception()
                assert error is not None
                self.background_errors.append(error)
                log.warning("background finalisation failed: %s", error)

        task.add_done_callback(_done)
        return task

    async def _write(
        self,
        conversation_id: str,
        owner: str | None,
        body: WriteBody[T],
        *,
        operation: str,
        attempts: int = 2,
    ) -> T:
        """Run ``body`` in a write transaction after reading the conversation's row; ``body``
        calls ``queries.cas`` with the version it read before changing anything. A lost
        compare-and-swap re-reads and retries (``attempts`` in all), then ``ContentionError``.
        ``operation`` names the store operation in environment errors."""
        await self.open()
        last: ConflictError | None = None
        for _ in range(attempts):
            try:
                async with transaction(self._engine, "write", operation=operation) as conn:
                    row = await queries.read_conversation(conn, conversation_id, owner)
                    return await body(conn, codec.check_conversation(row))
            except ConflictError as exc:
                self.cas_conflicts += 1
                if attempts == 1:
                    raise
                last = exc
        assert last is not None
        raise ContentionError(
            f"the conversation kept changing under this writer ({attempts} attempts)",
            conversation_id=conversation_id,
            **{k: v for k, v in last.context.items() if k != "conversation_id"},
        ) from last

    async def _run_sync(self, body: TransactionBody[T], *, mode: Mode, operation: str) -> T:
        """``body(conn)`` in one transaction on a synchronous connection: on SQLite through the
        store's ``SqliteRunner`` (on the loop's thread when the lock is free, else in its worker
        thread), on PostgreSQL through ``AsyncConnection.run_sync``. ``operation`` names it in
        environment errors."""
        await self.open()
        if self._runner is not None:
            return await self._runner.run(body, mode=mode, operation=operation)
        async with transaction(self._engine, mode, operation=operation) as conn:
            return await conn.run_sync(body)

    async def _write_keyed(
        self,
        body: Callable[[bool], TransactionBody[T]],
        rows: Rows,
        *,
        operation: str,
        alone: TransactionBody[T] | None = None,
    ) -> T:
        """``body(look_up)`` in a write transaction that appends ``rows``: optimistic first
        (``look_up=False``) when it may be (``appender.optimistic``), again with the look-up of
        keys stored already when one was (the first rolled back: a retried send).

        ``alone``: the append as one statement, run outside any transaction on PostgreSQL in
        their place when the rows allow it (``appender.append_in_one_statement``, one round
        trip; ``appender.in_one_statement``)."""
        await self.open()
        if alone is not None and self._runner is None and in_one_statement(rows):
            try:
                return await self._run_alone(alone, mode="write", operation=operation)
            except KeyStoredError:
                return await self._run_sync(body(True), mode="write", operation=operation)
        if optimistic(rows):
            try:
                return await self._run_sync(body(False), mode="write", operation=operation)
            except KeyStoredError:
                pass
        return await self._run_sync(body(True), mode="write", operation=operation)

    async def _run_alone(self, body: TransactionBody[T], *, mode: Mode, operation: str) -> T:
        """``body(conn)`` for a body that sends one statement, atomic by itself: on PostgreSQL
        outside any transaction (autocommit: no BEGIN, no COMMIT, one round trip instead of
        three), on SQLite as ``_run_sync`` (its runner's transaction costs no round trip)."""
        await self.open()
        if self._runner is not None:
            return await self._runner.run(body, mode=mode, operation=operation)
        async with connection(self._engine, operation) as conn:
            with store_boundary(operation, self._engine.url):
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                return await conn.run_sync(body)

    async def _vector(self, text: str) -> tuple[list[float] | None, str | None]:
        """The embedding of a summary (computed outside any transaction)."""
        if self.embedder is None or not text.strip():
            return None, None
        vectors = await self.embedder.embed([text])
        return vectors[0], self.embedder.name
