"""Changes heard across processes (``abridged.store.changes``): on PostgreSQL another store's
announcement arrives with its note (one above the size limit without it) and a store's own
announcements are left out; on SQLite the poll reports a conversation whose row moved. Two
stores on one database stand for two processes."""

from __future__ import annotations

import asyncio

import pytest

from abridged.core.model import Message
from abridged.store import Store
from abridged.store.changes import MAX_NOTE

#: Seconds a wait may take before it is called a hang: a guard, never a speed bound.
HANG_GUARD = 60.0


async def _heard(heard: list[tuple[str, str | None]], count: int) -> None:
    async with asyncio.timeout(HANG_GUARD):
        while len(heard) < count:
            await asyncio.sleep(0.05)


async def test_a_change_made_through_one_store_is_heard_through_another(db_url: str) -> None:
    one, two = Store(db_url), Store(db_url)
    try:
        watched = (await one.create_conversation()).id
        other = (await one.create_conversation()).id
        heard: list[tuple[str, str | None]] = []
        feed = two.follow_changes(
            lambda: {watched}, lambda cid, note: heard.append((cid, note)), ignore="two", poll=0.1
        )
        try:
            # listening (PostgreSQL) or a first poll taken (SQLite), which reports what it
            # sees first: heard from here on is what moved
            await asyncio.wait_for(feed.ready.wait(), HANG_GUARD)
            heard.clear()
            await one.append(watched, Message.user("hello"))
            await one.announce_change(watched, origin="one", note='{"context_tokens": 12}')
            await one.announce_change(other, origin="one", note="not watched")
            await one.announce_change(watched, origin="two", note="its own: left out")
            await _heard(heard, 1)
            if two.dialect == "postgresql":
                await one.announce_change(watched, origin="one", note="x" * (MAX_NOTE + 1))
                await _heard(heard, 2)
                assert heard == [(watched, '{"context_tokens": 12}'), (watched, None)]
            else:
                assert heard == [(watched, None)]  # the row moved (no notes on SQLite)
        finally:
            await feed.close()
    finally:
        await one.close()
        await two.close()


async def test_a_closed_poll_ends_between_two_reads(db_url: str) -> None:
    store = Store(db_url)
    if store.dialect != "sqlite":
        await store.close()
        pytest.skip("a PostgreSQL listener is cancelled where it waits: nothing to check")
    try:
        watched = (await store.create_conversation()).id
        feed = store.follow_changes(lambda: {watched}, lambda _cid, _note: None, poll=0.05)
        await asyncio.wait_for(feed.ready.wait(), HANG_GUARD)
        await feed.close()
        # asked to stop, not cancelled: a read in flight would have been let finish
        assert not feed._task.cancelled()  # (white box: how it ended)
    finally:
        await store.close()
