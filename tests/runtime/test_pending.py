"""Turns over messages another process queued (``send_pending``), interrupted turns closed with
error results, ``reply_to``, ``reload`` and the context overview: what the HTTP service's
workers stand on."""

from __future__ import annotations

from typing import Any

import pytest

from abridged.core.model import Message, ToolCall
from abridged.core.turns import unanswered_tool_calls
from abridged.core.validate import validate_messages
from abridged.core.windows import Pricing
from abridged.runtime import Conversation, ConversationSettings, tool
from abridged.runtime.history import is_command
from abridged.runtime.overview import context_overview, meter_state
from abridged.runtime.turn import INTERRUPTED_RESULT
from abridged.store import Store
from abridged.testing import ProviderServer, Reply
from tests.runtime.support import make_model


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}: " + "x " * 200


async def _open(store: Store, model: Any, cid: str | None = None) -> Conversation:
    return await Conversation.open(
        store,
        model,
        system="You are terse.",
        tools=[lookup],
        conversation_id=cid,
        context_window=8_192,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )


def test_unanswered_tool_calls_are_those_after_the_last_calling_message() -> None:
    call_a, call_b = ToolCall("a", "lookup", "{}"), ToolCall("b", "lookup", "{}")
    history = [
        Message.user("go"),
        Message("assistant", (call_a, call_b)),
        Message.tool("a", "done", name="lookup"),
    ]
    assert [c.id for c in unanswered_tool_calls(history)] == ["b"]
    assert unanswered_tool_calls([*history, Message.tool("b", "ok", name="lookup")]) == []
    assert unanswered_tool_calls([Message.user("hi"), Message.assistant("hello")]) == []


async def test_send_pending_answers_what_another_process_queued(
    store: Store, server: ProviderServer
) -> None:
    server.set_replies([Reply("first answer"), Reply("second answer")])
    convo = await _open(store, make_model("openai", server))
    await store.append(convo.id, Message.user("queued elsewhere", id="m-q1"), status="queued")
    await store.append(convo.id, Message.user("and this too", id="m-q2"), status="queued")
    result = await convo.send_pending()
    assert result.text == "first answer"
    assert result.inputs == 1  # one pending turn; both messages delivered into it
    stored = [s for s in await store.stored_messages(convo.id) if not is_command(s.message)]
    assert [s.message.id for s in stored[:2]] == ["m-q1", "m-q2"]
    assert all(s.status == "delivered" for s in stored)
    sent = server.requests[-1].messages
    assert [m.text for m in sent if m.role == "user"] == ["queued elsewhere", "and this too"]
    # the message is answered: reply_to finds the reply, and a pending turn with nothing queued
    # and nothing unfinished is not needed (the service checks reply_to first)
    answered, reply = convo.reply_to(stored[0].seq or 0)
    assert answered and reply is not None and reply.text == "first answer"
    await convo.close()


async def test_stream_pending_streams_the_turn_and_ends_with_its_result(
    store: Store, server: ProviderServer
) -> None:
    server.set_replies([Reply("streamed answer")])
    convo = await _open(store, make_model("openai", server))
    await store.append(convo.id, Message.user("hello", id="m-s1"), status="queued")
    items = [item async for item in convo.stream_pending()]
    assert items[-1].kind == "turn_result"
    text = "".join(getattr(i, "text", "") for i in items if type(i).__name__ == "TextDelta")
    assert text == "streamed answer"
    await convo.close()


async def test_an_interrupted_turn_gets_error_results_then_goes_on_paired(
    store: Store, server: ProviderServer
) -> None:
    """A process died after storing a reply with tool calls and before their results: the
    next turn (here in a fresh process, over the same store) stores error results first."""
    convo = await _open(store, make_model("openai", server))
    cid = convo.id
    await store.append(cid, Message.user("look up k1 and k2"))
    await store.append(
        cid,
        Message(
            "assistant",
            (ToolCall("c1", "lookup", '{"key": "k1"}'), ToolCall("c2", "lookup", '{"key": "k2"}')),
        ),
    )
    await store.append(cid, Message.tool("c1", "value of k1", name="lookup"))
    await convo.close()

    server.set_replies([Reply("recovered")])
    again = await _open(store, make_model("openai", server), cid)
    assert not again.reply_to(1)[0]  # the user's message has no final answer yet
    result = await again.send_pending()  # nothing queued: the interrupted turn is finished
    assert result.text == "recovered"
    assert any("interrupted turn" in n for n in result.notifications)
    stored = [s.message for s in await store.stored_messages(cid)]
    errors = [r for m in stored for r in m.tool_results if r.is_error]
    assert [(r.call_id, r.content[0].text) for r in errors] == [("c2", INTERRUPTED_RESULT)]
    assert validate_messages(stored) == []
    assert validate_messages(list(server.requests[-1].messages)) == []
    assert again.reply_to(1) == (True, stored[-1])
    await again.close()


async def test_reload_reads_what_another_process_wrote(
    store: Store, server: ProviderServer
) -> None:
    server.set_replies([Reply("one"), Reply("two")])
    first = await _open(store, make_model("openai", server))
    second = await _open(store, make_model("openai", server), first.id)
    await first.send("from the first process")
    assert len(second.history) == 1  # the system prompt only
    await second.reload()
    assert [m.text for m in second.history[1:]] == ["from the first process", "one"]
    await second.send("and from the second")
    assert [m.text for m in server.requests[-1].messages if m.role == "user"] == [
        "from the first process",
        "and from the second",
    ]
    await first.close()
    await second.close()


async def test_the_overview_adds_up_and_says_what_the_provider_reported(
    store: Store, server: ProviderServer
) -> None:
    server.set_replies([Reply("", tool_calls=[("lookup", {"key": "k"})]), Reply("done")])
    convo = await _open(store, make_model("openai", server))
    before = context_overview(convo)
    assert before.reported == 0 and before.estimated == before.total
    await convo.send("look it up")
    after = context_overview(convo)
    assert after.system + after.tools + after.summary + after.messages == after.total
    assert after.reported > 0  # the last call's usage counts the start of the context
    assert after.reported + after.estimated == after.total
    assert after.window == 8_192 and after.trigger < after.input_budget < after.window
    assert after.tools > 0 and after.message_count == 4
    assert after.state == meter_state(after.total, after.trigger)
    await convo.close()


@pytest.mark.parametrize(
    ("tokens", "trigger", "known", "state"),
    [(0, 100, True, "green"), (74, 100, True, "green"), (75, 100, True, "amber"),
     (100, 100, True, "red"), (150, 100, True, "red"), (50, 100, False, "grey"),
     (10, 0, True, "grey")],
)  # fmt: skip
def test_meter_state_thresholds(tokens: int, trigger: int, known: bool, state: str) -> None:
    assert meter_state(tokens, trigger, known_window=known) == state


def test_pricing_cost_uses_cache_prices_or_the_input_price() -> None:
    assert Pricing(input=1.0, output=2.0).cost(input=1_000_000, cache_read=1_000_000) == 2.0
    priced = Pricing(input=1.0, output=2.0, cache_read=0.1, cache_write=1.25)
    cost = priced.cost(input=10, output=20, cache_read=1000, cache_write=100)
    assert cost == pytest.approx((10 + 40 + 100 + 125) / 1e6)
    assert Pricing(input=None, output=2.0).cost(input=5) is None
