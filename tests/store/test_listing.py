"""Pages of conversations with their compactions and last request (``abridged.store.listing``,
migration 0009): a fixed number of queries whatever a page holds, pages that cover every
conversation once, the newer of two last requests kept, and a database from before 0009 that
keeps its rows. On SQLite and PostgreSQL; statements counted by a SQLAlchemy event listener
on the store's own engines."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from abridged.errors import SettingError
from abridged.store import Store, codec, upgrade

from .helpers import PROXY, downgrade_to, proxy_conversations, statements, turn


async def test_a_page_costs_the_same_few_queries_however_many_it_holds(store: Store) -> None:
    ids = await proxy_conversations(store, 130, compacted=3, noted=4)
    with statements(store) as few:
        small = await store.conversation_page(setting="proxy", limit=5)
    with statements(store) as full:
        first = await store.conversation_page(setting="proxy", limit=100)
    with statements(store) as rest:
        second = await store.conversation_page(setting="proxy", offset=100, limit=100)
    assert len(few) == len(full) == len(rest) <= 3, full
    assert first.total == second.total == 130  # neither tenant conversation is the proxy's
    assert len(first.conversations) == 100 and len(second.conversations) == 30
    listed = [c.info.id for c in first.conversations + second.conversations]
    assert sorted(listed) == sorted(ids)  # each once, across the pages
    assert len(small.conversations) == 5
    by_id = {c.info.id: c for c in first.conversations + second.conversations}
    for i in range(3):  # the compacted ones: both compactions counted, the newest shown
        done = await store.compactions(ids[i], owner="key-a")
        row = by_id[ids[i]]
        assert row.compactions == len(done) == 2
        assert row.last_compaction is not None
        assert row.last_compaction.tokens_before == done[-1].record.tokens_before
        assert row.last_compaction.trigger == done[-1].record.trigger
    for i in range(3, 130):
        assert by_id[ids[i]].compactions == 0 and by_id[ids[i]].last_compaction is None
    for i in range(4):
        assert by_id[ids[i]].last_request == {"action": "passed", "tokens_sent": 100 + i}
        assert by_id[ids[i]].last_request_at is not None
    assert all(by_id[c].last_request is None for c in ids[4:])
    # the most recently updated first
    stamps = [c.info.updated_at for c in first.conversations + second.conversations]
    assert stamps == sorted(stamps, reverse=True)
    everything = await store.conversation_page(limit=1000)
    assert everything.total == 132


async def test_the_newer_last_request_is_kept_whichever_is_written_last(store: Store) -> None:
    cid = (await store.create_conversation("px-one", settings=PROXY)).id
    now = codec.now()
    await store.note_request(cid, {"action": "compacted"}, at=now)
    await store.note_request(cid, {"action": "passed"}, at=now - timedelta(seconds=1))
    kept = await store.last_request(cid)
    assert kept is not None and kept[0] == {"action": "compacted"}
    await store.note_request(cid, {"action": "pruned"}, at=now + timedelta(seconds=1))
    kept = await store.last_request(cid)
    assert kept is not None and kept[0] == {"action": "pruned"}
    assert await store.last_request("px-none") is None
    await store.delete_conversation(cid)  # the line goes with its conversation
    assert await store.last_request(cid) is None


async def test_a_page_out_of_range_is_refused_with_the_reason(store: Store) -> None:
    with pytest.raises(SettingError, match="limit"):
        await store.conversation_page(limit=0)
    with pytest.raises(SettingError, match="offset"):
        await store.conversation_page(offset=-1)
    beyond = await store.conversation_page(offset=10)
    assert beyond.conversations == () and beyond.total == 0


async def test_a_database_from_before_0009_keeps_its_rows_and_takes_last_requests(
    empty_url: str,
) -> None:
    store = Store(empty_url)
    await store.open()
    cid = (await store.create_conversation("px-old", owner="key-a", settings=PROXY)).id
    await store.append_many(cid, turn(0), owner="key-a")
    async with store.engine.begin() as conn:
        await conn.run_sync(downgrade_to("0008"))
        tables = await conn.run_sync(
            lambda c: c.execute(text("SELECT count(*) FROM conversations")).scalar()
        )
    assert tables == 1
    await store.close()
    assert await upgrade(empty_url) == "upgraded"
    again = Store(empty_url)
    try:
        texts = [m.message.text for m in await again.stored_messages(cid, owner="key-a")]
        assert texts == [m.text for m in turn(0)]
        page = await again.conversation_page(setting="proxy")
        assert [c.info.id for c in page.conversations] == [cid]
        assert page.conversations[0].last_request is None
        await again.note_request(cid, {"action": "passed"})
        assert (await again.conversation_page()).conversations[0].last_request == {
            "action": "passed"
        }
    finally:
        await again.close()
