"""Appending, delivering, editing and reading messages; bad data and typed errors."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select, text, update

from abridged.core.model import Message, Reasoning, ToolCall, Usage
from abridged.errors import CorruptRowError, NotFoundError, OwnershipError
from abridged.store import NewMessage, Store
from abridged.store.schema import conversations, messages

from .helpers import texts, turn


async def test_append_keeps_usage_timings_model_and_order(store: Store) -> None:
    convo = await store.create_conversation(owner="ann", model="m1", settings={"k": 1})
    await store.append(convo.id, Message.user("hi"))
    reply = Message.assistant(
        "hello",
        reasoning=[Reasoning("think", signature="sig", provider="anthropic")],
        tool_calls=[ToolCall("c1", "read", '{"path": "a"}')],
        usage=Usage(input=10, output=5, cache_read=100, cache_write=7, reasoning=3),
        meta={"x": [1, 2]},
    )
    stored = await store.append(convo.id, reply, model="m1", ttft_ms=12.5, total_ms=80.0)
    assert stored.seq == 2 and stored.status == "delivered"
    context = await store.load_context(convo.id)
    assert [m.seq for m in context.messages] == [1, 2]
    got = context.messages[1]
    assert got.message == reply
    assert got.message.id == reply.id
    assert got.usage == Usage(input=10, output=5, cache_read=100, cache_write=7, reasoning=3)
    assert (got.model, got.ttft_ms, got.total_ms) == ("m1", 12.5, 80.0)
    assert context.messages[0].usage is None
    assert context.conversation.settings == {"k": 1}
    async with store.engine.connect() as conn:
        row = (
            (await conn.execute(select(messages).where(messages.c.pk == stored.pk)))
            .mappings()
            .one()
        )
    assert (row["cache_read_tokens"], row["cache_write_tokens"], row["reasoning_tokens"]) == (
        100,
        7,
        3,
    )


async def test_append_many_is_one_ordered_batch(store: Store) -> None:
    convo = await store.create_conversation()
    batch = [m for i in range(20) for m in turn(i)]
    stored = await store.append_many(convo.id, batch)
    assert [s.seq for s in stored] == list(range(1, 61))
    context = await store.load_context(convo.id)
    assert [m.message for m in context.messages] == batch
    more = await store.append_many(
        convo.id, [NewMessage(Message.user("x"), model="m"), Message.user("y")]
    )
    assert [m.seq for m in more] == [61, 62]
    assert await store.append_many(convo.id, []) == []


async def test_queued_messages_join_on_delivery(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("question"))
    queued = await store.append(convo.id, Message.user("also this"), status="queued")
    assert queued.seq is None and queued.status == "queued"
    await store.append(convo.id, Message.assistant("answer"))
    context = await store.load_context(convo.id)
    assert texts(context.to_messages()) == ["question", "answer"]
    assert [q.message.text for q in context.queued] == ["also this"]
    delivered = await store.deliver(convo.id)
    assert [(d.seq, d.status) for d in delivered] == [(3, "delivered")]
    context = await store.load_context(convo.id)
    assert texts(context.to_messages()) == ["question", "answer", "also this"]
    assert context.queued == ()
    assert await store.deliver(convo.id) == []


async def test_edit_stores_a_new_version_and_keeps_the_old(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user("a"), Message.assistant("b")])
    version = (await store.open_conversation(convo.id)).version
    edited = await store.edit_message(convo.id, 2, Message.assistant("b2"))
    assert (edited.seq, edited.version) == (2, 1)
    context = await store.load_context(convo.id)
    assert texts(context.to_messages()) == ["a", "b2"]
    assert context.version == version + 1  # through the single writer
    every = await store.stored_messages(convo.id, all_versions=True)
    assert [(m.seq, m.version, m.message.text) for m in every] == [
        (1, 0, "a"),
        (2, 0, "b"),
        (2, 1, "b2"),
    ]
    assert (await store.get_message(convo.id, 2, version=0)).message.text == "b"
    # Not covered by any summary: no re-summarisation mark.
    assert context.conversation.resummarize_from is None
    with pytest.raises(NotFoundError):
        await store.edit_message(convo.id, 99, Message.user("nope"))


async def test_missing_conversation_is_a_typed_error(store: Store) -> None:
    with pytest.raises(NotFoundError) as info:
        await store.append("nope", Message.user("x"))
    assert info.value.context["conversation_id"] == "nope"
    with pytest.raises(NotFoundError):
        await store.load_context("nope")
    with pytest.raises(NotFoundError):
        await store.append_many("nope", [Message.user("x")])
    async with store.engine.connect() as conn:
        assert (await conn.execute(select(messages))).first() is None


async def test_owner_mismatch_changes_nothing(store: Store) -> None:
    convo = await store.create_conversation(owner="ann")
    await store.append(convo.id, Message.user("mine"), owner="ann")
    before = await store.open_conversation(convo.id)
    for call in (
        store.append(convo.id, Message.user("theirs"), owner="bob"),
        store.append_many(convo.id, [Message.user("theirs")], owner="bob"),
        store.load_context(convo.id, owner="bob"),
        store.edit_message(convo.id, 1, Message.user("x"), owner="bob"),
        store.new_session(convo.id, owner="bob"),
        store.delete_conversation(convo.id, owner="bob"),
        store.set_prune_boundary(convo.id, 1, owner="bob"),
    ):
        with pytest.raises(OwnershipError) as info:
            await call
        assert info.value.context["conversation_id"] == convo.id
    after = await store.open_conversation(convo.id)
    assert (after.version, after.next_seq, after.current_session_id) == (
        before.version,
        before.next_seq,
        before.current_session_id,
    )
    assert texts([m.message for m in await store.stored_messages(convo.id)]) == ["mine"]
    assert [c.id for c in await store.list_conversations(owner="bob")] == []
    assert [c.id for c in await store.list_conversations(owner="ann")] == [convo.id]


async def test_every_read_checks_the_owner(store: Store) -> None:
    convo = await store.create_conversation(owner="ann")
    stored = await store.append(convo.id, Message.user("mine"), owner="ann")
    session = convo.current_session_id
    reads = {
        "open_conversation": lambda o: store.open_conversation(convo.id, owner=o),
        "get_message": lambda o: store.get_message(convo.id, 1, owner=o),
        "find_message": lambda o: store.find_message(convo.id, stored.message.id, owner=o),
        "stored_messages": lambda o: store.stored_messages(convo.id, owner=o),
        "history": lambda o: store.history(convo.id, owner=o),
        "load_context": lambda o: store.load_context(convo.id, owner=o),
        "compactions": lambda o: store.compactions(convo.id, owner=o),
        "list_sessions": lambda o: store.list_sessions(convo.id, owner=o),
        "get_session": lambda o: store.get_session(convo.id, session, owner=o),
        "turn_lease": lambda o: store.turn_lease(convo.id, owner=o),
    }
    for name, read in reads.items():
        await read("ann")  # the owner reads
        with pytest.raises(OwnershipError) as info:
            await read("bob")
        assert info.value.context["conversation_id"] == convo.id, name


@pytest.mark.parametrize("parts", ["{not json", '[{"type": "hologram"}]', '{"type": "text"}'])
async def test_corrupt_row_names_conversation_and_message(store: Store, parts: str) -> None:
    bad = await store.create_conversation()
    good = await store.create_conversation()
    await store.append_many(bad.id, [Message.user(f"m{i}") for i in range(5)])
    await store.append_many(good.id, [Message.user(f"g{i}") for i in range(3)])
    target = (await store.get_message(bad.id, 3)).message.id
    async with store.engine.begin() as conn:
        await conn.execute(
            update(messages)
            .where(messages.c.conversation_id == bad.id, messages.c.seq == 3)
            .values(parts=parts)
        )
    with pytest.raises(CorruptRowError) as info:
        await store.get_message(bad.id, 3)
    assert (await store.load_context(bad.id)).damaged[0].context == info.value.context
    assert info.value.context["conversation_id"] == bad.id
    assert info.value.context["seq"] == 3
    assert info.value.context["message_id"] == target
    assert bad.id in str(info.value)
    # Everything else stays readable.
    rest = await store.stored_messages(bad.id, skip_corrupt=True)
    assert [m.message.text for m in rest] == ["m0", "m1", "m3", "m4"]
    assert (await store.get_message(bad.id, 4)).message.text == "m3"
    assert texts((await store.load_context(good.id)).to_messages()) == ["g0", "g1", "g2"]
    with pytest.raises(CorruptRowError):
        await store.stored_messages(bad.id)


async def test_rows_are_never_rewritten_by_appends(store: Store) -> None:
    convo = await store.create_conversation()
    first = await store.append(convo.id, Message.user("one"))
    async with store.engine.connect() as conn:
        before = (await conn.execute(select(messages))).mappings().all()
    await store.append_many(convo.id, [Message.user(str(i)) for i in range(10)])
    async with store.engine.connect() as conn:
        after = (
            (await conn.execute(select(messages).where(messages.c.pk == first.pk))).mappings().all()
        )
        next_seq = (
            await conn.execute(
                select(conversations.c.next_seq).where(conversations.c.id == convo.id)
            )
        ).scalar()
    assert [dict(r) for r in after] == [dict(before[0])]
    assert next_seq == 12


async def test_bad_arguments(store: Store) -> None:
    convo = await store.create_conversation()
    with pytest.raises(Exception, match="status"):
        await store.append(convo.id, NewMessage(Message.user("x"), status="lost"))  # type: ignore[arg-type]
    with pytest.raises(Exception, match="exists"):
        await store.create_conversation(convo.id)
    assert (await store.open_conversation(convo.id)).next_seq == 1


async def test_sql_injection_is_just_text(store: Store) -> None:
    convo = await store.create_conversation(owner="x'; DROP TABLE messages; --")
    await store.append(convo.id, Message.user("'); DELETE FROM conversations; --"))
    assert texts((await store.load_context(convo.id)).to_messages())[0].startswith("');")
    async with store.engine.connect() as conn:
        assert (await conn.execute(text("SELECT count(*) FROM conversations"))).scalar() == 1


async def test_lone_surrogates_are_stored_and_read_back_equal(store: Store) -> None:
    # a lone surrogate is a valid JSON escape a provider or a tool can send: kept as given
    odd = "before \ud800 middle \udfff after"
    convo = await store.create_conversation()
    batch = [
        Message.user(odd, meta={"note": odd}),
        Message.assistant(
            odd,
            reasoning=[Reasoning(odd, signature="sig", provider="anthropic")],
            tool_calls=[ToolCall("c1", "read", '{"path": "\\ud800"}')],
        ),
        Message.tool("c1", odd, name="read"),
    ]
    await store.append(convo.id, batch[0])
    await store.append_many(convo.id, batch[1:])
    context = await store.load_context(convo.id)
    assert [m.message for m in context.messages] == batch
    assert context.messages[0].message.text == odd
    assert [m.message.fingerprint for m in context.messages] == [m.fingerprint for m in batch]


async def test_concurrent_deliveries_give_each_queued_message_one_sequence_number(
    db_url: str,
) -> None:
    """Several workers deliver the same queue at once (each its own store and connections):
    every queued message is delivered once, the numbers have no gap, none is reserved twice."""
    stores = [Store(db_url) for _ in range(3)]
    try:
        convo = await stores[0].create_conversation()
        await stores[0].append(convo.id, Message.user("first"))
        expected = 1
        for round_ in range(8):
            for k in range(4):
                await stores[0].append(convo.id, Message.user(f"q{round_}.{k}"), status="queued")
            results = await asyncio.gather(*(s.deliver(convo.id) for s in stores))
            seqs = sorted(m.seq for batch in results for m in batch if m.seq is not None)
            assert seqs == list(range(expected + 1, expected + 5)), (round_, seqs)
            expected += 4
            info = await stores[0].open_conversation(convo.id)
            assert info.next_seq == expected + 1
        delivered = await stores[0].stored_messages(convo.id)
        assert [m.seq for m in delivered] == list(range(1, expected + 1))
    finally:
        for s in stores:
            await s.close()


async def test_ensure_conversation_makes_a_named_one_once(db_url: str) -> None:
    """Two processes asking for the same named conversation at once both get it, made once."""
    stores = [Store(db_url) for _ in range(2)]
    try:
        made = await asyncio.gather(
            *(s.ensure_conversation("named-1", owner="ann", model="m") for s in stores)
        )
        assert {m.id for m in made} == {"named-1"} and made[0].model == "m"
        again = await stores[0].ensure_conversation("named-1", owner="ann", settings={"x": 1})
        assert again.settings == {} and again.created_at == made[0].created_at
        assert [c.id for c in await stores[0].list_conversations(owner="ann")] == ["named-1"]
        with pytest.raises(OwnershipError):
            await stores[1].ensure_conversation("named-1", owner="bob")
    finally:
        for s in stores:
            await s.close()
