"""Idempotent appends: a chosen message id is stored once per conversation, whoever sends it
and however many times at once (separate engines racing on one database, as workers do); ids
derived from the content are not deduplicated; nothing is skipped in the sequence numbers; a
database holding duplicates from before migration 0006 upgrades without losing any."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from abridged.core.model import Message
from abridged.store import Store, upgrade

from .helpers import downgrade_to

ROUNDS = 12
SENDERS = 3


async def _stored_ids(store: Store, cid: str) -> list[str]:
    return [m.message.id for m in await store.stored_messages(cid)]


async def test_the_same_id_sent_at_once_by_several_engines_is_stored_once(db_url: str) -> None:
    """Three stores (three engines, as three workers) send each id at once, 12 rounds: one
    row per id, and every sender gets that row (same pk, same place)."""
    stores = [Store(db_url) for _ in range(SENDERS)]
    try:
        for s in stores:
            await s.open()
        convo = await stores[0].create_conversation(owner="acme")
        for n in range(ROUNDS):
            message = Message.user(f"retry {n}", id=f"dup-{n}")
            got = await asyncio.gather(
                *(
                    s.append(
                        convo.id, message, owner="acme", status="queued" if n % 2 else "delivered"
                    )
                    for s in stores
                )
            )
            assert len({(g.pk, g.seq, g.status) for g in got}) == 1, got
        ids = await _stored_ids(stores[0], convo.id)
        assert sorted(ids) == sorted(f"dup-{n}" for n in range(ROUNDS))
        await stores[0].deliver(convo.id, owner="acme")
        seqs = [m.seq for m in await stores[0].stored_messages(convo.id)]
        assert seqs == list(range(1, ROUNDS + 1))  # none skipped
    finally:
        for s in stores:
            await s.close()


async def test_a_retried_append_returns_the_stored_row(store: Store) -> None:
    convo = await store.create_conversation()
    first = await store.append(convo.id, Message.user("hello", id="client-1"))
    again = await store.append(convo.id, Message.user("hello (retried)", id="client-1"))
    assert again.pk == first.pk and again.seq == first.seq == 1
    assert again.message.text == "hello"  # the stored one, not the retry's
    assert await _stored_ids(store, convo.id) == ["client-1"]
    assert (await store.find_message(convo.id, "client-1")) == first


async def test_content_derived_ids_are_not_deduplicated(store: Store) -> None:
    """Two messages saying "yes" (``Message``'s default id, from the content) are two."""
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("yes"))
    await store.append_many(convo.id, [Message.user("yes"), Message.user("yes")])
    assert [m.message.text for m in await store.stored_messages(convo.id)] == ["yes"] * 3


async def test_a_batch_with_a_stored_id_leaves_no_gap(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("a", id="a"))
    got = await store.append_many(
        convo.id,
        [Message.user("b", id="b"), Message.user("a again", id="a"), Message.user("c", id="c")],
    )
    assert [(g.message.id, g.seq) for g in got] == [("b", 2), ("a", 1), ("c", 3)]
    tail = await store.append(convo.id, Message.user("d", id="d"))
    assert tail.seq == 4
    assert [m.seq for m in await store.stored_messages(convo.id)] == [1, 2, 3, 4]


async def test_an_id_repeated_within_a_batch_is_stored_once(store: Store) -> None:
    convo = await store.create_conversation()
    got = await store.append_many(
        convo.id, [Message.user("x", id="x"), Message.user("x twice", id="x")]
    )
    assert got[0] == got[1]
    assert await _stored_ids(store, convo.id) == ["x"]


async def test_an_edit_keeps_its_id_and_a_retry_still_finds_the_message(store: Store) -> None:
    convo = await store.create_conversation()
    first = await store.append(convo.id, Message.user("v0", id="e"))
    await store.edit_message(convo.id, 1, Message.user("v1", id="e"))
    again = await store.append(convo.id, Message.user("v0", id="e"))
    assert again.pk == first.pk
    assert len(await store.stored_messages(convo.id, all_versions=True)) == 2


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batches=st.lists(st.lists(st.sampled_from("abcdefg"), max_size=4), max_size=6))
async def test_any_appends_store_each_id_once_in_order(
    store: Store, batches: list[list[str]]
) -> None:
    """Whatever the batches, each id is stored once, in the order it was first sent, and the
    sequence numbers run 1..n without a gap."""
    convo = await store.create_conversation()
    for batch in batches:
        await store.append_many(convo.id, [Message.user(k, id=k) for k in batch])
    first_seen = list(dict.fromkeys(k for batch in batches for k in batch))
    stored = await store.stored_messages(convo.id)
    assert [m.message.id for m in stored] == first_seen
    assert [m.seq for m in stored] == list(range(1, len(first_seen) + 1))


async def test_duplicates_stored_before_0006_survive_the_upgrade(empty_url: str) -> None:
    """A database where an id was stored twice (the race before this revision): the upgrade
    keeps both rows, and an append of that id returns the earliest."""
    store = Store(empty_url)
    await store.open()
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("first copy", id="dup"))
    await store.append(convo.id, Message.user("other", id="other"))

    async with store.engine.begin() as conn:
        await conn.run_sync(downgrade_to("0005"))
        await conn.execute(
            text(
                "INSERT INTO messages (conversation_id, session_id, seq, version, message_id,"
                " role, parts, status, created_at) SELECT conversation_id, session_id, 3, 0,"
                " message_id, role, :parts, status, created_at FROM messages"
                " WHERE message_id = 'dup'"
            ),
            {"parts": '[{"type": "text", "text": "second copy"}]'},
        )
        await conn.execute(text("UPDATE conversations SET next_seq = 4"))
    await store.close()
    assert await upgrade(empty_url) == "upgraded"
    again = Store(empty_url)
    try:
        await again.open()
        texts = [m.message.text for m in await again.stored_messages(convo.id)]
        assert texts == ["first copy", "other", "second copy"]  # nothing lost
        retried = await again.append(convo.id, Message.user("retry", id="dup"))
        assert (retried.seq, retried.message.text) == (1, "first copy")
        fresh = await again.append(convo.id, Message.user("new", id="new"))
        assert fresh.seq == 4
    finally:
        await again.close()
