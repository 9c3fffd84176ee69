"""The model calls kept for the call inspector (``abridged.store.calls``, migration 0008): each
kind of reference reads back as the message that was sent (a stored message in the version of
the call's time, its pruned form, a summary, a copy), numbering goes on across writes, another
owner reads nothing, and a database from before the revision keeps its rows and takes calls
after the upgrade. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import text

from abridged.core.model import Message, Text, ToolResult, message_to_dict
from abridged.core.summary import summary_message
from abridged.errors import NotFoundError, OwnershipError
from abridged.store import CallEntry, SentRef, Store, codec, upgrade
from abridged.store.calls import _decode, _encode, encode_sent, reference

from .helpers import downgrade_to, keep_last, turn


def _entry(sent: list[Message], section: str = "kept") -> CallEntry:
    refs = tuple(reference(m, section=section, tokens=7, cached=False) for m in sent)
    return CallEntry(
        epoch=0, estimate=7 * len(sent), tools=3, usage=None, retry=False, ok=True, sent=refs
    )


def _pruned(message: Message) -> Message:
    result = message.tool_results[0]
    placeholder = ToolResult(result.call_id, result.name, (Text("[tool output pruned]"),))
    return message.replace(parts=(placeholder,), meta={"pruned": {result.call_id: {"chars": 20}}})


async def test_every_kind_of_reference_reads_back_as_it_was_sent(store: Store) -> None:
    info = await store.create_conversation(owner="acme")
    cid = info.id
    for i in range(3):
        await store.append_many(cid, turn(i), owner="acme")
    stored = [s.message for s in await store.stored_messages(cid, owner="acme")]
    tool = stored[2]
    await store.set_prune_boundary(cid, 4, pruned={3: _pruned(tool)}, owner="acme")
    await store.commit_compaction(cid, keep_last(3), owner="acme")
    summary = (await store.compactions(cid, owner="acme"))[0].record.summary
    clipped = stored[5].replace(meta={"clipped": {"chars": 900, "tokens": 300}})
    damaged = stored[7].replace(parts=(Text("[damaged row]"),), meta={"kind": "damaged"})
    sent = [
        Message.system("Be brief."),
        summary_message(summary.text),
        _pruned(tool),
        stored[4],
        clipped,
        stored[6],
        damaged,
    ]
    entry = _entry(sent)
    kinds = [
        ("copy" if r.copy else "summary" if r.summary else "pruned" if r.pruned else "message")
        for r in entry.sent
    ]
    assert kinds == ["copy", "summary", "pruned", "message", "copy", "message", "copy"]
    assert await store.record_calls(cid, [entry, _entry(sent[:1])], owner="acme") == [0, 1]
    assert await store.record_calls(cid, [_entry(sent[-1:])], owner="acme") == [2]

    call = await store.get_call(cid, 0, owner="acme")
    assert (call.number, call.tools, call.estimate, call.sent) == (0, 3, 49, entry.sent)
    back = await store.sent_messages(cid, call, owner="acme")
    assert [message_to_dict(m) for m in back] == [message_to_dict(m) for m in sent]

    # an edit made after the call: the call sent the version before it
    await store.edit_message(cid, 5, stored[4].replace(parts=(Text("edited later"),)), owner="acme")
    again = await store.sent_messages(cid, call, owner="acme")
    assert again[3].text == stored[4].text != "edited later"

    assert [c.number for c in await store.list_calls(cid, owner="acme", limit=2)] == [1, 2]
    assert await store.call_count(cid, owner="acme") == 3
    with pytest.raises(NotFoundError):
        await store.get_call(cid, 3, owner="acme")
    with pytest.raises(OwnershipError):
        await store.list_calls(cid, owner="globex")
    with pytest.raises(OwnershipError):
        await store.record_calls(cid, [entry], owner="globex")
    assert await store.call_count(cid, owner="acme") == 3


async def test_what_was_deleted_or_damaged_since_reads_as_a_placeholder(store: Store) -> None:
    cid = (await store.create_conversation()).id
    kept = (await store.append(cid, Message.user("stored, then damaged", id="m-kept"))).message
    gone = Message.user("never stored", id="m-gone")
    await store.record_calls(cid, [_entry([gone, kept])])
    async with store.engine.begin() as conn:
        await conn.execute(text("UPDATE messages SET parts = '{' WHERE message_id = 'm-kept'"))
    back = await store.sent_messages(cid, await store.get_call(cid, 0))
    assert ["no longer stored" in m.text for m in back] == [True, True]
    assert "m-gone" in back[0].text and "m-kept" in back[1].text


async def test_calls_go_with_their_conversation(store: Store) -> None:
    cid = (await store.create_conversation()).id
    await store.record_calls(cid, [_entry([Message.system("s")])])
    await store.delete_conversation(cid)
    other = (await store.create_conversation(cid)).id
    assert await store.list_calls(other) == []


refs = st.builds(
    SentRef,
    section=st.sampled_from(["system", "pinned", "summary", "pruned", "kept"]),
    tokens=st.integers(0, 10**7),
    cached=st.booleans(),
    message_id=st.none() | st.text(min_size=1, max_size=30),
    pruned=st.booleans(),
)


@given(refs, st.sampled_from(["message", "summary", "copy"]))
def test_a_reference_is_stored_and_read_back_unchanged(ref: SentRef, kind: str) -> None:
    if kind == "summary":
        ref = SentRef(ref.section, ref.tokens, ref.cached, summary="d" * 32)
    elif kind == "copy":
        ref = SentRef(ref.section, ref.tokens, ref.cached, copy=Message.user("x", id="i"))
    elif ref.message_id is None:
        ref = SentRef(ref.section, ref.tokens, ref.cached, message_id="m", pruned=ref.pruned)
    assert _decode(_encode(ref)) == ref


any_text = st.text(st.characters(blacklist_categories=()), max_size=12)  # lone surrogates too
any_ref = st.one_of(
    st.builds(
        SentRef,
        section=any_text,
        tokens=st.integers(0, 10**7),
        cached=st.booleans(),
        message_id=st.none() | any_text,
        pruned=st.booleans(),
    ),
    st.builds(
        SentRef, section=any_text, tokens=st.integers(0, 99), cached=st.booleans(), summary=any_text
    ),
    st.builds(
        SentRef,
        section=any_text,
        tokens=st.integers(0, 99),
        cached=st.booleans(),
        copy=st.builds(Message.user, any_text, id=st.just("i")),
    ),
)


@given(st.lists(any_ref, max_size=6))
def test_the_sent_column_is_the_json_of_its_references(sent: list[SentRef]) -> None:
    assert encode_sent(sent) == codec.dumps([_encode(r) for r in sent])


async def test_a_database_from_before_0008_keeps_its_rows_and_takes_calls(
    empty_url: str,
) -> None:
    store = Store(empty_url)
    await store.open()
    cid = (await store.create_conversation(owner="acme")).id
    await store.append_many(cid, turn(0), owner="acme")
    async with store.engine.begin() as conn:
        await conn.run_sync(downgrade_to("0007"))
    await store.close()
    assert await upgrade(empty_url) == "upgraded"
    again = Store(empty_url)
    try:
        texts = [m.message.text for m in await again.stored_messages(cid, owner="acme")]
        assert texts == [m.text for m in turn(0)]
        assert await again.list_calls(cid, owner="acme") == []
        first = (await again.stored_messages(cid, owner="acme"))[0].message
        await again.record_calls(cid, [_entry([first])], owner="acme")
        (back,) = await again.sent_messages(cid, await again.get_call(cid, 0, owner="acme"))
        assert message_to_dict(back) == message_to_dict(first)
    finally:
        await again.close()
