"""Fault injection (SQLite's own I/O-error loop is the model): the driver fails at each
statement in turn of an append, a compaction and a session change, and at their commit. After
each failure the error is a typed ``StoreEnvironmentError`` naming the operation, nothing of the
failed operation is stored, the context reads as before, and the same operation then succeeds.

Failures are raised from SQLAlchemy's ``before_cursor_execute`` hook (and the dialect's
``do_commit``) on every engine the store runs statements on, the SQLite runner's included:
the real driver path, as a failing disk or a dying server would take it. On PostgreSQL one fault
is real: the connection's own backend is terminated before the statement runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.engine import Engine

from abridged.core.model import Message
from abridged.errors import (
    StoreEnvironmentError,
    StoreError,
    StoreFullError,
    StoreUnavailableError,
)
from abridged.store import Context, Store
from abridged.store.schema import compactions, messages, sessions, summaries

from .helpers import keep_last

TERMINATE = "SELECT pg_terminate_backend(pg_backend_pid())"


@dataclass(frozen=True)
class Fault:
    """What the driver raises, and the error the store must turn it into."""

    name: str
    expected: type[StoreEnvironmentError]
    message: str = ""
    sqlite_code: int | None = None
    sqlstate: str | None = None
    terminate: bool = False  # PostgreSQL: kill the connection's backend for real


FAULTS = {
    "sqlite": [
        Fault("io", StoreEnvironmentError, "disk I/O error", sqlite_code=10),
        Fault("full", StoreFullError, "database or disk is full", sqlite_code=13),
    ],
    "postgresql": [
        Fault("io", StoreEnvironmentError, "could not read block 7: I/O error", sqlstate="58030"),
        Fault("full", StoreFullError, "could not extend file: No space left", sqlstate="53100"),
        Fault("lost", StoreUnavailableError, terminate=True),
    ],
}


class Injector:
    """Counts the statements (and commits) run on the store's engines; when armed, makes the
    ``fail_at``-th one fail with ``fault``."""

    def __init__(self, store: Store) -> None:
        self.engines: tuple[Engine, ...] = store.sync_engines
        self.count = 0
        self.fail_at: int | None = None
        self.fault: Fault | None = None
        self.hit = False

    def _error(self, engine: Engine) -> Exception:
        assert self.fault is not None
        dbapi = engine.dialect.loaded_dbapi
        if engine.dialect.name == "sqlite":
            error = dbapi.OperationalError(self.fault.message)
            error.sqlite_errorcode = self.fault.sqlite_code
            return error  # type: ignore[no-any-return]
        return dbapi.OperationalError(  # type: ignore[no-any-return]
            self.fault.message, SimpleNamespace(sqlstate=self.fault.sqlstate)
        )

    def _point(self, engine: Engine, cursor: Any) -> None:
        if self.fail_at is None:
            return
        self.count += 1
        if self.count - 1 != self.fail_at:
            return
        self.hit = True
        assert self.fault is not None
        if self.fault.terminate:
            cursor.execute(TERMINATE)  # the server ends this connection: the driver raises
            raise AssertionError("the backend survived its termination")
        raise self._error(engine)

    @contextmanager
    def installed(self) -> Iterator[None]:
        undo: list[Callable[[], None]] = []
        for engine in self.engines:

            def before(conn: Any, cursor: Any, *_: Any, engine: Engine = engine) -> None:
                self._point(engine, cursor)

            event.listen(engine, "before_cursor_execute", before)
            undo.append(lambda e=engine, f=before: event.remove(e, "before_cursor_execute", f))
            dialect = engine.dialect
            original = dialect.do_commit

            def do_commit(dbapi_connection: Any, engine: Engine = engine, orig: Any = original):
                self._point(engine, dbapi_connection.cursor())
                orig(dbapi_connection)

            dialect.do_commit = do_commit  # type: ignore[method-assign]
            undo.append(lambda d=dialect: delattr(d, "do_commit"))
        try:
            yield
        finally:
            for step in undo:
                step()

    def arm(self, fail_at: int, fault: Fault) -> None:
        self.count, self.fail_at, self.fault, self.hit = 0, fail_at, fault, False

    def disarm(self) -> None:
        self.fail_at = None


async def snapshot(store: Store, cid: str) -> tuple[Any, ...]:
    """Everything a failed operation must leave as it was: row counts and the context."""
    counts = []
    async with store.engine.connect() as conn:
        for table in (messages, sessions, summaries, compactions):
            counts.append(
                (
                    await conn.execute(select(func.count()).where(table.c.conversation_id == cid))
                ).scalar()
            )
    context: Context = await store.load_context(cid)
    return (*counts, context)


Operation = Callable[[Store, str], Awaitable[Any]]


async def _append(store: Store, cid: str) -> None:
    await store.append_many(cid, [Message.user("a"), Message.assistant("b"), Message.user("c")])


async def _compact(store: Store, cid: str) -> None:
    outcome = await store.commit_compaction(cid, keep_last(2))
    assert outcome.status == "committed"


async def _new_session(store: Store, cid: str) -> None:
    await store.new_session(cid)


# operation -> (what to do before each attempt, the operation, the operation names it reports)
OPERATIONS: dict[str, tuple[Operation | None, Operation, set[str]]] = {
    "append_many": (None, _append, {"append_many"}),
    "compaction": (_append, _compact, {"load_context", "commit_compaction"}),
    "new_session": (None, _new_session, {"new_session"}),
}


#: Operations sent as one statement outside any transaction (its commit is the statement's own):
#: one place to fail.
ONE_STATEMENT = {("postgresql", "append_many"): 1}


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
async def test_each_statement_fails_in_turn(store: Store, operation: str) -> None:
    prepare, run, names = OPERATIONS[operation]
    least = ONE_STATEMENT.get((store.dialect, operation), 3)  # BEGIN, a statement, COMMIT
    cid = (await store.create_conversation()).id
    await _append(store, cid)
    injector = Injector(store)
    failures = 0
    with injector.installed():
        for fault in FAULTS[store.dialect]:
            for fail_at in range(200):
                if prepare is not None:
                    await prepare(store, cid)
                before = await snapshot(store, cid)
                injector.arm(fail_at, fault)
                try:
                    await run(store, cid)
                except StoreError as exc:
                    assert injector.hit, f"{exc!r} without an injected fault"
                    assert isinstance(exc, fault.expected), (fail_at, fault, exc)
                    if fault.expected is StoreEnvironmentError:
                        assert type(exc) is StoreEnvironmentError
                    assert exc.context["operation"] in names
                    assert "cause" in exc.context
                    failures += 1
                else:
                    assert not injector.hit, f"statement {fail_at} failed, yet no error"
                    break  # past the operation's last statement: all were tried
                finally:
                    injector.disarm()
                assert await snapshot(store, cid) == before, (fault.name, fail_at)
                await run(store, cid)  # the same operation now succeeds
                assert await snapshot(store, cid) != before
            else:
                raise AssertionError("the operation never ran to its end")
            assert fail_at >= least  # every statement (BEGIN, COMMIT) was hit
    assert failures >= least * len(FAULTS[store.dialect])
    # The conversation reads whole after all of it.
    stored = await store.stored_messages(cid)
    assert [m.seq for m in stored] == list(range(1, len(stored) + 1))
