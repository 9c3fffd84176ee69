"""A turn stores each step whole: the model's reply and the results of the tools it called in
one transaction, so a crash leaves the store at a step boundary and a turn costs fewer
transactions (issue 30). Counted with SQLAlchemy's events on the store's engines."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from abridged.core.turns import unanswered_tool_calls
from abridged.core.validate import validate_messages
from abridged.runtime import Conversation, ConversationSettings, tool
from abridged.store import Store
from abridged.testing import ProviderServer, Reply
from tests.runtime.support import make_model


@contextmanager
def message_writes(store: Store) -> Iterator[list[int]]:
    """For each transaction that writes messages meanwhile, how many rows it inserts."""
    writes: list[int] = []
    current: list[int] = []

    def begin(conn: Any) -> None:
        current.clear()
        current.append(0)

    def statement(conn: Any, cursor: Any, sql: str, *args: Any) -> None:
        if current and sql.lstrip().upper().startswith("INSERT INTO MESSAGES"):
            current[0] += 1

    def commit(conn: Any) -> None:
        if current and current[0]:
            writes.append(current[0])
        current.clear()

    hooks = [("begin", begin), ("before_cursor_execute", statement), ("commit", commit)]
    for engine in store.sync_engines:
        for name, hook in hooks:
            event.listen(engine, name, hook)
    try:
        yield writes
    finally:
        for engine in store.sync_engines:
            for name, hook in hooks:
                event.remove(engine, name, hook)


async def _open(store: Store, server: ProviderServer, tools: list[Any]) -> Conversation:
    return await Conversation.open(
        store,
        make_model("openai", server),
        system="You are terse.",
        tools=tools,
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


async def test_a_step_is_stored_in_one_transaction(store: Store, server: ProviderServer) -> None:
    server.set_replies(
        [
            Reply("", tool_calls=[("lookup", {"key": "a"})]),
            Reply("", tool_calls=[("lookup", {"key": "b"}), ("lookup", {"key": "c"})]),
            Reply("done"),
        ]
    )
    convo = await _open(store, server, [lookup])
    with message_writes(store) as writes:
        result = await convo.send("look a, b and c up")
    assert result.text == "done"
    # the user's message, then each step whole: a reply with its one result, a reply with its
    # two results, the final reply (before: the reply and its results apart, 5 for 3 steps)
    assert writes == [1, 2, 3, 1]
    stored = [s.message for s in await store.stored_messages(convo.id)]
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "tool", "tool",
                                        "assistant"]  # fmt: skip
    assert validate_messages(stored) == []
    await convo.close()


async def test_a_crash_during_a_steps_tools_leaves_the_previous_step_boundary(
    store: Store, server: ProviderServer
) -> None:
    """What the store holds while the second step's tool runs is what a crash then leaves:
    the first step whole, nothing of the second (no call without its result), and a fresh
    process goes on from there paired."""
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def slow(key: str) -> str:
        """Look a key up, slowly."""
        started.set()
        await release.wait()
        return f"slow value of {key}"

    server.set_replies(
        [
            Reply("", tool_calls=[("lookup", {"key": "a"})]),
            Reply("", tool_calls=[("slow", {"key": "b"})]),
        ]
    )
    convo = await _open(store, server, [lookup, slow])
    turn = asyncio.ensure_future(convo.send("look a and b up"))
    await asyncio.wait_for(started.wait(), 30)
    left = [s.message for s in await store.stored_messages(convo.id)]
    assert [m.role for m in left] == ["user", "assistant", "tool"]
    assert unanswered_tool_calls(left) == []
    assert left[2].tool_results[0].content[0].text == "value of a"  # type: ignore[union-attr]
    assert validate_messages(left) == []
    convo.abort()
    await turn
    await convo.close()
