"""A failing environment gives typed errors, never a driver's exception: a server that cannot be
reached, a full disk, a read-only database, another process's lock. Reads never wait on another
process's writer beyond a short timeout; a failed write leaves nothing behind; ``synchronous`` is
a setting. The conditions are real: another process holding SQLite's write lock, SQLite's page
limit, PostgreSQL's read-only transactions and lock timeout, closed ports, unknown hosts; with
the rights to mount a filesystem (root), a full and a read-only tmpfs too."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncConnection

from abridged.core.model import Message
from abridged.errors import (
    SettingError,
    StoreEnvironmentError,
    StoreError,
    StoreFullError,
    StoreLockedError,
    StoreReadOnlyError,
    StoreUnavailableError,
)
from abridged.store import Store, connect
from abridged.store.connect import resolve_url
from abridged.store.testing import free_port
from tests.databases import Postgres, database_url

SECRET = "sekret-pw-42"

# -- servers that cannot be reached, URLs that cannot work


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://alice:{SECRET}@127.0.0.1:{free_port()}/db",  # nothing listens: refused
        f"postgresql://alice@127.0.0.1:{free_port()}/db?password={SECRET}",
        f"postgresql://alice:{SECRET}@127.0.0.1:99999/db",  # no such port
        f"postgresql://alice:{SECRET}@no-such-host.invalid/db",  # DNS
    ],
    ids=["refused", "password-in-query", "bad-port", "unknown-host"],
)
async def test_an_unreachable_server_is_store_unavailable(url: str) -> None:
    store = Store(url)
    try:
        for call in (store.open(), store.list_conversations(), store.load_context("c")):
            with pytest.raises(StoreUnavailableError) as info:
                await call
            error = info.value
            assert error.operation in {"open", "list_conversations", "load_context"}
            assert error.cause
            assert SECRET not in str(error) and SECRET not in repr(error.context)
            assert "alice" in error.context["url"]
    finally:
        await store.close()


def test_a_driver_message_quoting_the_password_is_scrubbed() -> None:
    """Some drivers quote their connection string back (a DSN in an error): the password, in
    the URL or in its query, never reaches the error's message or context."""
    url = resolve_url("postgresql://app:hunter2secret@db.internal:5432/app?sslpassword=qwerty99")
    said = OSError(
        "could not connect to postgresql://app:hunter2secret@db.internal:5432/app"
        "?sslpassword=qwerty99: connection refused"
    )
    error = connect.environment_error(said, "open", url)
    assert isinstance(error, StoreUnavailableError)
    shown = f"{error} {error.context}"
    assert "hunter2secret" not in shown and "qwerty99" not in shown
    assert "db.internal" in shown and "***" in shown


def test_a_url_that_cannot_be_parsed_is_a_store_error() -> None:
    with pytest.raises(StoreError) as info:
        Store(f"postgresql://alice:{SECRET}@127.0.0.1:notaport/db")
    assert SECRET not in str(info.value)


def test_a_directory_that_cannot_be_made_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreEnvironmentError) as info:
        Store(blocker / "sub" / "abridged.db")
    assert info.value.operation == "open"


# -- another process's lock


HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("UPDATE conversations SET model = 'held'")
print("held", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""


def _sqlite_file(store: Store) -> str:
    path = connect.sqlite_path(resolve_url(store.url))
    assert path is not None
    return str(path)


@contextmanager
def lock_held_by_another_process(store: Store) -> Iterator[subprocess.Popen[str]]:
    """Another process holding SQLite's write lock until the block ends (or it is told to
    let go: a line on its stdin)."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, _sqlite_file(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield child
    finally:
        if child.poll() is None:
            child.communicate("\n", timeout=10)


async def test_reads_do_not_wait_for_another_process_writer(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = sqlite_store
    convo = await store.create_conversation(owner="ann")
    await store.append(convo.id, Message.user("hello"))
    fresh = Store(store.url)  # new connections, the schema check included
    try:
        # reads that waited for the held lock would end in StoreLockedError: it is held
        # until the block ends
        with lock_held_by_another_process(store) as holder:
            await fresh.open()
            assert len((await fresh.load_context(convo.id)).messages) == 1
            assert [c.id for c in await fresh.list_conversations(owner="ann")] == [convo.id]
            assert await fresh.search("hello") == []
            # A writer waits its (here shortened) timeout, then says so; nothing is written.
            monkeypatch.setattr(connect, "SQLITE_WRITE_TIMEOUT_S", 0.3)
            for call in (fresh.append(convo.id, Message.user("x")), fresh.new_session(convo.id)):
                with pytest.raises(StoreLockedError) as info:
                    await call
                assert info.value.operation in {"append_many", "new_session"}
            assert len(await fresh.stored_messages(convo.id)) == 1
            holder.communicate("\n", timeout=10)  # the other process lets go
            await fresh.append(convo.id, Message.user("after"))
            assert len(await fresh.stored_messages(convo.id)) == 2
    finally:
        await fresh.close()


async def test_the_busy_timeouts_are_short_for_reads_and_long_for_writes(
    sqlite_store: Store,
) -> None:
    store = sqlite_store

    async def busy(conn: AsyncConnection) -> int:
        return int((await conn.exec_driver_sql("PRAGMA busy_timeout")).scalar_one())

    async with connect.transaction(store.engine, "read") as conn:
        assert await busy(conn) == int(connect.SQLITE_READ_TIMEOUT_S * 1000) == 2000
    async with connect.transaction(store.engine, "write") as conn:
        assert await busy(conn) == int(connect.SQLITE_WRITE_TIMEOUT_S * 1000) == 30000
    async with connect.transaction(store.engine, "read") as conn:
        assert await busy(conn) == 2000


@pytest.fixture
def pg_url(tmp_path: Path, postgres: Postgres | str) -> str:
    """An empty, migrated PostgreSQL database."""
    return database_url("postgresql", tmp_path, postgres)


@pytest.fixture
async def pg_store(pg_url: str) -> AsyncIterator[Store]:
    async with Store(pg_url) as store:
        yield store


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[Store]:
    async with Store(tmp_path / "store.db") as store:
        yield store


@pytest.fixture
async def pg_row_lock(pg_store: Store) -> AsyncIterator[str]:
    """Another connection holding the row lock of a conversation (PostgreSQL)."""
    store = pg_store
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("hello"))
    async with store.engine.connect() as conn, conn.begin():  # a connection of its own
        await conn.execute(
            text("SELECT id FROM conversations WHERE id = :id FOR UPDATE"), {"id": convo.id}
        )
        yield convo.id


async def test_postgres_lock_timeout_is_store_locked_and_reads_go_on(
    pg_url: str, pg_row_lock: str
) -> None:
    cid = pg_row_lock
    store = Store(pg_url, connect_args={"server_settings": {"lock_timeout": "200ms"}})
    try:
        # a read waiting behind the row lock would end in StoreLockedError after 200 ms
        assert len((await store.load_context(cid)).messages) == 1
        with pytest.raises(StoreLockedError) as info:
            await store.append(cid, Message.user("x"))
        assert info.value.operation == "append_many"
        assert len(await store.stored_messages(cid)) == 1
    finally:
        await store.close()


async def test_postgres_read_only_is_store_read_only(pg_store: Store, pg_url: str) -> None:
    store = pg_store
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("hello"))
    settings = {"server_settings": {"default_transaction_read_only": "on"}}
    read_only = Store(pg_url, connect_args=settings)
    try:
        assert len((await read_only.load_context(convo.id)).messages) == 1
        for call in (
            read_only.append(convo.id, Message.user("x")),
            read_only.new_session(convo.id),
        ):
            with pytest.raises(StoreReadOnlyError):
                await call
    finally:
        await read_only.close()
    assert len(await store.stored_messages(convo.id)) == 1


# -- a full disk, a read-only database (SQLite)


def _limit_pages(store: Store, pages: int) -> None:
    def limit(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA max_page_count={pages}")
        cursor.close()

    for engine in store.sync_engines:
        event.listen(engine, "connect", limit)


async def _fill(store: Store, cid: str) -> tuple[int, StoreError]:
    acknowledged = 0
    for _ in range(500):
        try:
            await store.append_many(cid, [Message.user("x" * 4000), Message.assistant("y" * 4000)])
        except StoreError as exc:
            return acknowledged, exc
        acknowledged += 2
    raise AssertionError("the database never filled up")


async def test_a_full_database_is_store_full_and_keeps_what_it_acknowledged(
    sqlite_store: Store,
) -> None:
    store = sqlite_store
    convo = await store.create_conversation()
    path = _sqlite_file(store)
    pages = sqlite3.connect(path).execute("PRAGMA page_count").fetchone()[0]
    full = Store(path)
    _limit_pages(full, pages + 40)
    try:
        acknowledged, error = await _fill(full, convo.id)
        assert isinstance(error, StoreFullError) and error.operation == "append_many"
        assert acknowledged > 0
        assert len(await full.stored_messages(convo.id)) == acknowledged
        assert len((await full.load_context(convo.id)).messages) == acknowledged
    finally:
        await full.close()
    await store.append(convo.id, Message.user("room again"))  # no limit on this store
    assert len(await store.stored_messages(convo.id)) == acknowledged + 1


async def test_a_read_only_connection_is_store_read_only(sqlite_store: Store) -> None:
    store = sqlite_store
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("hello"))
    read_only = Store(_sqlite_file(store))

    def query_only(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute("PRAGMA query_only=ON")

    for engine in read_only.sync_engines:
        event.listen(engine, "connect", query_only)
    try:
        assert len((await read_only.load_context(convo.id)).messages) == 1
        for call in (
            read_only.append(convo.id, Message.user("x")),
            read_only.new_session(convo.id),
        ):
            with pytest.raises(StoreReadOnlyError):
                await call
        assert len(await read_only.stored_messages(convo.id)) == 1
    finally:
        await read_only.close()


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs (needs the right to mount: root); skipped elsewhere."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)], check=False)


async def test_a_full_filesystem_is_store_full(tmpfs: Path) -> None:
    store = Store(tmpfs / "full.db")
    try:
        convo = await store.create_conversation()
        acknowledged, error = await _fill(store, convo.id)
        assert isinstance(error, StoreFullError)
        assert len(await store.stored_messages(convo.id)) == acknowledged
    finally:
        await store.close()
    again = Store(tmpfs / "full.db")  # reopened: everything acknowledged is there
    try:
        assert len(await again.stored_messages(convo.id)) == acknowledged
    finally:
        await again.close()


async def test_a_read_only_filesystem_is_read_but_not_written(tmpfs: Path) -> None:
    store = Store(tmpfs / "ro.db")
    convo = await store.create_conversation(owner="ann")
    await store.append(convo.id, Message.user("hello"))
    await store.close()
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    read_only = Store(tmpfs / "ro.db")
    try:
        assert len((await read_only.load_context(convo.id)).messages) == 1
        assert [c.id for c in await read_only.list_conversations(owner="ann")] == [convo.id]
        for call in (
            read_only.append(convo.id, Message.user("x")),
            read_only.new_session(convo.id),
            read_only.create_conversation(),
        ):
            with pytest.raises(StoreReadOnlyError):
                await call
    finally:
        await read_only.close()
    started = set(threading.enumerate())
    with pytest.raises(StoreReadOnlyError):  # a new file cannot be made there
        await Store(tmpfs / "new.db").open()
    # aiosqlite stops the thread of a connection that failed to open after the call returned;
    # waited for while the event loop runs, it does not report to a closed loop
    for thread in set(threading.enumerate()) - started:
        if "_connection_worker_thread" in thread.name:
            await asyncio.to_thread(thread.join)


# -- durability: synchronous


async def _synchronous(engine_conn: AsyncConnection) -> int:
    return int((await engine_conn.exec_driver_sql("PRAGMA synchronous")).scalar_one())


@pytest.mark.parametrize(("setting", "level"), [("NORMAL", 1), ("FULL", 2), ("full", 2)])
async def test_synchronous_is_a_setting(db_url: str, setting: str, level: int) -> None:
    store = Store(db_url, sqlite_synchronous=setting)  # type: ignore[arg-type]
    try:
        await store.open()
        if store.dialect != "sqlite":
            return  # PostgreSQL's durability is the server's: accepted, not applied
        async with store.engine.connect() as conn:
            assert await _synchronous(conn) == level
        for engine in store.sync_engines[1:]:  # the append path's connections too
            with engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA synchronous").scalar_one() == level
    finally:
        await store.close()


@pytest.mark.parametrize("setting", ["OFF", "EXTRA", "", 2, None])
def test_synchronous_rejects_other_values(setting: object, tmp_path: Path) -> None:
    with pytest.raises(SettingError) as info:
        Store(tmp_path / "never.db", sqlite_synchronous=setting)  # type: ignore[arg-type]
    assert info.value.name == "sqlite_synchronous"


async def test_the_file_is_in_wal_mode_once_opened(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    async with Store(path) as store:
        await store.create_conversation()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
