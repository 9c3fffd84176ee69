"""The append path's rows (``abridged.store.appender``): SQLite inserts them one at a time
through a statement naming its columns, so every column ``encode`` and ``place`` fill must be
one of them, or SQLite would drop it where PostgreSQL (Core's multi-row insert) keeps it; on
PostgreSQL an append is one statement, placed and checked as the transaction placed them."""

from __future__ import annotations

import pytest

from abridged.core.model import Message, Usage
from abridged.errors import NotFoundError, OwnershipError
from abridged.store import Store, appender, codec
from abridged.store.records import NewMessage


def test_the_row_statement_binds_every_column_a_row_has() -> None:
    message = Message.assistant("ok").replace(usage=Usage(input=10, output=2))
    rows = appender.encode([NewMessage(message, model="m", ttft_ms=1.0)], "c1", codec.now())
    appender.place(rows, {"next_seq": 5, "current_session_id": "s1"}, delivered=1)
    bound = set(appender._INSERT_ONE.compile().params)
    assert set(rows[0]) == bound
    assert rows[0]["seq"] == 4 and rows[0]["session_id"] == "s1"


# -- an append in one statement (PostgreSQL) ---------------------------------------------------


async def test_delivered_and_queued_rows_of_one_batch_are_placed_as_before(store: Store) -> None:
    # On PostgreSQL the batch is one statement whose rows take their places from the
    # reservation it makes: delivered rows in order, queued ones without a number.
    convo = await store.create_conversation(owner="acme")
    await store.append(convo.id, Message.user("first", id="u0"), owner="acme")
    batch = [
        NewMessage(Message.assistant("a", id="a1")),
        NewMessage(Message.user("queued", id="q1"), status="queued"),
        NewMessage(Message.assistant("b", id="a2")),
    ]
    got = await store.append_many(convo.id, batch, owner="acme")
    assert [(g.message.id, g.seq, g.status) for g in got] == [
        ("a1", 2, "delivered"),
        ("q1", None, "queued"),
        ("a2", 3, "delivered"),
    ]
    stored = await store.stored_messages(convo.id)
    assert [(m.message.id, m.seq) for m in stored] == [
        ("u0", 1),
        ("a1", 2),
        ("a2", 3),
        ("q1", None),
    ]
    assert {m.session_id for m in stored} == {convo.current_session_id}
    assert (await store.deliver(convo.id, owner="acme"))[0].seq == 4


async def test_another_owners_append_stores_nothing_and_reserves_nothing(store: Store) -> None:
    convo = await store.create_conversation(owner="acme")
    with pytest.raises(OwnershipError):
        await store.append(convo.id, Message.user("x", id="x"), owner="globex")
    with pytest.raises(NotFoundError):
        await store.append("no-such-conversation", Message.user("x", id="x"), owner="acme")
    assert await store.stored_messages(convo.id) == []
    assert (await store.append(convo.id, Message.user("y", id="y"), owner="acme")).seq == 1


async def test_rows_without_ids_chosen_are_placed_in_order(store: Store) -> None:
    # Content-derived ids carry no idempotency key: in one statement they are found by their
    # numbers, which rise in the order of the rows.
    convo = await store.create_conversation()
    texts = [f"step {i}" for i in range(5)]
    got = await store.append_many(convo.id, [Message.user(t) for t in texts])
    assert [(g.message.text, g.seq) for g in got] == [(t, i + 1) for i, t in enumerate(texts)]
    stored = await store.stored_messages(convo.id)
    assert [(m.pk, m.message.text) for m in stored] == [(g.pk, g.message.text) for g in got]
