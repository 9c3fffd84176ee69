"""The store's foundation: engine, schema check, transactions, the single writer's retry loop."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal, TypeVar

from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from abridged.core.protocols import Embedder
from abridged.errors import ConflictError, ContentionError
from abridged.store import queries
from abridged.store.appender import SqliteAppender
from abridged.store.connect import create_engine, resolve_url, safe_url, transaction
from abridged.store.embed import HashingEmbedder
from abridged.store.migrate import ensure_schema

T = TypeVar("T")
log = logging.getLogger("abridged.store")

WriteBody = Callable[[AsyncConnection, RowMapping], Awaitable[T]]


class StoreBase:
    """Engine, schema check at first use, transactions and background tasks."""

    def __init__(
        self,
        url: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        create: bool = True,
        upgrade: bool = False,
        **engine_options: Any,
    ) -> None:
        """``url``: a SQLite path or URL, or a ``postgresql://`` URL; by default ``ABRIDGED_DB``,
        else ``abridged.db`` in the user's data directory. ``embedder``: for session search
        (``None`` stores no vectors and searches text only). ``create``: make the schema in an
        empty database. ``upgrade``: migrate an older schema instead of refusing it."""
        self._url = resolve_url(url)
        self.embedder: Embedder | None = HashingEmbedder() if embedder == "default" else embedder
        self._create = create
        self._upgrade = upgrade
        self._engine: AsyncEngine = create_engine(self._url, **engine_options)
        self._appender = (
            SqliteAppender(self._url) if self._url.get_backend_name() == "sqlite" else None
        )
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
        if self._appender is not None:
            self._appender.close()
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
        self, conversation_id: str, owner: str | None, body: WriteBody[T], *, attempts: int = 2
    ) -> T:
        """Run ``body`` in a write transaction after reading the conversation's row; ``body``
        calls ``queries.cas`` with the version it read before changing anything. A lost
        compare-and-swap re-reads and retries (``attempts`` in all), then ``ContentionError``."""
        await self.open()
        last: ConflictError | None = None
        for _ in range(attempts):
            try:
                async with transaction(self._engine, "write") as conn:
                    row = await queries.read_conversation(conn, conversation_id, owner)
                    return await body(conn, row)
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

    async def _vector(self, text: str) -> tuple[list[float] | None, str | None]:
        """The embedding of a summary (computed outside any transaction)."""
        if self.embedder is None or not text.strip():
            return None, None
        vectors = await self.embedder.embed([text])
        return vectors[0], self.embedder.name
