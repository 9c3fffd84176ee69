"""Tests of the ContextManager: formats, O(new) calls, edits, usage, hooks, manual and emergency
compaction, replay, and the README example."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from abridged.core.budget import BudgetSettings
from abridged.core.model import Message, ToolCall, Usage
from abridged.core.tokens import TokenCounter, estimate_context_tokens
from abridged.core.validate import is_paired
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import BeforeCompact, CompactionHooks, CompactionSettings
from abridged.errors import SettingError
from abridged.events.engine import CompactionEnded, OverflowRecovered, UsageUpdated
from abridged.formats.anthropic_messages import messages_from_anthropic, messages_to_anthropic
from abridged.formats.openai_chat import messages_from_openai, messages_to_openai
from abridged.runtime import ContextManager, Prepared, tracking
from tests.engine.strategies_compaction import RecordingSummarizer
from tests.strategies import agent_session, assert_valid_context, chat_session


def make(**kwargs: Any) -> ContextManager:
    """A manager for a 16k window (input budget 11k)."""
    return ContextManager(context_window=16_384, max_output_tokens=4_096, **kwargs)


def log_text(k: int, chars: int = 2_400) -> str:
    line = f"2025-01-0{k % 9 + 1} INFO worker-{k} processed batch {k}: ok; queue depth {k * 7}\n"
    return (line * (chars // len(line) + 1))[:chars]


def openai_step(k: int, chars: int = 2_400) -> list[dict[str, Any]]:
    call = {
        "id": f"call_{k}",
        "type": "function",
        "function": {"name": "read_log", "arguments": json.dumps({"part": k})},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{k}", "content": log_text(k, chars)},
    ]


def openai_session(steps: int, chars: int = 2_400) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an operations agent."},
        {"role": "user", "content": "Find out why the queue backs up."},
    ]
    for k in range(steps):
        items += openai_step(k, chars)
    return items


def drive(
    cm: ContextManager, items: list[dict[str, Any]], check: Callable[[Prepared], None]
) -> Prepared:
    """Feed ``items`` call by call (the list grows in place), checking every context."""
    live: list[dict[str, Any]] = []
    ctx: Prepared | None = None
    for item in items:
        if item["role"] == "assistant" and live:
            ctx = cm.prepare(live)
            check(ctx)
        live.append(item)
    ctx = cm.prepare(live)
    check(ctx)
    return ctx


def within_budget(ctx: Prepared) -> None:
    assert ctx.tokens <= ctx.budget.input_budget
    sent = messages_from_openai(ctx.messages)
    assert is_paired(sent)


# -- the README example ------------------------------------------------------------------------


README_EXAMPLE = """
import json
from abridged.runtime import ContextManager

cm = ContextManager(context_window=16_384, max_output_tokens=4_096)
messages = [
    {"role": "system", "content": "You are an operations agent."},
    {"role": "user", "content": "Find out why the queue backs up."},
]
for step in range(60):
    ctx = cm.prepare(messages)  # the context to send, in the same format
    # reply = client.chat.completions.create(model=..., messages=ctx.messages, tools=...)
    # cm.record_usage(reply.usage)
    call = {"id": f"call_{step}", "type": "function",
            "function": {"name": "read_log", "arguments": json.dumps({"part": step})}}
    messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    messages.append({"role": "tool", "tool_call_id": call["id"], "content": "INFO ok\\n" * 300})
    for note in ctx.notifications:
        print(note)  # Compacted (9k -> 3k): system 10, summary 600, kept 2.4k, tools 0; ...
    assert ctx.tokens <= ctx.budget.input_budget
