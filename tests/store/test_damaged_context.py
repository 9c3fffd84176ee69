"""A damaged message row costs that row, never the conversation: ``load_context`` sends a
placeholder in its place, reports the ``CorruptRowError`` in ``Context.damaged``, and keeps
the tool pairing valid whatever rows are damaged (a damaged call or result degrades its pair
together). A conversation whose current session is missing is damage, not a deleted one."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abridged.core.model import Message, ToolCall
from abridged.core.validate import validate_messages
from abridged.errors import CorruptRowError, NotFoundError
from abridged.store import Store

from .helpers import turn
from .test_corrupt_rows import damage


def _step(i: int, calls: int) -> list[Message]:
    """A user message, an assistant calling ``calls`` tools, their results (one message each)."""
    ids = [f"c{i}-{k}" for k in range(calls)]
    return [
        Message.user(f"request {i}"),
        Message.assistant(f"step {i}", tool_calls=[ToolCall(c, "read") for c in ids]),
        *(Message.tool(c, f"result {c}", name="read") for c in ids),
        Message.assistant(f"done {i}"),
    ]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.lists(st.integers(0, 3), min_size=1, max_size=4),
    picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=5),
)
async def test_any_damaged_rows_leave_a_valid_context(
    store: Store, shape: list[int], picks: list[int]
) -> None:
    convo = await store.create_conversation()
    history = [m for i, calls in enumerate(shape) for m in _step(i, calls)]
    await store.append_many(convo.id, history)
    bad = sorted({1 + p % len(history) for p in picks})
    for seq in bad:
        await damage(store, "messages", "parts", "[1", conversation_id=convo.id, seq=seq)
    context = await store.load_context(convo.id)
    sent = context.to_messages()
    assert validate_messages(sent) == []
    assert sorted(e.context["seq"] for e in context.damaged) == bad
    kept = [m.text for m in sent if m.meta.get("kind") != "damaged"]
    assert kept == [m.text for s, m in enumerate(history, 1) if s not in bad]


async def test_a_damaged_tool_result_is_answered_as_an_error(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [*turn(0), Message.assistant("ok")])
    await damage(store, "messages", "parts", "[null]", conversation_id=convo.id, seq=3)
    sent = (await store.load_context(convo.id)).to_messages()
    assert validate_messages(sent) == []
    (result,) = sent[2].tool_results
    assert result.call_id == "call-0" and result.is_error and "could not be read" in result.text


async def test_a_damaged_tool_call_keeps_its_results_paired(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [*turn(0), Message.assistant("ok")])
    await damage(store, "messages", "parts", "[1", conversation_id=convo.id, seq=2)
    sent = (await store.load_context(convo.id)).to_messages()
    assert validate_messages(sent) == []
    assert [c.id for c in sent[1].tool_calls] == ["call-0"]
    assert sent[2].tool_results[0].text == "contents of f0.py"  # the result is kept


async def test_a_missing_current_session_is_damage_not_absence(store: Store) -> None:
    convo = await store.create_conversation(owner="ann")
    await store.append(convo.id, Message.user("hello"), owner="ann")
    await damage(store, "conversations", "current_session_id", "gone", id=convo.id)
    for call in (store.load_context(convo.id, owner="ann"), store.history(convo.id)):
        with pytest.raises(CorruptRowError) as info:
            await call
        assert not isinstance(info.value, NotFoundError)
        assert info.value.context == {"conversation_id": convo.id, "session_id": "gone"}
