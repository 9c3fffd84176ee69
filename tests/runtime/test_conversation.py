"""Tests for abridged.runtime.conversation on the local provider (both official SDKs over real
HTTP): the turn loop, tools, streaming, usage and timings, the queue and its debounce, abort,
background and mid-turn compaction, live settings, cancellation, restart, signed thinking,
sub-agents and the single writer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from abridged.core.budget import BudgetSettings
from abridged.core.model import Message, Reasoning
from abridged.core.protocols import TextDelta
from abridged.engine.compaction import BeforeCompact, CompactionHooks
from abridged.errors import LeaseLostError, SettingError
from abridged.runtime import (
    Conversation,
    ConversationSettings,
    Notice,
    ToolContext,
    ToolFinished,
    ToolStarted,
    TurnResult,
    subagent_tool,
    tool,
)
from abridged.store import Store
from abridged.testing import ProviderServer, RecordedRequest, Reply
from tests.runtime.support import (
    ADAPTERS,
    HANG_GUARD,
    HeldReplies,
    RecordingSummarizer,
    SlowSummarizer,
    make_model,
    request_text,
)

LINES = "".join(
    f"{i:04d}: value = compute({i}) + offset  # line of the tool output\n" for i in range(400)
)
NOTE = " ".join(f"Note {i}: the deploy script step {i} copies bundle-{i}." for i in range(60))


async def open_convo(
    store: Store,
    model: Any,
    *,
    window: int = 16_384,
    output: int = 1_024,
    summarizer: Any = "extractive",
    tools: Any = (),
    conversation_id: str | None = None,
    **settings: Any,
) -> Conversation:
    settings.setdefault("debounce", 0)
    return await Conversation.open(
        store,
        model,
        system="You are a helpful agent.",
        tools=tools,
        conversation_id=conversation_id,
        context_window=window,
        max_output_tokens=output,
        summarizer=summarizer,
        settings=ConversationSettings(**settings),
    )


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + LINES


@tool
def explode(reason: str = "boom") -> str:
    """Always fails."""
    raise RuntimeError(f"the tool broke: {reason}")


@pytest.fixture
def small_server() -> Iterator[ProviderServer]:
    with ProviderServer(context_window=8_192, max_output=1_024) as s:
        yield s


def tool_loop(steps: int, final: str = "All done.", reasoning: str = "") -> list[Reply]:
    replies = [
        Reply(
            text=f"Reading part {i}.",
            reasoning=reasoning and f"{reasoning} {i}",
            tool_calls=[("read_file", {"path": f"src/part_{i}.py"})],
        )
        for i in range(steps)
    ]
    return [*replies, Reply(text=final, reasoning=reasoning and f"{reasoning} done")]


# -- one turn -----------------------------------------------------------------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_turn_stores_the_exchange_with_usage_and_timings(
    adapter: str, store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, make_model(adapter, server))
    result = await convo.send("Hello there")
    assert result.text == "Received 2 messages."  # the system prompt and the user message
    assert result.calls == 1 and not result.aborted and result.inputs == 1
    stored = await store.stored_messages(convo.id)
    assert [m.message.role for m in stored] == ["user", "assistant"]
    reply = stored[1]
    assert reply.message.text == result.text and reply.status == "delivered"
    assert (
        reply.usage is not None and reply.usage.context_tokens == server.requests[0].prompt_tokens
    )
    assert reply.ttft_ms is not None and reply.total_ms is not None
    assert reply.total_ms >= reply.ttft_ms >= 0
    assert reply.model in ("gpt-test", "claude-test")
    assert result.usage.context_tokens == server.requests[0].prompt_tokens


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_stream_yields_deltas_then_the_result(
    adapter: str, store: Store, server: ProviderServer
) -> None:
    text = "Streaming works: " + "word " * 30
    server.set_replies([Reply(text=text)])
    convo = await open_convo(store, make_model(adapter, server))
    events = [e async for e in convo.stream("Say something long")]
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3 and "".join(deltas) == text
    assert isinstance(events[-1], TurnResult) and events[-1].text == text


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_tools_run_and_a_raising_tool_becomes_an_error_result(
    adapter: str, store: Store, server: ProviderServer
) -> None:
    server.set_replies(
        [
            Reply(tool_calls=[("read_file", {"path": "a.py"}), ("explode", {"reason": "x"})]),
            Reply(text="Read it; the other tool failed."),
        ]
    )
    seen: list[Any] = []
    convo = await Conversation.open(
        store,
        make_model(adapter, server),
        system="s",
        tools=[read_file, explode],
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        on_event=seen.append,
        settings=ConversationSettings(debounce=0),
    )
    result = await convo.send("Read a.py and try the other tool")
    assert result.text == "Read it; the other tool failed." and result.calls == 2
    roles = [m.role for m in result.messages]
    assert roles == ["assistant", "tool", "tool", "assistant"]
    ok, failed = result.messages[1].tool_results[0], result.messages[2].tool_results[0]
    assert not ok.is_error and ok.text.startswith("# a.py")
    assert failed.is_error and "RuntimeError" in failed.text and "the tool broke: x" in failed.text
    second = server.requests[1]
    assert second.status == 200 and "the tool broke: x" in request_text(second)
    started = [e.call.name for e in seen if isinstance(e, ToolStarted)]
    finished = sorted(e.result.name for e in seen if isinstance(e, ToolFinished))
    assert started == ["read_file", "explode"] and finished == ["explode", "read_file"]


async def test_parallel_tool_calls_run_concurrently(store: Store, server: ProviderServer) -> None:
    both = asyncio.Barrier(2)

    @tool
    async def meet(name: str) -> str:
        await asyncio.wait_for(both.wait(), HANG_GUARD)
        return f"met {name}"

    server.set_replies(
        [Reply(tool_calls=[("meet", {"name": "a"}), ("meet", {"name": "b"})]), "done"]
    )
    convo = await open_convo(store, make_model("openai", server), tools=[meet])
    result = await convo.send("meet")
    assert [m.tool_results[0].text for m in result.messages[1:3]] == ["met a", "met b"]


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_big_tool_result_is_sent_clipped_and_stored_whole(
    adapter: str, store: Store, server: ProviderServer
) -> None:
    server.set_replies([Reply(tool_calls=[("read_file", {"path": "big.py"})]), "ok"])
    convo = await open_convo(
        store, make_model(adapter, server), tools=[read_file], tool_result_max_tokens=600
    )
    result = await convo.send("read big.py")
    assert any("clipped" in n for n in result.notifications)
    sent = request_text(server.requests[1])
    assert "characters left out of the middle of this tool result" in sent
    assert "0000: value" in sent and "0399: value" in sent  # head and tail
    assert "0200: value" not in sent
    stored = await store.stored_messages(convo.id)
    whole = [r for m in stored for r in m.message.tool_results]
    assert whole[0].text == read_file.function("big.py")
    # reopened, the same clipped form is sent: the prefix survives a restart
    again = await Conversation.open(
        store,
        make_model(adapter, server),
        conversation_id=convo.id,
        tools=[read_file],
        context_window=16_384,
        max_output_tokens=1_024,
        settings=ConversationSettings(debounce=0, tool_result_max_tokens=600),
    )
    assert again.context() == convo.context()


async def test_max_steps_stops_a_loop_that_never_answers(
    store: Store, server: ProviderServer
) -> None:
    server.set_replies(lambda r: Reply(tool_calls=[("read_file", {"path": "x"})]))
    convo = await open_convo(store, make_model("openai", server), tools=[read_file], max_steps=3)
    result = await convo.send("loop")
    assert result.stopped == "max_steps" and result.calls == 3
    assert len(server.requests) == 3
    assert result.messages[-1].role == "tool"  # every call kept its result


# -- the queue, the debounce, abort ----------------------------------------------------------


async def wait_for(predicate: Any, timeout: float = HANG_GUARD) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.005)


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_messages_sent_during_a_reply_are_queued_then_answered_in_order(
    adapter: str, store: Store
) -> None:
    held = HeldReplies(["first answer", "second answer"])
    with ProviderServer(replies=held) as server:
        convo = await open_convo(store, make_model(adapter, server))
        first = asyncio.ensure_future(convo.send("first question"))
        await held.wait_started()
        second = asyncio.ensure_future(convo.send("second question"))
        third = asyncio.ensure_future(convo.send("third question"))
        await wait_for(lambda: convo.queued == 2)
        # the first reply is held: the two wait, stored as queued with no place yet
        async with asyncio.timeout(HANG_GUARD):
            while True:
                stored = await store.stored_messages(convo.id)
                waiting = [(m.message.text, m.status, m.seq) for m in stored if m.seq is None]
                if len(waiting) == 2:
                    break
                await asyncio.sleep(0.005)
        assert waiting == [("second question", "queued", None), ("third question", "queued", None)]
        held.release()
        a, b, c = await asyncio.wait_for(asyncio.gather(first, second, third), HANG_GUARD)
    assert a.text == "first answer"
    assert b is c and b.text == "second answer" and b.inputs == 2
    assert len(server.requests) == 2
    later = request_text(server.requests[1])
    assert later.index("first answer") < later.index("second question")
    assert later.index("second question") < later.index("third question")
    stored = await store.stored_messages(convo.id)
    assert [m.message.text for m in stored] == [
        "first question",
        "first answer",
        "second question",
        "third question",
        "second answer",
    ]
    assert all(m.status == "delivered" for m in stored)


async def test_messages_within_the_debounce_window_are_answered_in_one_turn(
    store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, make_model("openai", server), debounce=0.2)
    first = asyncio.ensure_future(convo.send("part one"))
    await asyncio.sleep(0.05)
    second = asyncio.ensure_future(convo.send("part two"))
    a, b = await asyncio.gather(first, second)
    assert a is b and a.inputs == 2 and len(server.requests) == 1
    assert [m.text for m in server.requests[0].messages][-2:] == ["part one", "part two"]
    # after the window, a message is a turn of its own
    await convo.send("later")
    assert len(server.requests) == 2


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_abort_cancels_the_call_and_stores_what_was_received(
    adapter: str, store: Store
) -> None:
    full = "This answer streams slowly, one small chunk at a time, " * 6
    with ProviderServer(stream_delay=0.03) as server:
        server.set_replies([Reply(text=full), "fine"])
        convo = await open_convo(store, make_model(adapter, server))
        events: list[Any] = []
        aborted = False
        async for event in convo.stream("talk"):
            events.append(event)
            if not aborted and sum(isinstance(e, TextDelta) for e in events) == 3:
                aborted = convo.abort()
                assert aborted
        result = events[-1]
        assert isinstance(result, TurnResult) and result.aborted
        assert result.text and full.startswith(result.text) and len(result.text) < len(full)
        stored = await store.stored_messages(convo.id)
        assert stored[-1].message.text == result.text
        assert stored[-1].message.meta.get("aborted") is True
        after = await convo.send("go on")
        assert after.text == "fine" and server.requests[-1].status == 200
        assert result.text in request_text(server.requests[-1])
    assert not convo.abort()  # nothing in progress


async def test_abort_during_tools_keeps_every_call_paired(
    store: Store, server: ProviderServer
) -> None:
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        started.set()
        await asyncio.sleep(60)
        return "never"

    server.set_replies([Reply(tool_calls=[("hang", {})]), "after"])
    convo = await open_convo(store, make_model("anthropic", server), tools=[hang])
    turn = asyncio.ensure_future(convo.send("hang"))
    await asyncio.wait_for(started.wait(), HANG_GUARD)
    reply = await convo.send("/abort")
    assert reply.text == "Aborting the reply in progress."
    result = await turn
    assert result.aborted and result.messages[-1].tool_results[0].is_error
    assert "Aborted" in result.messages[-1].tool_results[0].text
    assert (await convo.send("continue")).text == "after"
    assert server.requests[-1].status == 200  # the call has its (error) result


async def test_a_lost_lease_stops_only_its_turn_and_never_as_an_abort(
    store: Store, server: ProviderServer
) -> None:
    """Two messages answered in one turn under lease ``h2``: the loss of another lease (``h1``,
    no longer this copy's) stops nothing; the loss of ``h2`` stops the turn, and both senders
    get ``LeaseLostError`` (their messages are the lease's new holder's to finish), never an
    aborted result, although none of the turn's writes was refused."""
    gates = [asyncio.Event(), asyncio.Event()]
    entered = [asyncio.Event(), asyncio.Event()]
    calls = 0

    @tool
    async def wait_here() -> str:
        """Waits at its gate (one a call)."""
        nonlocal calls
        n, calls = calls, calls + 1
        entered[n].set()
        await gates[n].wait()
        return f"call {n} done"

    server.set_replies(
        [
            Reply(tool_calls=[("wait_here", {})]),
            "first done",
            Reply(tool_calls=[("wait_here", {})]),
            "after",
        ]
    )
    convo = await open_convo(store, make_model("openai", server), tools=[wait_here])
    first = asyncio.ensure_future(convo.send("first"))  # under no lease
    await asyncio.wait_for(entered[0].wait(), HANG_GUARD)
    assert await store.acquire_turn(convo.id, "h2") is not None
    convo.lease_holder = "h2"  # the next turn's lease, taken while the first one runs
    second = asyncio.ensure_future(convo.send("second"))
    third = asyncio.ensure_future(convo.send("third"))
    await wait_for(lambda: convo.queued == 2)
    gates[0].set()
    assert (await first).text == "first done"
    await asyncio.wait_for(entered[1].wait(), HANG_GUARD)  # second and third: one turn, under h2
    assert convo.turn_holder == "h2"
    assert not convo.lease_lost("h1")  # not this copy's lease: nothing stops
    assert convo.turn_holder == "h2" and not second.done()
    assert convo.lease_lost("h2")
    for send in (second, third):
        with pytest.raises(LeaseLostError):
            await send
    stored = await store.stored_messages(convo.id)
    assert stored[-1].message.tool_results, "the stopped call has its (error) result"
    assert (await convo.send("go on")).text == "after"


# -- compaction: background, mid-turn, settings, cancellation -----------------------------------


async def fill(convo: Conversation, turns: int) -> None:
    for i in range(turns):
        await convo.send(f"{i}: {NOTE}")


async def test_background_compaction_never_delays_the_reply(
    store: Store, small_server: ProviderServer
) -> None:
    slow = SlowSummarizer()
    convo = await open_convo(
        store, make_model("openai", small_server), window=8_192, summarizer=slow
    )
    while not convo.compacting:
        # never waits on the summary
        await asyncio.wait_for(convo.send(f"More: {NOTE}"), HANG_GUARD)
        assert len(small_server.requests) < 20
    # the compaction waits on its summarizer, and turns still go through
    calls = len(small_server.requests)
    result = await asyncio.wait_for(convo.send("Are you there?"), HANG_GUARD)
    assert result.text.startswith("Received") and len(small_server.requests) == calls + 1
    assert convo.compacting and convo.state.compactions == 0
    slow.release.set()
    await convo.wait_idle()
    assert convo.state.compactions == 1 and len(await store.compactions(convo.id)) == 1


async def test_a_summarization_can_be_cancelled_and_never_trips_a_turn_timeout(
    store: Store, small_server: ProviderServer
) -> None:
    slow = SlowSummarizer()
    seen: list[Any] = []
    convo = await open_convo(
        store, make_model("openai", small_server), window=8_192, summarizer=slow
    )
    convo.on_event = seen.append
    while not convo.compacting:
        await asyncio.wait_for(convo.send(f"More: {NOTE}"), HANG_GUARD)
        assert len(small_server.requests) < 20
    await asyncio.wait_for(slow.started.wait(), HANG_GUARD)
    # the summary is not the turn's business: a turn that waited on it would hang here
    async with asyncio.timeout(HANG_GUARD):
        await convo.send("quick question")
    assert convo.cancel_compaction()
    await convo.wait_idle()
    assert not convo.cancel_compaction()
    assert convo.state.compactions == 0 and await store.compactions(convo.id) == []
    assert any("Compaction cancelled" in e.text for e in seen)
    assert (await convo.send("still fine?")).text.startswith("Received")


async def test_a_slow_summarizer_falls_back_to_the_extractive_summary(
    store: Store, small_server: ProviderServer
) -> None:
    slow = SlowSummarizer(delay=30)
    convo = await open_convo(
        store,
        make_model("openai", small_server),
        window=8_192,
        summarizer=slow,
        summary_timeout=0.2,
    )
    while not convo.compacting and convo.state.compactions == 0:
        await asyncio.wait_for(convo.send(f"More: {NOTE}"), HANG_GUARD)
        assert len(small_server.requests) < 20
    await asyncio.wait_for(convo.wait_idle(), HANG_GUARD)
    stored = await store.compactions(convo.id)
    assert len(stored) == 1 and stored[0].record.summarizer == "extractive"
    assert "took longer than 0.2 s" in stored[0].record.summary.meta.get("fallback_reason", "")


async def test_a_compaction_asked_for_mid_turn_waits_for_the_turn_to_end(
    store: Store, server: ProviderServer
) -> None:
    @tool
    def checkpoint(context: ToolContext) -> str:
        """Ask for a compaction."""
        context.request_compaction("keep the API decisions")
        return "asked"

    recording = RecordingSummarizer()
    convo = await open_convo(
        store, make_model("openai", server), tools=[checkpoint, read_file], summarizer=recording
    )
    await fill(convo, 2)
    server.set_replies(
        [
            Reply(tool_calls=[("checkpoint", {})]),
            Reply(tool_calls=[("read_file", {"path": "a.py"})]),
            Reply(tool_calls=[("read_file", {"path": "b.py"})]),
            "turn done",
        ]
    )
    result = await convo.send("work")
    assert result.text == "turn done"
    epochs = [c.epoch for c in list(convo.call_log)[-4:]]
    assert len(set(epochs)) == 1  # no compaction inside the turn
    await convo.wait_idle()
    assert convo.state.compactions == 1
    assert recording.requests[0].focus == "keep the API decisions"


async def test_compact_sent_during_a_turn_runs_after_it(store: Store) -> None:
    with ProviderServer(latency=0.3) as server:
        convo = await open_convo(store, make_model("openai", server))
        await fill(convo, 8)  # enough that a summary is smaller than what it replaces
        finished: list[str] = []
        turn = asyncio.ensure_future(convo.send("a question"))
        turn.add_done_callback(lambda _: finished.append("turn"))
        await wait_for(lambda: len(server.requests) == 9)  # the turn's call is in flight
        compacting = asyncio.ensure_future(convo.send("/compact focus on the notes"))
        compacting.add_done_callback(lambda _: finished.append("compact"))
        answer, done = await asyncio.gather(turn, compacting)
    assert finished == ["turn", "compact"]
    assert answer.text.startswith("Received") and done.command == "compact"
    assert done.text.startswith("Compacted")
    assert convo.state.compactions == 1
    assert len({c.epoch for c in convo.call_log}) == 1  # every call was made before it


async def test_settings_changed_on_a_live_conversation_apply_at_the_next_check(
    store: Store, small_server: ProviderServer
) -> None:
    convo = await open_convo(
        store,
        make_model("openai", small_server),
        window=8_192,
        budget=BudgetSettings(enabled=False),
    )
    while convo.context_tokens() <= convo.budget().trigger:
        await convo.send(f"More: {NOTE}")
    assert convo.context_tokens() <= convo.budget().input_budget
    await convo.wait_idle()
    assert convo.state.compactions == 0  # switched off: past the trigger, nothing happened
    convo.update_settings(budget=BudgetSettings(enabled=True))
    await convo.send("and now?")
    await convo.wait_idle()
    assert convo.state.compactions == 1


async def test_before_compact_can_cancel_an_automatic_compaction(
    store: Store, small_server: ProviderServer
) -> None:
    asked: list[str] = []

    def refuse(plan: Any) -> BeforeCompact:
        asked.append(plan.trigger)
        return BeforeCompact(cancel=True)

    convo = await Conversation.open(
        store,
        make_model("openai", small_server),
        system="s",
        context_window=8_192,
        max_output_tokens=1_024,
        summarizer="extractive",
        hooks=CompactionHooks(before_compact=refuse),
        settings=ConversationSettings(debounce=0),
    )
    for _ in range(10):
        await convo.send(f"More: {NOTE}")
        await convo.wait_idle()
        if asked:
            break
    assert asked and set(asked) == {"tokens"}
    assert convo.context_tokens() > convo.budget().trigger
    assert convo.state.compactions == 0 and await store.compactions(convo.id) == []
    count = len(asked)
    await convo.send("once more")  # the hook is asked again at the next check, and refuses
    await convo.wait_idle()
    assert len(asked) > count and convo.state.compactions == 0


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_long_tool_loop_compacts_inside_its_turn(
    adapter: str, store: Store, small_server: ProviderServer
) -> None:
    small_server.set_replies(tool_loop(16))
    convo = await open_convo(
        store, make_model(adapter, small_server), window=8_192, tools=[read_file]
    )
    result = await convo.send("Read every part of the project")
    assert result.text == "All done." and result.calls == 17
    await convo.wait_idle()
    assert all(r.status == 200 for r in small_server.requests)
    stored = await store.stored_messages(convo.id)
    user_seq = stored[0].seq
    compactions = await store.compactions(convo.id)
    assert len(compactions) >= 2
    assert all(c.record.cut_seq > (user_seq or 0) + 1 for c in compactions)  # cut inside the turn
    assert "Summary of the earlier part" in request_text(small_server.requests[-1])


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_reopening_from_the_store_continues_the_conversation(
    adapter: str, store: Store, small_server: ProviderServer
) -> None:
    small_server.set_replies(tool_loop(10))
    first = await open_convo(
        store, make_model(adapter, small_server), window=8_192, tools=[read_file]
    )
    await first.send("Read the project")
    await first.close()
    assert first.state.compactions >= 1
    again = await Conversation.open(
        store,
        make_model(adapter, small_server),
        conversation_id=first.id,
        tools=[read_file],
        context_window=8_192,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )
    assert again.system == "You are a helpful agent."  # kept in the conversation's settings
    assert again.state.summary == first.state.summary
    assert [m.id for m in again.context()] == [m.id for m in first.context()]
    small_server.set_replies(["Continuing."])
    count = len(await store.stored_messages(first.id))
    result = await again.send("Where were we?")
    assert result.text == "Continuing." and small_server.requests[-1].status == 200
    assert "Where were we?" in request_text(small_server.requests[-1])
    stored = await store.stored_messages(first.id)
    assert len(stored) == count + 2 and stored[-1].seq == stored[-2].seq + 1  # type: ignore[operator]


async def test_signed_thinking_stays_with_its_tool_calls_across_cuts(
    store: Store, small_server: ProviderServer
) -> None:
    small_server.set_replies(tool_loop(12, reasoning="I should read the next part"))
    convo = await open_convo(
        store, make_model("anthropic", small_server), window=8_192, tools=[read_file]
    )
    result = await convo.send("Read everything, thinking as you go")
    assert result.text == "All done."
    await convo.wait_idle()
    assert convo.state.compactions >= 1
    # the server rejects a thinking block whose signature changed, and unpaired tool use
    assert all(r.status == 200 for r in small_server.requests)
    for request in small_server.requests:
        for message in request.body["messages"]:
            blocks = message["content"] if isinstance(message["content"], list) else []
            kinds = [b["type"] for b in blocks]
            if "tool_use" in kinds and message["role"] == "assistant":
                assert kinds[0] == "thinking" and blocks[0]["signature"]
    stored = await store.stored_messages(convo.id)
    thinking = [p for m in stored for p in m.message.parts if isinstance(p, Reasoning)]
    assert len(thinking) == 13 and all(p.signature for p in thinking)


# -- sub-agents ---------------------------------------------------------------------------------


async def test_a_sub_agent_runs_a_child_conversation_with_its_own_budget(
    store: Store, server: ProviderServer
) -> None:
    def script(request: RecordedRequest) -> Reply:
        text = request_text(request)
        if "You research one question" in text:
            return Reply(text="The answer is 42.")
        if '"research"' in text and "The answer is 42." in text:
            return Reply(text="My sub-agent found: 42.")
        return Reply(tool_calls=[("research", {"task": "What is the answer?"})])

    server.set_replies(script)
    research = subagent_tool(
        store,
        make_model("openai", server),
        name="research",
        system="You research one question and answer it briefly.",
        context_window=4_096,
        max_output_tokens=512,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )
    convo = await open_convo(store, make_model("openai", server), tools=[research])
    result = await convo.send("Ask your sub-agent")
    assert result.text == "My sub-agent found: 42."
    answer = result.messages[1].tool_results[0].text
    assert answer.startswith("The answer is 42.")
    child_id = answer.split("[sub-agent conversation ")[1].rstrip("]")
    child = await store.stored_messages(child_id)
    assert [m.message.text for m in child] == ["What is the answer?", "The answer is 42."]
    assert len(await store.list_conversations()) == 2
    assert server.requests[1].max_tokens == 512  # the child's own budget


async def test_a_conversation_can_be_the_tool_of_another(
    store: Store, server: ProviderServer
) -> None:
    def script(request: RecordedRequest) -> Reply:
        text = request_text(request)
        if "You are the helper." in text:
            return Reply(text="helped")
        if "helped" in text:
            return Reply(text="parent done")
        return Reply(tool_calls=[("helper", {"task": "help me"})])

    server.set_replies(script)
    helper = await Conversation.open(
        store,
        make_model("openai", server),
        system="You are the helper.",
        context_window=4_096,
        max_output_tokens=512,
        settings=ConversationSettings(debounce=0),
    )
    convo = await open_convo(store, make_model("openai", server), tools=[helper.as_tool("helper")])
    assert (await convo.send("delegate")).text == "parent done"
    assert [m.message.text for m in await store.stored_messages(helper.id)] == ["help me", "helped"]


# -- the single writer -----------------------------------------------------------------------------


async def test_two_writers_on_one_conversation_commit_one_compaction(
    store: Store, server: ProviderServer
) -> None:
    a = await open_convo(store, make_model("openai", server))
    await fill(a, 8)  # enough that a summary is smaller than what it replaces
    b = await Conversation.open(
        store,
        make_model("openai", server),
        conversation_id=a.id,
        context_window=16_384,
        max_output_tokens=1_024,
        summarizer="extractive",
        settings=ConversationSettings(debounce=0),
    )
    first = await a.send("/compact")
    assert first.text.startswith("Compacted")
    second = await b.send("/compact")
    assert "Another writer compacted this conversation first" in " ".join(second.notifications)
    assert len(await store.compactions(a.id)) == 1
    assert b.state.summary == a.state.summary and b.session is not None
    assert b.session.id == a.session.id  # type: ignore[union-attr]


# -- events ------------------------------------------------------------------------------------


async def test_compaction_notices_reach_the_caller_in_the_designs_words(
    store: Store, small_server: ProviderServer
) -> None:
    seen: list[Any] = []
    convo = await open_convo(store, make_model("openai", small_server), window=8_192)
    convo.on_event = seen.append
    for _ in range(10):
        await convo.send(f"More: {NOTE}")
        await convo.wait_idle()
        if convo.state.compactions:
            break
    texts = [e.text for e in seen if isinstance(e, Notice)]
    compacted = [t for t in texts if t.startswith("Compacted (")]
    assert compacted and "summary" in compacted[0] and "kept" in compacted[0]
    assert any(t.startswith("Context ") for t in texts)  # usage_updated
    kinds = {e.event.kind for e in seen if isinstance(e, Notice) and e.event is not None}
    assert {"compaction_started", "compaction_ended", "usage_updated"} <= kinds
    assert json.dumps([e.event.to_dict() for e in seen if isinstance(e, Notice) and e.event])


# -- opening ------------------------------------------------------------------------------------


async def test_limits_are_resolved_from_the_endpoint_when_not_given(store: Store) -> None:
    with ProviderServer(context_window=12_288, max_output=2_048, model="gpt-test") as server:
        convo = await Conversation.open(store, make_model("openai", server))
    assert convo.limits.context_window == 12_288 and convo.limits.source == "probe"
    assert convo.budget().context_window == 12_288 and convo.budget().max_output_tokens == 2_048


async def test_messages_left_queued_by_a_crash_are_answered_with_the_next_turn(
    store: Store, server: ProviderServer
) -> None:
    convo = await open_convo(store, make_model("openai", server))
    await convo.send("before the crash")
    # a process died after queueing a message while a reply was in progress
    await store.append(convo.id, Message.user("queued before the crash"), status="queued")
    again = await open_convo(store, make_model("openai", server), conversation_id=convo.id)
    result = await again.send("after the restart")
    assert result.text == "Received 5 messages."  # system, 2 before, 2 now
    sent = [m.text for m in server.requests[-1].messages]
    assert sent[-2:] == ["queued before the crash", "after the restart"]
    stored = await store.stored_messages(convo.id)
    assert all(m.status == "delivered" for m in stored)


def test_settings_are_validated() -> None:
    for bad in (
        {"debounce": -1},
        {"max_steps": 0},
        {"max_steps": True},
        {"tool_result_max_tokens": 10},
        {"tool_timeout": 0},
        {"exact_count_margin": 1.5},
        {"summary_timeout": -2},
        {"max_retries": -1},
        {"resume_ratio": 0},
        {"background_compaction": "yes"},
        {"budget": {"enabled": False}},
    ):
        with pytest.raises(SettingError) as info:
            ConversationSettings(**bad)
        assert info.value.name == next(iter(bad))


async def test_a_window_too_small_for_a_budget_is_refused_at_open(
    store: Store, server: ProviderServer
) -> None:
    with pytest.raises(SettingError) as info:
        await Conversation.open(store, make_model("openai", server), context_window=512)
    assert info.value.name == "context_window"


def test_overriding_only_the_output_keeps_an_unknown_window_unknown() -> None:
    from abridged.core.windows import DEFAULT_LIMITS
    from abridged.providers.scripted import ScriptedModel
    from abridged.runtime.conversation import _limits_for

    limits = _limits_for(ScriptedModel(), DEFAULT_LIMITS, None, 2_048)
    assert (limits.source, limits.known) == ("default", False)
    assert (limits.max_output, limits.output_source) == (2_048, "override")
    both = _limits_for(ScriptedModel(), DEFAULT_LIMITS, 32_768, 2_048)
    assert (both.source, both.known, both.context_window) == ("override", True, 32_768)