"""


def test_the_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(README_EXAMPLE, "README", "exec"), {})
    printed = capsys.readouterr().out
    assert "Tool outputs pruned (" in printed or "Compacted (" in printed


# -- formats ----------------------------------------------------------------------------------


def test_until_the_first_compaction_the_context_is_the_callers_list() -> None:
    cm = make()
    items = openai_session(3)
    ctx = cm.prepare(items)
    assert ctx.messages is items and ctx.format == "openai" and not ctx.events
    assert ctx.system is None and not ctx.changed


def test_an_openai_agent_session_stays_within_budget() -> None:
    cm = make()
    ctx = drive(cm, openai_session(100), within_budget)
    assert cm.state.compactions >= 1 and ctx.messages[0]["role"] == "system"
    # The caller's items are sent as they were: the same dicts, not copies.
    assert ctx.messages[-1] is not None and ctx.messages[-1]["role"] == "tool"


def test_a_100_turn_chat_stays_within_budget_with_the_replay() -> None:
    messages = chat_session(100, 2_000)
    cm = make()
    steps = list(cm.replay(messages))
    assert [s.index for s in steps] == [i for i, m in enumerate(messages) if m.role == "assistant"]
    for step in steps:
        assert step.tokens <= step.budget.input_budget
        assert_valid_context(messages, step.context)
    assert cm.state.compactions >= 3


def test_an_agent_session_of_one_task_and_100_steps_within_budget() -> None:
    messages = agent_session(100, 3_000)
    cm = make()
    for step in cm.replay(messages):
        assert step.tokens <= step.budget.input_budget
        assert_valid_context(messages, step.context)
        assert messages[1] in step.context  # the pinned task
    assert cm.state.epoch >= 3


def test_anthropic_messages_with_a_separate_system_prompt() -> None:
    chat = openai_session(60)
    system, items = messages_to_anthropic(messages_from_openai(chat))
    cm = make()
    live: list[dict[str, Any]] = []
    for item in items:
        live.append(item)
        ctx = cm.prepare(live, system=system)
        assert ctx.system == system and ctx.format == "anthropic"
        sent = messages_from_anthropic(ctx.messages, ctx.system)
        assert is_paired(sent) and ctx.tokens <= ctx.budget.input_budget
    assert cm.state.epoch >= 1
    assert ctx.messages is not live  # compacted: a context of its own


def test_abridged_messages_with_their_own_usage() -> None:
    cm = make()
    history = [Message.system("s"), Message.user("hi")]
    ctx = cm.prepare(history)
    reply = Message.assistant("hello", usage=Usage(input=900, output=2))
    history.append(reply)
    history.append(Message.user("more"))
    ctx = cm.prepare(history)
    assert any(isinstance(e, UsageUpdated) and e.context_tokens == 900 for e in ctx.events)
    assert ctx.tokens >= 900


def test_an_ambiguous_start_switches_to_anthropic() -> None:
    cm = make()
    live: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    assert cm.prepare(live).format == "openai"
    live.append(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
        }
    )
    live.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]})
    ctx = cm.prepare(live)
    assert ctx.format == "anthropic" and len(cm.history) == 3


# -- cost per call -----------------------------------------------------------------------------


def test_a_call_reads_and_estimates_only_new_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    original = tracking.read_items

    def counting(fmt: Any, items: Any, index: int, names: dict[str, str]) -> list[Message]:
        reads.extend(range(index, index + len(items)))
        return original(fmt, items, index, names)

    monkeypatch.setattr(tracking, "read_items", counting)
    counter = TokenCounter()
    cm = ContextManager(context_window=10_000_000, max_output_tokens=8_192, counter=counter)
    items = openai_session(500)
    loaded = cm.prepare(items)
    assert len(reads) == len(items)
    assert loaded.tokens > 0 and counter.computed == len(items)  # every message, once
    for k in range(20):
        reads.clear()
        items += openai_step(1_000 + k)
        ctx = cm.prepare(items)
        assert reads == [len(items) - 2, len(items) - 1]
        assert ctx.messages is items
    # Far below the trigger, deciding needed no estimate at all (only a cheap bound); the size,
    # when asked for, estimates just the 40 messages added since.
    assert counter.computed == len(items) - 40
    assert ctx.tokens > loaded.tokens and counter.computed == len(items)


def test_rebuilt_lists_of_equal_items_are_recognised() -> None:
    cm = make()
    items = openai_session(60)
    ctx = cm.prepare(items)
    state = cm.state
    copy = json.loads(json.dumps(items))  # new objects, same content
    ctx = cm.prepare([*copy, *openai_step(99)])
    assert cm.state.summary == state.summary and cm.state.cut == state.cut
    assert len(cm.history) == len(items) + 2
    assert ctx.tokens <= ctx.budget.input_budget


# -- edits -------------------------------------------------------------------------------------


def test_an_edit_before_the_cut_drops_the_summary_and_replans() -> None:
    cm = make(settings=CompactionSettings(prune_enabled=False))
    items = openai_session(60)
    cm.prepare(items)
    assert cm.state.summary is not None
    cut = cm.state.cut
    edited = list(items)
    edited[3] = {**items[3], "content": "edited output"}
    assert cut > 3
    ctx = cm.prepare(edited)
    assert cm.history[3].tool_results[0].text == "edited output"
    # Re-planned from the edit: the old summary covered it, so it is summarized again.
    assert cm.state.epoch > 0 and ctx.tokens <= ctx.budget.input_budget
    assert is_paired(messages_from_openai(ctx.messages))


def test_an_edit_after_the_cut_keeps_the_summary() -> None:
    cm = make(settings=CompactionSettings(prune_enabled=False))
    items = openai_session(60)
    cm.prepare(items)
    summary = cm.state.summary
    edited = list(items)
    edited[-1] = {**items[-1], "content": "short now"}
    ctx = cm.prepare(edited)
    assert cm.state.summary == summary
    assert ctx.messages[-1]["content"] == "short now"


def test_dropped_messages_are_noticed() -> None:
    cm = make()
    items = openai_session(6)
    cm.prepare(items)
    shorter = items[:2] + items[4:]
    ctx = cm.prepare(shorter)
    assert len(cm.history) == len(shorter) and ctx.messages is shorter


def test_passing_the_last_context_plus_new_messages_continues_the_history() -> None:
    cm = make()
    items = openai_session(60)
    ctx = cm.prepare(items)
    assert ctx.messages is not items  # compacted
    state = cm.state
    ctx2 = cm.prepare([*ctx.messages, *openai_step(500)])
    assert len(cm.history) == len(items) + 2
    assert cm.state.summary == state.summary
    assert ctx2.messages[: len(ctx.messages)] == ctx.messages


def test_a_changed_system_prompt_keeps_the_summary() -> None:
    cm = make()
    items = openai_session(60)
    cm.prepare(items)
    summary = cm.state.summary
    assert summary is not None
    changed = [{"role": "system", "content": "You are a careful operations agent."}, *items[1:]]
    ctx = cm.prepare(changed)
    assert cm.state.summary == summary and ctx.messages[0]["content"].startswith("You are a care")
    assert cm.history[0].text == "You are a careful operations agent."


def test_a_changed_anthropic_system_prompt_keeps_the_summary() -> None:
    system, items = messages_to_anthropic(messages_from_openai(openai_session(60)))
    cm = make()
    cm.prepare(items, system=system)
    summary = cm.state.summary
    assert summary is not None
    ctx = cm.prepare(items, system="You are a careful operations agent.")
    assert cm.state.summary == summary and ctx.system == "You are a careful operations agent."
    assert cm.history[0].text == "You are a careful operations agent."
    ctx = cm.prepare(items, system=None)  # no system prompt at all: re-read from scratch
    assert ctx.system is None and cm.history[0].role != "system"


def test_invalidate_rereads_items_changed_in_place() -> None:
    cm = make()
    items = openai_session(4)
    cm.prepare(items)
    items[3]["content"] = "changed in place"
    cm.invalidate(3)
    cm.prepare(items)
    assert cm.history[3].tool_results[0].text == "changed in place"


# -- usage -------------------------------------------------------------------------------------


def test_usage_is_the_ground_truth_and_calibrates() -> None:
    cm = ContextManager(context_window=1_000_000, max_output_tokens=8_192)
    items = openai_session(2)
    for k in range(8):
        ctx = cm.prepare(items)
        real = round(1.3 * estimate_context_tokens(messages_from_openai(items)))
        event = cm.record_usage({"prompt_tokens": real, "completion_tokens": 20})
        assert isinstance(event, UsageUpdated) and not event.stale
        items += openai_step(100 + k)
    ctx = cm.prepare(items)
    assert any(isinstance(e, UsageUpdated) for e in ctx.events)
    estimate = estimate_context_tokens(messages_from_openai(items))
    assert abs(ctx.tokens - 1.3 * estimate) < 0.05 * estimate
    # Far below the trigger the reports are learned from when a size is needed (lazily).
    assert cm.counter.calibration.factor > 1.15


def test_usage_from_before_a_compaction_is_stale() -> None:
    cm = make()
    items = openai_session(20)
    cm.prepare(items)
    cm.record_usage({"prompt_tokens": 10_500, "completion_tokens": 5})
    items += openai_step(300, chars=3_000)
    ctx = cm.prepare(items)  # compacts: the report describes the old context
    assert ctx.changed
    stale = cm.record_usage({"prompt_tokens": 11_000, "completion_tokens": 5})
    assert stale is not None and not stale.stale  # reported for the context just sent
    assert cm.record_usage(None) is None


def test_usage_for_a_context_sent_before_a_manual_compaction_is_stale() -> None:
    cm = make()
    items = openai_session(6)
    cm.prepare(items)
    cm.compact()
    event = cm.record_usage({"prompt_tokens": 5_000, "completion_tokens": 5})
    assert event is not None and event.stale
    items += openai_step(99)
    ctx = cm.prepare(items)
    assert ctx.tokens < 5_000  # the stale report was ignored


def test_prepare_takes_the_last_usage_too() -> None:
    cm = make()
    items = openai_session(2)
    cm.prepare(items)
    ctx = cm.prepare(items, usage={"prompt_tokens": 777, "completion_tokens": 1})
    assert ctx.tokens == 777


# -- compaction control ------------------------------------------------------------------------


def test_manual_compaction_with_instructions() -> None:
    summarizer = RecordingSummarizer()
    cm = make(summarizer=summarizer)
    items = openai_session(4)
    cm.prepare(items)
    ctx = cm.compact("focus on the queue")
    assert summarizer.requests[0].focus == "focus on the queue"
    assert ctx.changed and ctx.messages[1] is items[1]  # the pinned task, before the summary
    assert "Summary of the earlier part" in ctx.messages[2]["content"]
    assert any(isinstance(e, CompactionEnded) for e in ctx.events)


def test_before_compact_can_cancel_and_events_are_streamed() -> None:
    seen: list[Any] = []
    hooks = CompactionHooks(
        before_compact=lambda plan: BeforeCompact(cancel=not plan.forced), on_event=seen.append
    )
    cm = make(hooks=hooks)
    drive(cm, openai_session(40), within_budget)
    assert any(e.kind == "compaction_cancelled" for e in seen)
    done = [e for e in seen if isinstance(e, CompactionEnded) and e.status != "cancelled"]
    assert done and all(e.trigger == "overflow" for e in done)


def test_recover_overflow_after_a_provider_rejection() -> None:
    cm = make()
    items = openai_session(10)
    ctx = cm.prepare(items)
    recovered = cm.recover_overflow(reported_tokens=2 * ctx.tokens)
    assert recovered.changed
    assert any(isinstance(e, OverflowRecovered) and e.reported for e in recovered.events)
    assert recovered.tokens < ctx.tokens


def test_pins_and_the_message_count_trigger() -> None:
    settings = CompactionSettings(max_messages=12, pin_first_task=False)
    cm = make(settings=settings)
    items = openai_session(4, chars=100)
    cm.pin(1)
    ctx = cm.prepare(items + openai_step(9, chars=100) + openai_step(10, chars=100))
    assert cm.state.compactions == 1 and 1 in cm.state.carried
    # a carried message no summarized one precedes comes before the summary
    assert len(ctx.messages) <= 12 and ctx.messages[1] is items[1]
    assert "Summary of the earlier part" in ctx.messages[2]["content"]
    cm.unpin(1)
    with pytest.raises(SettingError):
        cm.pin(-1)


def test_a_chat_model_summarizes_within_its_budget() -> None:
    from abridged.providers.scripted import ScriptedModel

    model = ScriptedModel(default="## User intent and requests\nFind the backlog cause.")
    cm = make(summarizer=model, settings=CompactionSettings(prune_enabled=False))
    drive(cm, openai_session(40), within_budget)
    assert model.calls, "the model was never asked"
    budget = cm.budget
    for call in model.calls:
        assert estimate_context_tokens(call.messages) <= budget.input_budget
        assert call.max_output_tokens is not None
        assert call.max_output_tokens <= budget.summary_max


def test_the_sent_prefix_is_stable_between_compactions() -> None:
    cm = make()
    previous: list[str] | None = None

    def check(ctx: Prepared) -> None:
        nonlocal previous
        sent = [json.dumps(m, sort_keys=True) for m in ctx.messages]
        if previous is not None and not ctx.changed:
            assert sent[: len(previous)] == previous
        previous = sent

    drive(cm, openai_session(80), check)


# -- async, sync, settings ----------------------------------------------------------------------


def test_the_async_form_and_sync_inside_a_loop() -> None:
    async def main() -> tuple[Prepared, Prepared]:
        cm = make()
        items = openai_session(60)
        first = await cm.aprepare(items)
        second = make().prepare(items)  # sync, inside a running loop
        return first, second

    first, second = asyncio.run(main())
    assert first.changed and second.changed
    assert json.dumps(first.messages) == json.dumps(second.messages)


def test_async_replay() -> None:
    async def main() -> int:
        cm = make()
        count = 0
        async for step in cm.areplay(chat_session(30, 1_000)):
            assert step.tokens <= step.budget.input_budget
            count += 1
        return count

    assert asyncio.run(main()) == 30


def test_settings_are_validated() -> None:
    with pytest.raises(SettingError, match="context_window"):
        ContextManager()
    with pytest.raises(SettingError, match="format"):
        make(format="xml")
    with pytest.raises(SettingError, match="verify"):
        make(verify="never")
    with pytest.raises(SettingError, match="context_window"):
        ContextManager(context_window=100)
    with pytest.raises(SettingError, match="target_ratio"):
        make(budget=BudgetSettings(trigger_ratio=0.5, target_ratio=0.6))
    limits = ModelLimits(context_window=32_768, max_output=4_096, source="registry", known=True)
    assert ContextManager(limits).budget.context_window == 32_768
    assert ContextManager(limits, context_window=16_384).budget.context_window == 16_384


def test_full_verification_catches_a_replaced_item() -> None:
    cm = make(verify="full")
    items = openai_session(40, chars=200)
    cm.prepare(items)
    items[5] = {**items[5], "content": "replaced"}
    cm.prepare(items)
    assert cm.history[5].tool_results[0].text == "replaced"


def test_replay_refuses_a_used_manager() -> None:
    cm = make()
    cm.prepare([Message.user("hi")])
    with pytest.raises(SettingError):
        list(cm.replay([Message.user("x")]))


def test_tool_calls_with_text_stay_paired_in_abridged_format() -> None:
    history = [Message.system("s"), Message.user("go")]
    for k in range(60):
        call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"cat f{k}"}))
        history += [Message.assistant("", tool_calls=[call]), Message.tool(call.id, "x" * 900)]
    cm = make()
    ctx = cm.prepare(history)
    assert ctx.format == "abridged" and is_paired(ctx.messages)
    assert ctx.messages[2].is_summary or any("[tool output pruned" in str(m) for m in ctx.messages)
    assert messages_to_openai(ctx.messages)


def test_deeply_nested_tool_arguments_are_kept_verbatim_and_compacted() -> None:
    # a model can emit arguments nested deeper than json can decode: kept unparsed, never a crash
    deep = "[" * 5_000 + "]" * 5_000
    items = openai_session(30)
    items[2]["tool_calls"][0]["function"]["arguments"] = deep
    items[-2]["tool_calls"][0]["function"]["arguments"] = deep
    cm = make()
    ctx = cm.prepare(items)
    assert cm.state.compactions >= 1 and ctx.changed
    assert ctx.messages[-2]["tool_calls"][0]["function"]["arguments"] == deep


def test_a_plain_chat_looks_for_its_format_in_new_items_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """System, user and assistant text fit Chat Completions and Responses alike: the format
    stays uncertain, and each call looks at the items added since, not the whole list."""
    scanned: list[int] = []
    original = tracking.detect_format

    def counting(items: Any, *, system: Any = None) -> Any:
        scanned.append(len(items))
        return original(items, system=system)

    monkeypatch.setattr(tracking, "detect_format", counting)
    cm = make()
    items: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    items += [{"role": "user" if k % 2 else "assistant", "content": f"m{k}"} for k in range(400)]
    cm.prepare(items)
    for k in range(5):
        items.append({"role": "user", "content": f"more {k}"})
        cm.prepare(items)
    assert scanned == [401, 1, 1, 1, 1, 1]
    assert cm.format == "openai"


# -- the one driver and its surface ------------------------------------------------------------

RUNTIME = Path(__file__).parents[2] / "src" / "abridged" / "runtime"


def _runtime_sources() -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(RUNTIME.glob("*.py"))}


def test_one_fit_loop_runs_in_the_manager() -> None:
    # fit_context is the loop that plans, runs, commits and re-measures: only the manager's
    # driver calls it, so that a Conversation's fit and recovery cannot grow a loop of its own
    callers = {
        name
        for name, text in _runtime_sources().items()
        if re.search(r"\bfit_context\(", text) and name != "driver.py"
    }
    assert callers == {"context_manager.py"}


def test_nothing_reaches_into_the_managers_private_names() -> None:
    # a Conversation (and its compaction task) use the manager's documented surface only
    reaching = {
        name: sorted(set(re.findall(r"\bmanager\._[a-z]\w*", text)))
        for name, text in _runtime_sources().items()
        if name != "context_manager.py"
    }
    assert {name: found for name, found in reaching.items() if found} == {}


def test_a_plan_that_would_find_nothing_is_not_made_in_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Near the trigger the cheap bound says "maybe" at every call; whether a trigger fires is
    then decided on the loop, and only a plan to make goes to a worker thread (issue 30)."""
    hops: list[str] = []
    due: list[bool] = []
    off_loop, begin = ContextManager._off_loop, ContextManager._begin_call

    async def counted(self: ContextManager, work: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(work, "__name__", type(work).__name__))
        return await off_loop(self, work, *args, **kwargs)

    def begun(self: ContextManager, *args: Any) -> bool:
        due.append(begin(self, *args))
        return due[-1]

    monkeypatch.setattr(ContextManager, "_off_loop", counted)
    monkeypatch.setattr(ContextManager, "_begin_call", begun)

    async def main() -> list[bool]:
        cm = make()
        items = openai_session(0)
        changed = []
        for k in range(30):
            items += openai_step(k, 1_200)
            changed.append((await cm.aprepare(list(items))).changed)
        return changed

    changed = asyncio.run(main())
    below = [i for i, d in enumerate(due) if d and not changed[i]]
    assert below, (due, changed)  # calls the bound could not clear, where nothing was done
    assert any(changed)  # and the trigger fired in the end
    # a worker thread only for the plans that were made (and what carrying them out needs)
    assert hops.count("_plan_call") == sum(1 for i, d in enumerate(due) if d and changed[i])
