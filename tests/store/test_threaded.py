"""SQLite transactions run on the event loop's thread when the lock is free, and in the worker
thread when another connection holds it: never a busy wait on the loop, so a transaction of
this process's async engine that holds the lock across an ``await`` is never blocked by the
very loop it needs (a real SQLite file, a second process holding the lock)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from abridged.core.model import Message
from abridged.errors import NotFoundError
from abridged.store import Store
from abridged.store.connect import transaction


async def test_a_free_lock_runs_on_the_loop_and_a_held_one_waits_in_the_worker(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "a.db")
    await store.open()
    try:
        convo = await store.create_conversation()
        await store.append(convo.id, Message.user("one"))
        runner = store._runner
        assert runner is not None and runner.deferred == 0  # the lock was free: on the loop
        # The async engine takes the write lock and holds it across an await; the append
        # cannot run on the loop then: it waits in the worker until the lock is given back.
        async with transaction(store.engine, "write") as conn:
            await conn.execute(
                text("UPDATE conversations SET model = 'held' WHERE id = :i"), {"i": convo.id}
            )
            waiting = asyncio.ensure_future(store.append(convo.id, Message.user("two")))
            await asyncio.sleep(0.2)
            assert not waiting.done()  # waiting for the lock, and the loop still runs
            assert runner.deferred == 1
        stored = await asyncio.wait_for(waiting, timeout=10)
        assert stored.seq == 2
        messages = await store.stored_messages(convo.id)
        assert [m.message.text for m in messages] == ["one", "two"]
    finally:
        await store.close()


async def test_another_process_holding_the_lock_delays_but_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    store = Store(path)
    await store.open()
    try:
        convo = await store.create_conversation()
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")
        released = threading.Event()

        def let_go() -> None:
            released.wait(5)
            other.execute("COMMIT")

        holder = threading.Thread(target=let_go)
        holder.start()
        lease = asyncio.ensure_future(store.acquire_turn(convo.id, "w1"))
        ticks = 0
        while ticks < 10:  # the loop is free while the lease waits for the lock
            await asyncio.sleep(0.01)
            ticks += 1
        assert not lease.done()
        released.set()
        taken = await asyncio.wait_for(lease, timeout=10)
        holder.join()
        other.close()
        assert taken is not None and taken.holder == "w1"
        assert (await store.turn_lease(convo.id)).holder == "w1"
    finally:
        await store.close()


async def test_full_synchronous_runs_every_transaction_in_the_worker(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db", sqlite_synchronous="FULL")
    await store.open()
    try:
        convo = await store.create_conversation()
        loop_thread = threading.get_ident()
        seen: list[int] = []

        def body(conn: object) -> int:
            seen.append(threading.get_ident())
            return 1

        assert await store._run_sync(body, mode="read", operation="probe") == 1
        assert seen and seen[0] != loop_thread
        await store.append(convo.id, Message.user("kept"))
        assert (await store.get_message(convo.id, 1)).message.text == "kept"
    finally:
        await store.close()


async def test_the_loops_connection_outlives_a_store_error_and_a_lock_found_taken(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    store = Store(path)
    await store.open()
    try:
        convo = await store.create_conversation()
        await store.append(convo.id, Message.user("one"))
        runner = store._runner
        assert runner is not None
        held = runner._held
        assert held is not None
        with pytest.raises(NotFoundError):  # the store's own error: rolled back cleanly
            await store.append("no-such-conversation", Message.user("lost"))
        assert runner._held is held
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # the lock taken: tried on the loop, then the worker
        waiting = asyncio.ensure_future(store.append(convo.id, Message.user("two")))
        await asyncio.sleep(0.2)
        assert runner.deferred == 1
        other.execute("COMMIT")
        other.close()
        await asyncio.wait_for(waiting, timeout=10)
        assert runner._held is held
        await store.append(convo.id, Message.user("three"))
        assert runner._held is held
        messages = await store.stored_messages(convo.id)
        assert [m.message.text for m in messages] == ["one", "two", "three"]
    finally:
        await store.close()
