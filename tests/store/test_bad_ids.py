"""Ids no database can hold (a NUL, a lone surrogate) are the caller's error: ``FormatError``
naming the field, raised before any statement carries them, on both backends; nothing is
stored and the store goes on working (it used to be a raw ``UnicodeEncodeError`` on SQLite and
"the database cannot be reached" on PostgreSQL)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abridged.core.model import Message
from abridged.errors import FormatError
from abridged.store import Store

BAD = ["lone \ud800 surrogate", "nul \x00 inside", "\udfff", "\x00"]


@pytest.mark.parametrize("bad", BAD, ids=ascii)
async def test_a_bad_message_id_is_a_format_error_and_nothing_is_stored(
    store: Store, bad: str
) -> None:
    convo = await store.create_conversation()
    await store.append(convo.id, Message.user("before", id="ok-1"))
    with pytest.raises(FormatError) as info:
        await store.append_many(
            convo.id, [Message.user("fine", id="ok-2"), Message.user("x", id=bad)]
        )
    assert info.value.context["field"] == "message_id"
    assert info.value.context["index"] == 1
    with pytest.raises(FormatError):
        await store.find_message(convo.id, bad)
    after = await store.append(convo.id, Message.user("after", id="ok-3"))
    assert after.seq == 2
    assert [m.message.id for m in await store.stored_messages(convo.id)] == ["ok-1", "ok-3"]


@pytest.mark.parametrize("bad", BAD, ids=ascii)
async def test_a_bad_conversation_id_is_a_format_error_everywhere(store: Store, bad: str) -> None:
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: store.create_conversation(bad),
        lambda: store.ensure_conversation(bad),
        lambda: store.open_conversation(bad),
        lambda: store.load_context(bad),
        lambda: store.append(bad, Message.user("x")),
        lambda: store.find_message(bad, "m"),
        lambda: store.deliver(bad),
        lambda: store.update_settings(bad, {}),
        lambda: store.delete_conversation(bad),
        lambda: store.list_sessions(bad),
        lambda: store.turn_lease(bad),
    ]
    for call in calls:
        with pytest.raises(FormatError) as info:
            await call()
        assert info.value.context["field"] == "conversation_id"
    assert (await store.create_conversation("fine")).id == "fine"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mid=st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=40))
async def test_any_message_id_is_stored_and_found_or_refused_as_format(
    store: Store, mid: str
) -> None:
    convo = await store.create_conversation()
    try:
        stored = await store.append(convo.id, Message.user("x", id=mid))
    except FormatError:
        assert "\x00" in mid or any(0xD800 <= ord(c) <= 0xDFFF for c in mid)
        return
    found = await store.find_message(convo.id, mid)
    assert found is not None and found.pk == stored.pk
