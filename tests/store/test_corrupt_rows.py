"""Corrupt rows are isolated: a row that cannot be decoded costs that row (``skip_corrupt``, a
listing, a search), never the whole query, and every decoding failure is a ``CorruptRowError``
naming the conversation and the row. Rows are damaged by raw SQL, as a bad disk, a foreign tool
or an old bug would leave them (SQLite keeps any value in any column; PostgreSQL only text)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from abridged.core.model import Message
from abridged.errors import CorruptRowError
from abridged.store import FinalizeRequest, Store, StoredSummary, codec
from abridged.store.records import StoredMessage

from .helpers import keep_last, texts, turn

DEEP = "[" * 50_000 + "]" * 50_000
# (column, value, whether PostgreSQL's column type can hold the value at all)
MESSAGE_DAMAGE = [
    ("created_at", "not a date", False),
    ("version", "x", False),
    ("parts", "[1", True),
    ("parts", DEEP, True),
    ("parts", '[{"type": "text"}]', True),  # a KeyError in the decoder
    ("parts", "[null]", True),  # a TypeError in the decoder
    ("meta", "{bad", True),
    ("meta", "1e999", True),
    ("input_tokens", "x", False),
    ("status", "bogus", True),  # not a delivery status: the row cannot say where it belongs
]


def _ids(value: tuple[str, str, bool]) -> str:
    return f"{value[0]}={value[1][:12]}"


async def damage(store: Store, table: str, column: str, value: str, **where: Any) -> None:
    """Write ``value`` into ``column`` with raw SQL, past every type the store would apply."""
    condition = " AND ".join(f"{k} = :{k}" for k in where)
    async with store.engine.begin() as conn:
        result = await conn.execute(
            text(f"UPDATE {table} SET {column} = :value WHERE {condition}"),
            {"value": value, **where},
        )
    assert result.rowcount == 1


def _fits(store: Store, on_postgres: bool) -> None:
    if store.dialect == "postgresql" and not on_postgres:
        pytest.skip("PostgreSQL's column type cannot hold this value")


@pytest.mark.parametrize("damaged", MESSAGE_DAMAGE, ids=_ids)
async def test_a_bad_message_row_costs_only_that_row(
    store: Store, damaged: tuple[str, str, bool]
) -> None:
    column, value, on_postgres = damaged
    _fits(store, on_postgres)
    bad = await store.create_conversation()
    good = await store.create_conversation()
    await store.append_many(bad.id, [Message.user(f"m{i}") for i in range(5)])
    await store.append_many(good.id, [Message.user("g")])
    target = (await store.get_message(bad.id, 3)).message.id
    await damage(store, "messages", column, value, conversation_id=bad.id, seq=3)

    rest = await store.stored_messages(bad.id, skip_corrupt=True)
    assert [m.message.text for m in rest] == ["m0", "m1", "m3", "m4"]
    assert (await store.get_message(bad.id, 4)).message.text == "m3"
    for call in (
        store.stored_messages(bad.id),
        store.history(bad.id),
        store.get_message(bad.id, 3),
    ):
        with pytest.raises(CorruptRowError) as info:
            await call
        assert info.value.context["conversation_id"] == bad.id
        assert info.value.context["seq"] == 3
        assert info.value.context["message_id"] == target
    # the context degrades: a placeholder in the row's place and the typed error with it
    context = await store.load_context(bad.id)
    (error,) = context.damaged
    assert error.context["conversation_id"] == bad.id and error.context["seq"] == 3
    sent = texts(context.to_messages())
    assert sent[:2] + sent[3:] == ["m0", "m1", "m3", "m4"]
    assert "could not be read" in sent[2]
    assert context.messages[2].message.meta["kind"] == "damaged"
    assert texts((await store.load_context(good.id)).to_messages()) == ["g"]


CONVERSATION_DAMAGE = [
    ("settings", "{bad", True),
    ("settings", "[1, 2]", True),
    ("settings", DEEP, True),
    ("created_at", "not a date", False),
    ("updated_at", "2024-13-45 99:99:99", False),
    ("version", "x", False),
    ("next_seq", "x", False),
]


@pytest.mark.parametrize("damaged", CONVERSATION_DAMAGE, ids=_ids)
async def test_a_bad_conversation_row_is_left_out_of_listings(
    store: Store, damaged: tuple[str, str, bool]
) -> None:
    column, value, on_postgres = damaged
    _fits(store, on_postgres)
    first = await store.create_conversation(owner="ann")
    bad = await store.create_conversation(owner="ann")
    last = await store.create_conversation(owner="ann")
    other = await store.create_conversation(owner="bob")
    await damage(store, "conversations", column, value, id=bad.id)

    assert {c.id for c in await store.list_conversations(owner="ann")} == {first.id, last.id}
    assert {c.id for c in await store.list_conversations()} == {first.id, last.id, other.id}
    for call in (store.open_conversation(bad.id), store.load_context(bad.id)):
        with pytest.raises(CorruptRowError) as info:
            await call
        assert info.value.context["conversation_id"] == bad.id
    # A writer either works (it does not need the damaged column) or names the row.
    try:
        await store.new_session(bad.id)
    except CorruptRowError as exc:
        assert exc.context["conversation_id"] == bad.id
    assert (await store.open_conversation(first.id)).id == first.id
    # A person can still delete it.
    await store.delete_conversation(bad.id)
    assert {c.id for c in await store.list_conversations(owner="ann")} == {first.id, last.id}


SESSION_DAMAGE = [
    ("created_at", "not a date", False),
    ("finalized_at", "yesterday", False),
    ("number", "x", False),
    ("carry_from", "x", False),
    ("message_count", "x", False),
]


@pytest.mark.parametrize("damaged", SESSION_DAMAGE, ids=_ids)
async def test_a_bad_session_row_names_its_session(
    store: Store, damaged: tuple[str, str, bool]
) -> None:
    column, value, on_postgres = damaged
    _fits(store, on_postgres)
    convo = await store.create_conversation()
    good = await store.create_conversation()
    await store.append(convo.id, Message.user("hi"))
    first = (await store.load_context(convo.id)).session.id
    await store.new_session(convo.id, summarize=_summary)
    await store.drain()
    await damage(store, "sessions", column, value, id=first)

    for call in (store.list_sessions(convo.id), store.get_session(convo.id, first)):
        with pytest.raises(CorruptRowError) as info:
            await call
        assert info.value.context["conversation_id"] == convo.id
        assert info.value.context["session_id"] == first
    assert len(await store.list_sessions(good.id)) == 1


async def _summary(request: FinalizeRequest) -> StoredSummary:
    words = " ".join(m.text for m in request.messages if m.text)
    return StoredSummary(f"summary: {words}", {"n": len(request.messages)})


SUMMARY_DAMAGE = [
    ("meta", "{bad", True),
    ("meta", DEEP, True),
    ("embedding", "[0.1,", True),
    ("embedding", '{"x": 1}', True),
    ("carried_seqs", "[1", True),
    ("file_ops", '{"read": 5}', True),
    ("covers_to_seq", "x", False),
    ("created_at", "not a date", False),
]


@pytest.mark.parametrize("damaged", SUMMARY_DAMAGE, ids=_ids)
async def test_search_skips_a_bad_summary_and_listings_name_it(
    store: Store, damaged: tuple[str, str, bool]
) -> None:
    column, value, on_postgres = damaged
    _fits(store, on_postgres)
    convo = await store.create_conversation(owner="ann")
    for topic in ("alembic migration", "alembic upgrade", "alembic schema"):
        await store.append(convo.id, Message.user(topic), owner="ann")
        await store.new_session(convo.id, summarize=_summary, owner="ann")
        await store.drain()
    sessions = await store.list_sessions(convo.id)
    victim = sessions[1].final_summary
    assert victim is not None and victim.id is not None
    await damage(store, "summaries", column, value, id=victim.id)

    hits = await store.search("alembic", owner="ann")
    if column == "created_at":  # a column search does not read: the hit stays
        assert len(hits) == 3
    else:
        assert {h.session_id for h in hits} == {sessions[0].id, sessions[2].id}
    if column in ("embedding", "created_at"):  # columns a listing does not read
        assert len(await store.list_sessions(convo.id)) == 4
        return
    for call in (store.list_sessions(convo.id), store.get_session(convo.id, sessions[1].id)):
        with pytest.raises(CorruptRowError) as info:
            await call
        assert info.value.context["conversation_id"] == convo.id
        assert info.value.context["summary_id"] == victim.id


COMPACTION_DAMAGE = [
    ("file_ops", "{bad", True),
    ("created_at", "not a date", False),
    ("duration_ms", "x", False),
    ("tokens_before", "x", False),
]


@pytest.mark.parametrize("damaged", COMPACTION_DAMAGE, ids=_ids)
async def test_a_bad_compaction_row_names_it(store: Store, damaged: tuple[str, str, bool]) -> None:
    column, value, on_postgres = damaged
    _fits(store, on_postgres)
    convo = await store.create_conversation()
    await store.append_many(convo.id, [m for i in range(3) for m in turn(i)])
    outcome = await store.commit_compaction(convo.id, keep_last(3))
    assert outcome.status == "committed"
    (compaction,) = await store.compactions(convo.id)
    await damage(store, "compactions", column, value, id=compaction.id)
    with pytest.raises(CorruptRowError) as info:
        await store.compactions(convo.id)
    assert info.value.context["conversation_id"] == convo.id
    assert info.value.context["compaction_id"] == compaction.id
    # The context does not read compaction rows: it still loads.
    assert len((await store.load_context(convo.id)).messages) == 3


PRUNED_DAMAGE = [
    ("parts", "[1"),  # a ValueError
    ("parts", DEEP),  # a RecursionError
    ("parts", "[null]"),  # a TypeError in the decoder
    ("parts", '[{"type": "text"}]'),  # a KeyError in the decoder
    ("meta", "{bad"),
    ("meta", "[1, 2]"),  # not an object
]


@pytest.mark.parametrize("damaged", PRUNED_DAMAGE, ids=lambda d: f"{d[0]}={d[1][:12]}")
async def test_any_bad_pruned_form_costs_only_the_prune(
    store: Store, damaged: tuple[str, str]
) -> None:
    """Whatever exception a damaged pruned form raises in the decoder, the context loads with
    the original message (a decoding guard narrowed to one exception type fails here)."""
    column, value = damaged
    convo = await store.create_conversation()
    await store.append_many(convo.id, turn(0) + turn(1))
    await store.set_prune_boundary(
        convo.id, 4, pruned={3: Message.tool("call-0", "[pruned]", name="read")}
    )
    assert set((await store.load_context(convo.id)).pruned) == {3}
    await damage(store, "pruned_outputs", column, value, conversation_id=convo.id)
    context = await store.load_context(convo.id)
    assert context.pruned == {}
    assert context.damaged == ()
    assert texts(context.to_messages())[2] == "contents of f0.py"


async def test_a_bad_pruned_form_costs_only_the_prune(store: Store) -> None:
    _fits(store, False)
    convo = await store.create_conversation()
    await store.append_many(convo.id, turn(0) + turn(1))
    pruned = Message.tool("call-0", "[pruned]", name="read")
    await store.set_prune_boundary(convo.id, 4, pruned={3: pruned})
    assert set((await store.load_context(convo.id)).pruned) == {3}
    await damage(store, "pruned_outputs", "created_at", "not a date", conversation_id=convo.id)
    assert set((await store.load_context(convo.id)).pruned) == {3}  # the date is not read
    await damage(store, "pruned_outputs", "parts", "[1", conversation_id=convo.id)
    context = await store.load_context(convo.id)
    assert context.pruned == {}
    assert len(context.messages) == 6


# -- the column decoders, fuzzed: whatever a column holds, the answer is a value or a
#    CorruptRowError (never a JSONDecodeError, RecursionError, OverflowError ...)

HOSTILE_TEXT = st.one_of(
    st.text(),
    st.sampled_from(
        [
            "\ud800",
            '"\\ud800"',
            "\u202e",
            "\u200b",
            "＜/conversation＞",
            "[1",
            "{bad",
            "1e999",
            "-1e999",
            "NaN",
            "null",
            "[]",
            "{}",
            '{"a": [1, 2]}',
            DEEP,
            "[" * 2000,
            "2024-01-01 00:00:00",
            "2024-01-01T00:00:00+00:00",
            "not a date",
            "x" * 100_000,
        ]
    ),
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
COLUMN = st.one_of(
    st.none(),
    st.integers(),
    st.floats(),
    HOSTILE_TEXT,
    JSONISH.map(codec.dumps),
)


def _row(draw: st.DrawFn, names: list[str]) -> dict[str, Any]:
    return {name: draw(COLUMN) for name in names}


MESSAGE_COLUMNS = [
    "pk",
    "conversation_id",
    "session_id",
    "seq",
    "version",
    "message_id",
    "role",
    "parts",
    "meta",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "model",
    "ttft_ms",
    "total_ms",
    "status",
    "created_at",
]


@st.composite
def message_rows(draw: st.DrawFn) -> dict[str, Any]:
    good = codec.message_columns(Message.user("hello"))
    row: dict[str, Any] = {
        **good,
        "pk": 1,
        "conversation_id": "c",
        "session_id": "s",
        "seq": 1,
        "version": 0,
        "model": None,
        "ttft_ms": None,
        "total_ms": None,
        "status": "delivered",
        "created_at": "2024-01-01 00:00:00",
    }
    for name in draw(st.lists(st.sampled_from(MESSAGE_COLUMNS), max_size=4)):
        row[name] = draw(COLUMN)
    return row


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(message_rows())
def test_fuzz_message_rows_decode_or_raise_corrupt_row(row: dict[str, Any]) -> None:
    try:
        decoded = codec.stored_message(row)  # type: ignore[arg-type]
    except CorruptRowError as exc:
        assert "conversation_id" in exc.context or row["conversation_id"] is None
        return
    assert isinstance(decoded, StoredMessage)


@FUZZ
@given(st.data())
def test_fuzz_other_rows_decode_or_raise_corrupt_row(data: st.DataObject) -> None:
    conversation = {
        "id": "c",
        "owner": None,
        "model": None,
        "settings": "{}",
        "version": 0,
        "next_seq": 1,
        "current_session_id": "s",
        "prune_boundary": 0,
        "resummarize_from": None,
        "created_at": "2024-01-01 00:00:00",
        "updated_at": "2024-01-01 00:00:00",
    }
    summary = {
        "id": "m",
        "conversation_id": "c",
        "text": "summary",
        "meta": "{}",
        "carried_seqs": "[]",
        "file_ops": "{}",
        "covers_to_seq": 3,
    }
    session = {
        "id": "s",
        "conversation_id": "c",
        "number": 1,
        "parent_id": None,
        "reason": "start",
        "carry_from": 1,
        "start_seq": 1,
        "finalized_at": None,
        "message_count": None,
        "created_at": "2024-01-01 00:00:00",
        **{f"{f}_tokens": None for f in ("input", "output", "cache_read", "cache_write")},
        "reasoning_tokens": None,
    }
    for row in (conversation, summary, session):
        for name in data.draw(st.lists(st.sampled_from(sorted(row)), max_size=3)):
            row[name] = data.draw(COLUMN)
    for decode, row in (
        (codec.conversation_info, conversation),
        (codec.summary, summary),
        (lambda r: codec.session_info(r, start=None, final=None, current_id="s"), session),
    ):
        with contextlib.suppress(CorruptRowError):
            decode(row)
