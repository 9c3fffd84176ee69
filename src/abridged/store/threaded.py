"""SQLite transactions run whole on a synchronous engine: first right away on the caller's
thread if the lock is free, else in one worker thread. ``aiosqlite`` hops to its thread for
every execute, fetch and commit; a hop costs 0.1 to 1 ms (the longer when the thread was idle),
while the short transactions of a turn (its lease, its new messages) take SQLite tens of
microseconds."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy.engine import URL, Connection, Engine

from abridged.errors import StoreLockedError
from abridged.store.connect import Mode, create_sqlite_sync_engine, store_boundary

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

    def __init__(
        self, url: URL, synchronous: str = "NORMAL", lock_timeout: float | None = None
    ) -> None:
        self._url = url
        self._engine = create_sqlite_sync_engine(
            url, sqlite_synchronous=synchronous, lock_timeout=lock_timeout
        )
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="abridged-sqlite")
        self._inline = synchronous == "NORMAL"
        # The loop's own connection, kept checked out: a pool checkout and return cost more
        # than the statements of a lease. Only the thread that made it uses it.
        self._held: Connection | None = None
        self._held_by: int | None = None
        #: transactions that found the lock taken on the loop's thread and waited in the worker
        self.deferred = 0

    @property
    def engine(self) -> Engine:
        """The synchronous engine the transactions run on."""
        return self._engine

    def _run(self, body: TransactionBody[T], mode: Mode, operation: str) -> T:
        with store_boundary(operation, self._url), self._engine.connect() as conn:
            conn.execution_options(abridged_mode=mode)  # in place: the "begin" hook reads it
            with conn.begin():
                return body(conn)

    def _run_held(self, body: TransactionBody[T], mode: Mode, operation: str) -> T:
        conn = self._held
        if conn is None or conn.closed or conn.invalidated:
            conn = self._held = self._engine.connect()
            self._held_by = threading.get_ident()
        with store_boundary(operation, self._url):
            try:
                conn.execution_options(abridged_mode=mode, abridged_wait=False)
                with conn.begin():
                    return body(conn)
            except BaseException:
                # The store's own errors and a lock found taken end in a clean rollback: the
                # connection stays. One a failed COMMIT or ROLLBACK left in a transaction goes
                # back to the pool, whose reset rolls it back (it would keep the write lock).
                if _left_in_transaction(conn):
                    self._held = None
                    conn.close()
                raise

    async def run(self, body: TransactionBody[T], *, mode: Mode, operation: str) -> T:
        """``body(conn)`` in one transaction (see the class); its result. ``body`` may run
        twice (its first transaction rolled back): it must do nothing but statements.
        Environment failures raise the ``StoreEnvironmentError`` subclasses of
        ``connect.transaction`` naming ``operation``; the store's own errors pass unchanged."""
        if self._inline and self._held_by in (None, threading.get_ident()):
            try:
                return self._run_held(body, mode, operation)
            except StoreLockedError:
                self.deferred += 1
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, body, mode, operation)

    def close(self) -> None:
        """Stop the thread and close the connections."""
        if self._held is not None:
            self._held.close()
            self._held = None
        self._executor.shutdown(wait=True)
        self._engine.dispose()


def _left_in_transaction(conn: Connection) -> bool:
    """Whether the SQLite connection under ``conn`` is unusable or still in a transaction."""
    if conn.closed or conn.invalidated or conn.in_transaction():
        return True  # SQLAlchemy's own view of the transaction too, not only the driver's
    try:
        dbapi = conn.connection.dbapi_connection
    except Exception:
        return True
    return dbapi is None or bool(getattr(dbapi, "in_transaction", True))
