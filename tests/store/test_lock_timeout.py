"""Bounded waits: a write behind a lock another connection holds (PostgreSQL: the
conversation's row lock; SQLite: the file's write lock) ends in ``StoreLockedError`` after
``Store(lock_timeout=...)``, on both backends, with nothing written; the lock's holder then goes
on as if nothing happened. (On PostgreSQL the append used to wait forever.)"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from abridged.core.model import Message
from abridged.errors import SettingError, StoreLockedError
from abridged.store import Store


async def test_a_write_behind_a_held_lock_ends_in_store_locked(db_url: str) -> None:
    owner = Store(db_url)
    waiter = Store(db_url, lock_timeout=0.3)
    try:
        convo = await owner.create_conversation()
        await owner.append(convo.id, Message.user("before", id="b"))
        async with owner.engine.connect() as held:
            await held.begin()
            if owner.dialect == "sqlite":
                await held.exec_driver_sql("UPDATE conversations SET updated_at = updated_at")
            else:
                await held.execute(
                    text("SELECT id FROM conversations WHERE id = :c FOR UPDATE"), {"c": convo.id}
                )
            # the wait is bounded by the lock timeout; the outer bound only keeps a regression
            # from hanging the run
            for call in (
                waiter.append(convo.id, Message.user("blocked", id="x")),
                waiter.deliver(convo.id),
            ):
                with pytest.raises(StoreLockedError) as info:
                    await asyncio.wait_for(call, 120)
                assert info.value.operation in {"append_many", "deliver"}
            await held.rollback()
        assert [m.message.id for m in await owner.stored_messages(convo.id)] == ["b"]
        after = await waiter.append(convo.id, Message.user("after", id="a"))
        assert after.seq == 2
    finally:
        await waiter.close()
        await owner.close()


@pytest.mark.parametrize("bad", [0, -1, 1e9, "30", True])
def test_the_lock_timeout_is_checked(bad: object) -> None:
    with pytest.raises(SettingError, match="lock_timeout"):
        Store("sqlite:///unused.db", lock_timeout=bad)  # type: ignore[arg-type]


async def test_postgres_connections_wait_30_s_for_a_lock_by_default(store: Store) -> None:
    """The server's default (0) waits forever; a store's connections wait SQLite's 30 s."""
    if store.dialect != "postgresql":
        pytest.skip("SQLite's write timeout is tested in test_environment_failures")
    async with store.engine.connect() as conn:
        assert (await conn.execute(text("SHOW lock_timeout"))).scalar_one() == "30s"
