"""Tests for abridged.runtime.commands: slash commands are handled before the model (no model
call), stored, never sent to it, and do what they say."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from abridged.core.model import message_to_dict
from abridged.core.windows import ModelLimits, Pricing
from abridged.runtime import Conversation, ConversationSettings, tool
from abridged.runtime.commands import (
    COMMANDS,
    command_name,
    help_text,
    is_command,
    is_immediate,
)
from abridged.store import Store
from abridged.testing import ProviderServer, Reply
from tests.runtime.support import (
    ADAPTERS,
    HANG_GUARD,
    HeldReplies,
    RecordingSummarizer,
    make_model,
    request_text,
)

NOTE = " ".join(f"Fact {i}: the release train {i} leaves at {i}:00." for i in range(40))
OUTPUT = "".join(f"{i:04d} log line of a very chatty build tool\n" for i in range(600))


@tool
def build_log(target: str) -> str:
    """The build log of a target."""
    return f"build {target}\n" + OUTPUT


async def open_convo(
    store: Store, server: ProviderServer, adapter: str = "openai", **kwargs: Any
) -> Conversation:
    kwargs.setdefault("summarizer", "extractive")
    return await Conversation.open(
        store,
        make_model(adapter, server),
        system="You are a release assistant.",
        context_window=16_384,
        max_output_tokens=1_024,
        settings=ConversationSettings(debounce=0),
        **kwargs,
    )


def test_command_lines_are_recognised() -> None:
    assert is_command("/status") and is_command("  /compact focus on the API  ")
    assert command_name("/Compact the API") == "compact"
    assert not is_command("/usr/bin/env is broken") and not is_command("hello /status")
    assert not is_command("/") and not is_command("// comment")
    assert is_immediate("/status") and is_immediate("/abort") and is_immediate("/nope")
    assert not is_immediate("/compact") and not is_immediate("/new")
    text = help_text()
    assert all(usage in text for usage, _ in COMMANDS.values())
    assert help_text("nope").startswith("Unknown command /nope.")


async def test_commands_cost_no_model_call_and_are_stored_outside_the_context(
    store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, server, tools=[build_log])
    server.set_replies([Reply(tool_calls=[("build_log", {"target": "app"})]), "built"])
    await convo.send(f"Build the app. {NOTE}")
    for i in range(4):  # the build log leaves the protected recent window
        await convo.send(f"Notes {i}. {NOTE} {NOTE}")
    before = len(server.requests)
    outputs = {}
    for line in ("/status", "/help", "/frobnicate", "/prune", "/compact", "/abort", "/resume"):
        result = await convo.send(line)
        assert result.calls == 0 and result.command is not None
        outputs[line] = result.text
    assert len(server.requests) == before  # not one model call
    assert outputs["/frobnicate"].startswith("Unknown command /frobnicate.")
    assert outputs["/abort"] == "Nothing to abort."
    assert outputs["/prune"].startswith("Tool outputs pruned")
    # Either outcome is a command's answer; a summary larger than what it would replace is
    # not made (the other tests here compact for real).
    assert outputs["/compact"].startswith(("Compacted", "Nothing to compact"))
    stored = await store.stored_messages(convo.id)
    kinds = [m.message.meta.get("kind") for m in stored]
    assert kinds.count("command") == 7 and kinds.count("command_output") == 7
    commands = [m.message.text for m in stored if m.message.meta.get("kind") == "command"]
    assert commands == [
        "/status",
        "/help",
        "/frobnicate",
        "/prune",
        "/compact",
        "/abort",
        "/resume",
    ]
    await convo.send("And now?")
    sent = request_text(server.requests[-1])
    assert "/status" not in sent and "Unknown command" not in sent and "Context:" not in sent
    # reopened, the stored commands stay out of the context
    again = await open_convo(store, server, conversation_id=convo.id, tools=[build_log])
    assert [m.id for m in again.context()] == [m.id for m in convo.context()]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_status_reports_context_summary_session_cache_and_cost(
    adapter: str, store: Store, server: ProviderServer
) -> None:
    prices = Pricing(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    limits = ModelLimits(
        context_window=16_384, max_output=1_024, source="override", known=True, pricing=prices
    )
    convo = await Conversation.open(
        store,
        make_model(adapter, server),
        system="You are a release assistant. " + NOTE,
        limits=limits,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )
    for i in range(16):  # enough that a summary is smaller than what it replaces
        await convo.send(f"Question {i}: {NOTE}")
    await convo.send("/compact")
    status = await convo.status()
    assert status.context_window == 16_384 and status.context_tokens == convo.context_tokens()
    assert status.summary_tokens > 0 and status.compactions == 1
    assert status.session is not None and status.session.number == 2
    requests = [r for r in server.requests if r.status == 200]
    prompt = sum(r.prompt_tokens for r in requests)
    read = sum(r.cached_tokens for r in requests)
    assert read > 0 and status.cache_hit_rate == pytest.approx(read / prompt)
    totals = status.totals
    expected = (
        totals.input * 3.0
        + totals.output * 15.0
        + totals.cache_read * 0.3
        + totals.cache_write * 3.75
    ) / 1_000_000
    assert status.cost is not None and status.cost > 0
    assert status.cost == pytest.approx(expected)
    assert totals.output == sum(r.output_tokens for r in requests)
    text = (await convo.send("/status")).text
    percent = round(100 * status.context_tokens / 16_384)
    assert f"/ 16k window ({percent}%)" in text
    assert "Summary: " in text and "1 compaction" in text
    assert "Session: #2 (compaction)" in text
    assert status.cache_hit_rate is not None
    assert f"Cache: {round(100 * status.cache_hit_rate)}% of prompt tokens" in text
    assert f"Cost so far: ${status.cost:.4f}" in text


async def test_status_without_prices_says_the_cost_is_unknown(
    store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, server)
    text = (await convo.send("/status")).text
    assert "Cost so far: unknown (no prices known for gpt-test)" in text
    assert "Cache: no usage reported yet" in text and "Summary: none" in text


async def test_new_starts_from_the_previous_sessions_summary(
    store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, server)
    await convo.send(f"The release codename is BLUEFIN. {NOTE}")
    first = convo.session
    calls = len(server.requests)
    result = await convo.send("/new")
    assert result.text.startswith("Started session #2")
    assert convo.session is not None and first is not None and convo.session.id != first.id
    await store.drain()  # the previous session's summary is made in the background
    assert len(server.requests) == calls  # the extractive summarizer: no model call at all
    await convo.send("What was the codename?")
    sent = request_text(server.requests[-1])
    assert "Summary of the earlier part" in sent and "BLUEFIN" in sent
    assert "The release codename is BLUEFIN." not in [m.text for m in server.requests[-1].messages]


async def test_clear_starts_empty_and_resume_brings_a_session_back(
    store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, server)
    await convo.send(f"Remember the codename ORCA. {NOTE}")
    first = convo.session
    assert first is not None
    calls = len(server.requests)
    assert (await convo.send("/clear")).text.startswith("Cleared: session #2")
    assert (await convo.send("/resume")).text.startswith("Sessions")
    assert len(server.requests) == calls
    await convo.send("Fresh start")
    assert [m.role for m in server.requests[-1].messages] == ["system", "user"]
    listing = (await convo.send("/resume")).text
    assert "#1" in listing and "#2" in listing and "*" in listing
    assert (await convo.send("/resume #1")).text.startswith("Resumed session #1")
    assert convo.session is not None and convo.session.id == first.id
    await convo.send("Which codename?")
    assert "Remember the codename ORCA." in request_text(server.requests[-1])
    assert "Fresh start" not in request_text(server.requests[-1])
    alone = await open_convo(store, server)  # one session, nothing summarized to search
    assert (await alone.send("/resume orca")).text.startswith("No session matches 'orca'")


async def test_a_session_of_commands_alone_is_finalised_with_no_summary(
    store: Store, server: ProviderServer
) -> None:
    """Nothing to summarise is not a failure: the session left is finalised (its totals, no
    summary made up) and nothing is logged as a failed background finalisation."""
    convo = await open_convo(store, server)
    assert (await convo.send("/clear")).text.startswith("Cleared: session #2")
    await convo.send("/status")  # session #2 holds a command and its output, nothing else
    await convo.send("/new")
    await store.drain()
    assert store.background_errors == []
    listed = {s.number: s for s in await store.list_sessions(convo.id)}
    assert listed[2].finalized_at is not None and listed[2].final_summary is None
    assert len(server.requests) == 0  # no model was asked to summarise nothing


async def test_resume_finds_a_session_by_search_words(store: Store, server: ProviderServer) -> None:
    convo = await open_convo(store, server)
    await convo.send(f"We are planning the PELICAN migration. {NOTE}")
    await convo.send("/new")
    await convo.send("Something else entirely")
    await store.drain()  # the first session's final summary (searchable) is ready
    listing = (await convo.send("/resume")).text
    # each session is titled by what was asked in it, not by the summary's first heading
    first = next(line for line in listing.splitlines() if "#1" in line)
    assert "PELICAN migration" in first and "## " not in listing and "intent" not in listing
    result = await convo.send("/resume pelican migration")
    assert result.text.startswith("Resumed session #1")
    await convo.send("Where were we?")
    assert "We are planning the PELICAN migration." in request_text(server.requests[-1])


async def test_compact_passes_its_focus_to_the_summarizer(
    store: Store, server: ProviderServer
) -> None:
    recording = RecordingSummarizer()
    convo = await open_convo(store, server, summarizer=recording)
    for i in range(16):  # enough that a summary is smaller than what it replaces
        await convo.send(f"Item {i}. {NOTE}")
    result = await convo.send("/compact focus on the release dates")
    assert result.text.startswith("Compacted")
    assert recording.requests[-1].focus == "focus on the release dates"
    assert any(n.startswith("Compacted") for n in result.notifications)


async def _two_builds_then_prune(store: Store, server: ProviderServer) -> Conversation:
    """A conversation that read two big build logs, talked on, was pruned (``/prune``) and
    sent "Next"."""
    convo = await open_convo(store, server, tools=[build_log])
    server.set_replies(
        [
            Reply(tool_calls=[("build_log", {"target": "a"})]),
            Reply(tool_calls=[("build_log", {"target": "b"})]),
            "built both",
            *["ok"] * 6,
        ]
    )
    await convo.send("Build a and b")
    for i in range(4):
        await convo.send(f"More {i}. {NOTE}")
    assert (await convo.send("/prune")).text.startswith("Tool outputs pruned")
    await convo.send("Next")
    return convo


async def test_prune_replaces_old_tool_outputs_in_the_context_only(
    store: Store, server: ProviderServer
) -> None:
    convo = await _two_builds_then_prune(store, server)
    sent = request_text(server.requests[-1])
    assert "[tool output pruned" in sent and server.requests[-1].status == 200
    stored = await store.stored_messages(convo.id)
    outputs = [r.text for m in stored for r in m.message.tool_results]
    assert outputs == [build_log.function("a"), build_log.function("b")]  # stored whole
    assert (await convo.send("/prune")).text == "Nothing to prune."


async def test_a_restart_after_a_prune_sends_the_same_bytes(
    store: Store, server: ProviderServer
) -> None:
    """The pruned form of each message is stored (``pruned_outputs``): a conversation reopened
    from the store sends the very request the one before the restart would have sent."""
    convo = await _two_builds_then_prune(store, server)
    before = server.requests[-1].body
    assert "[tool output pruned" in request_text(server.requests[-1])
    await convo.close()

    again = await open_convo(store, server, tools=[build_log], conversation_id=convo.id)
    assert [message_to_dict(m) for m in again.context()] == [
        message_to_dict(m) for m in convo.context()
    ]
    # the same next message from both sides of the restart: one request, byte for byte
    twin = await open_convo(store, server, tools=[build_log], conversation_id=convo.id)
    await again.send("After")
    after = server.requests[-1].body
    # what was sent before the restart is the prefix of what is sent after it, as JSON
    n = len(before["messages"])
    assert after["messages"][:n] == before["messages"]
    assert {k: v for k, v in after.items() if k != "messages"} == {
        k: v for k, v in before.items() if k != "messages"
    }
    assert json.dumps(after["messages"][:n]) == json.dumps(before["messages"])
    assert (await twin.send("/prune")).text == "Nothing to prune."


async def test_status_during_a_turn_answers_at_once(store: Store) -> None:
    held = HeldReplies(["the slow answer"])
    with ProviderServer(replies=held) as server:
        convo = await open_convo(store, server)
        turn = asyncio.ensure_future(convo.send("slow question"))
        await held.wait_started()
        # the turn's reply is held until released: /status answers while it is in flight,
        # without waiting for the turn, however slow the machine
        status = await asyncio.wait_for(convo.send("/status"), HANG_GUARD)
        assert "Now: replying" in status.text and not turn.done()
        held.release()
        assert (await asyncio.wait_for(turn, HANG_GUARD)).text == "the slow answer"
    stored = await store.stored_messages(convo.id)
    # the command is stored after the turn's messages, never between them
    assert [m.message.meta.get("kind", "message") for m in stored] == [
        "message",
        "message",
        "command",
        "command_output",
    ]


async def test_the_meter_after_new_measures_the_new_empty_session(
    store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, server)
    await convo.send(f"Remember the codename ORCA. {NOTE}")
    before = convo.context_tokens()
    assert (await convo.send("/new")).command == "new"
    after = convo.context_tokens()
    # the system prompt and little else: not the last report of the old session
    assert after < before / 3, (before, after)
