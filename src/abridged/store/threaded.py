"""SQLite transactions run whole on a synchronous engine: first right away on the caller's
thread if the lock is free, else in one worker thread. ``aiosqlite`` hops to its thread for
every execute, fetch and commit; a hop costs 0.1 to 1 ms (the longer when the thread was idle),
while the short transactions of a turn (its lease, its new messages) take SQLite tens of
microseconds."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy.engine import URL, Connection, Engine

from abridged.errors import AbridgedError, StoreLockedError
from abridged.store.connect import DRIVER_ERRORS, Mode, create_sqlite_sync_engine, environment_error

T = TypeVar("T")

TransactionBody = Callable[[Connection], T]


class SqliteRunner:
    """Runs SQLite transactions on a synchronous engine with the async engine's settings
    (``connect.create_sqlite_sync_engine``): ``read`` transactions begin deferred, ``write``
    ones take the write lock at ``BEGIN IMMEDIATE``, as in ``connect.transaction``.

    A transaction is first tried on the calling (event loop's) thread with no busy wait: it
    runs there when no other connection holds the lock it needs, which is nearly always. When
    one does (another process, or this process's async engine in a transaction that awaits
    between statements), it is rolled back at once and run again in the worker thread, which
    waits for the lock as the async engine would: the event loop never sleeps in SQLite's busy
    handler, so it can never block the very transaction it would wait for. With
    ``synchronous="FULL"`` every commit syncs the disk: transactions then always run in the
    worker thread."""

    def __init__(self, url: URL, synchronous: str = "NORMAL") -> None:
        self._url = url
        self._engine = create_sqlite_sync_engine(url, sqlite_synchronous=synchronous)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="abridged-sqlite")
        self._inline = synchronous == "NORMAL"
        #: transactions that found the lock taken on the loop's thread and waited in the worker
        self.deferred = 0

    @property
    def engine(self) -> Engine:
        """The synchronous engine the transactions run on."""
        return self._engine

    def _run(self, body: TransactionBody[T], mode: Mode, operation: str, wait: bool) -> T:
        try:
            with self._engine.connect() as conn:
                # in place: the "begin" hook reads both
                conn.execution_options(abridged_mode=mode, abridged_wait=wait)
                with conn.begin():
                    return body(conn)
        except AbridgedError:
            raise
        except DRIVER_ERRORS as exc:  # the store's boundary, as ``connect.transaction``
            raise environment_error(exc, operation, self._url) from exc

    async def run(self, body: TransactionBody[T], *, mode: Mode, operation: str) -> T:
        """``body(conn)`` in one transaction (see the class); its result. ``body`` may run
        twice (its first transaction rolled back): it must do nothing but statements.
        Environment failures raise the ``StoreEnvironmentError`` subclasses of
        ``connect.transaction`` naming ``operation``; the store's own errors pass unchanged."""
        if self._inline:
            try:
                return self._run(body, mode, operation, False)
            except StoreLockedError:
                self.deferred += 1
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, body, mode, operation, True)

    def close(self) -> None:
        """Stop the thread and close the connections."""
        self._executor.shutdown(wait=True)
        self._engine.dispose()
