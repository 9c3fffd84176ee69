"""Tests of the compactor: plans (prune, cut, split turn, pins, triggers), compact (hooks,
fallback, redaction, progress guard), and the emergency path."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from abridged.core.budget import BudgetSettings, compute_budget
from abridged.core.model import Message, ToolCall, Usage, assign_ids
from abridged.core.protocols import Summary, SummaryRequest
from abridged.core.tokens import estimate_message_tokens
from abridged.core.turns import is_user_message
from abridged.core.validate import is_paired
from abridged.engine.compaction import (
    BeforeCompact,
    CompactionHooks,
    CompactionPlan,
    CompactionResult,
    CompactionSettings,
    CompactionState,
    build_context,
    compose_summary,
    context_tokens,
    plan_compaction,
    plan_emergency,
    rebase,
    run_compaction,
)
from abridged.errors import ContextOverflowError, MessageValidationError, SettingError
from abridged.events.engine import (
    CompactionBackoff,
    CompactionCancelled,
    CompactionEnded,
    CompactionStarted,
    OverflowRecovered,
    Pruned,
    SummarizerFallback,
)
from tests.engine.strategies_compaction import (
    EmptySummarizer,
    FailingSummarizer,
    RecordingSummarizer,
    replay,
)
from tests.strategies import agent_session, assert_valid_context, chat_session, count_tokens

# The engine's mechanics at fixed numbers (not the defaults, which bench/policies.py chooses):
# input 11,264; trigger 9,011; target 5,632; keep 2,816
FIXED = BudgetSettings(trigger_ratio=0.8, target_ratio=0.5, keep_recent_tokens=2_816)
BUDGET = compute_budget(16_384, 4_096, FIXED)


def run(plan: CompactionPlan, summarizer: Any = None, **kwargs: Any) -> CompactionResult:
    return asyncio.run(run_compaction(plan, summarizer, count_tokens=count_tokens, **kwargs))


def plan_for(messages: Sequence[Message], **kwargs: Any) -> CompactionPlan:
    kwargs.setdefault("budget", BUDGET)
    plan = plan_compaction(messages, count_tokens=count_tokens, **kwargs)
    assert plan is not None
    return plan


def bash_step(k: int, output: str, *, tool: str = "bash") -> list[Message]:
    call = ToolCall(f"c{k}", tool, json.dumps({"command": f"step {k}"}))
    return [
        Message.assistant(f"Step {k}.", tool_calls=[call]),
        Message.tool(call.id, output, name=tool),
    ]


def chat(turns: int, chars: int = 2_000) -> list[Message]:
    return chat_session(turns, chars)


def tool_heavy(size: int = 2_800, until: int = BUDGET.trigger) -> list[Message]:
    """A task and bash steps with bulky outputs, until the context reaches ``until`` tokens."""
    messages = [Message.system("sys"), Message.user("go")]
    k = 0
    while context_tokens(messages, BUDGET, count_tokens) < until:
        messages += bash_step(k, f"out{k} " + "x" * size)
        k += 1
    return assign_ids(messages)


# -- prepare: when --------------------------------------------------------------------------------


def test_nothing_to_do_under_the_trigger() -> None:
    assert plan_compaction(chat(3), budget=BUDGET, count_tokens=count_tokens) is None


def test_the_token_trigger_fires_at_the_trigger() -> None:
    messages = chat(30, 1_200)
    size = context_tokens(messages, BUDGET, count_tokens)
    assert size >= BUDGET.trigger
    plan = plan_for(messages)
    assert plan.trigger == "tokens" and plan.tokens_before == size
    assert plan.reason.startswith("context ") and ">= trigger" in plan.reason


def test_a_caller_measured_size_decides_without_recounting() -> None:
    messages = chat(3)
    assert plan_compaction(messages, budget=BUDGET, context_tokens=BUDGET.trigger - 1) is None
    plan = plan_compaction(
        messages, budget=BUDGET, context_tokens=BUDGET.trigger, count_tokens=count_tokens
    )
    assert plan is not None and plan.tokens_before == BUDGET.trigger


def test_compaction_switched_off_does_nothing_automatically() -> None:
    budget = compute_budget(16_384, 4_096, BudgetSettings(enabled=False))
    assert plan_compaction(chat(30, 1_200), budget=budget, count_tokens=count_tokens) is None


def test_the_message_count_trigger_keeps_at_most_half() -> None:
    settings = CompactionSettings(max_messages=20, pin_first_task=False)
    messages = chat(15, chars=40)  # small: far below the token trigger
    plan = plan_for(messages, settings=settings)
    assert plan.trigger == "messages" and plan.action == "summarize"
    assert plan.messages_after <= 10 + 1  # the tail, plus the system prompt
    result = run(plan)
    assert len(build_context(messages, result.state)) <= 20


def test_manual_compaction_cuts_under_the_keep_with_focus() -> None:
    summarizer = RecordingSummarizer()
    messages = chat(4, chars=100)
    plan = plan_for(messages, manual=True, focus="the API design")
    assert plan.trigger == "manual" and plan.action == "summarize"
    result = run(plan, summarizer)
    assert result.status == "compacted"
    assert summarizer.requests[0].focus == "the API design"
    context = build_context(messages, result.state)
    # the pinned task survives every compaction, so it comes before the summary (cached prefix)
    assert context[1] is messages[1] and context[2].is_summary and len(context) < len(messages)


# -- prepare: what ---------------------------------------------------------------------------------


def test_prune_alone_when_it_reaches_the_target() -> None:
    messages = tool_heavy()
    plan = plan_for(messages)
    assert plan.action == "prune" and plan.requests == ()
    result = run(plan, FailingSummarizer())  # no model call is made
    assert result.status == "pruned" and result.reached_target
    assert result.state.prune_boundary > 0 and result.state.summary is None
    context = build_context(messages, result.state)
    assert len(context) == len(messages) and is_paired(context)
    assert "[tool output pruned:" in context[3].tool_results[0].text
    assert any(isinstance(e, Pruned) and "-9" in e.text for e in result.events)


def test_summarize_when_pruning_is_not_enough() -> None:
    messages = chat(30, 1_200)
    plan = plan_for(messages)
    assert plan.action == "summarize" and plan.cut is not None
    assert plan.main_request is not None and plan.main_request.kind == "initial"
    assert plan.first_kept > 0 and is_user_message(messages[plan.first_kept])
    summarized = [messages[i] for i in plan.summarize]
    assert list(plan.main_request.messages) == summarized


def test_a_cut_inside_a_turn_is_one_summary_that_says_the_turn_goes_on() -> None:
    earlier = [Message.user("What is abridged?"), Message.assistant("A library. " * 200)]
    session = agent_session(60, 1_500)
    messages = assign_ids([session[0], *earlier, *session[1:]])
    settings = CompactionSettings(pin_first_task=False, prune_enabled=False)
    plan = plan_for(messages, settings=settings)
    assert plan.cut is not None and plan.cut.splits_turn  # type: ignore[union-attr]
    assert plan.summarize == (1, 2)
    assert plan.turn_prefix and plan.turn_prefix[0] == 3  # the task's turn
    # One request: the earlier history and the split turn's earlier steps, of kind turn_prefix.
    assert len(plan.requests) == 1
    request = plan.main_request
    assert request is not None and request.kind == "turn_prefix"
    assert list(request.messages) == [messages[i] for i in (*plan.summarize, *plan.turn_prefix)]
    assert request.later and request.later[0] is messages[plan.first_kept]
    summarizer = RecordingSummarizer()
    result = run(plan, summarizer)
    assert len(summarizer.requests) == 1
    assert result.summary_text is not None
    assert f"({len(request.messages)} messages)" in result.summary_text
    assert "The turn in progress" not in result.summary_text  # no second block


def test_the_previous_summary_is_folded_in_with_an_update() -> None:
    summarizer = RecordingSummarizer()
    messages = chat(80)
    first = next(
        c for c in replay(messages, BUDGET, summarizer=summarizer) if c.state.compactions >= 2
    )
    kinds = [r.kind for r in summarizer.requests]
    assert kinds[0] == "initial" and "update" in kinds
    update = next(r for r in summarizer.requests if r.kind == "update")
    assert update.previous_summary is not None and "recording" not in update.previous_summary
    assert first.context[2].is_summary and first.context[1] is messages[1]


def test_the_plan_is_deterministic() -> None:
    messages = agent_session(60, 1_500)
    assert plan_for(messages) == plan_for(messages)


def test_file_operations_are_tracked_across_compactions() -> None:
    messages = [Message.system("s"), Message.user("edit the files")]
    for k in range(40):
        path = f"src/f{k}.py"
        call = ToolCall(f"w{k}", "write_file", json.dumps({"path": path, "content": "x" * 900}))
        messages += [Message.assistant(f"Writing {path}.", tool_calls=[call])]
        messages += [Message.tool(call.id, "ok " + "y" * 1_200, name="write_file")]
    messages = assign_ids(messages)
    states = [c.state for c in replay(messages, BUDGET) if c.results]
    assert len([s for s in states if s.compactions]) >= 2
    final = states[-1].file_ops
    assert "src/f0.py" in final.modified and "src/f1.py" in final.modified


# -- pins ------------------------------------------------------------------------------------------


def test_the_first_task_survives_ten_compactions() -> None:
    messages = agent_session(200, 2_500)
    task = messages[1]
    compactions = 0
    settings = CompactionSettings(prune_enabled=False)  # every compaction summarizes
    for call in replay(messages, BUDGET, settings=settings):
        compactions = call.state.compactions
        assert task in call.context, "the first task was summarized away"
        assert_valid_context(messages, call.context)
    assert compactions >= 10


def test_a_large_first_task_is_not_pinned() -> None:
    messages = agent_session(60, 1_500)
    messages[1] = Message.user("Fix it. " + "details " * 2_000, id=messages[1].id)
    plan = plan_for(messages, settings=CompactionSettings(prune_enabled=False))
    assert 1 not in plan.carried


def test_user_pins_are_carried_verbatim() -> None:
    messages = chat(30, 1_200)
    pinned = messages[5]
    assert pinned.role == "user"
    plan = plan_for(messages, pinned={5})
    assert 5 in plan.carried and 5 not in plan.summarize
    context = build_context(messages, run(plan).state)
    assert pinned in context


def test_meta_pinned_steps_are_kept_whole() -> None:
    messages = [Message.system("s"), Message.user("go")]
    for k in range(20):
        messages += bash_step(k, "z" * 2_000)
    messages[7] = messages[7].replace(meta={"pinned": True})  # a tool result
    messages = assign_ids(messages)
    settings = CompactionSettings(prune_enabled=False)
    plan = plan_for(messages, settings=settings)
    assert {6, 7} <= set(plan.carried)  # with the call that asked for it
    context = build_context(messages, run(plan).state)
    assert messages[6] in context and messages[7] in context and is_paired(context)


def test_pinned_tool_results_are_not_pruned() -> None:
    messages = tool_heavy()
    messages[3] = messages[3].replace(meta={"pinned": True})
    plan = plan_for(messages)
    assert plan.prune is not None and 5 in plan.pruned and 3 not in plan.pruned


# -- compact: hooks --------------------------------------------------------------------------------


def test_before_compact_can_cancel_an_automatic_compaction() -> None:
    plan = plan_for(chat(30, 1_200))
    seen: list[CompactionResult] = []
    hooks = CompactionHooks(
        before_compact=lambda p: BeforeCompact(cancel=True), after_compact=seen.append
    )
    summarizer = RecordingSummarizer()
    result = run(plan, summarizer, hooks=hooks)
    assert result.status == "cancelled" and result.state == plan.state and not result.changed
    assert summarizer.requests == []
    assert any(isinstance(e, CompactionCancelled) for e in result.events)
    assert seen == [result]


def test_before_compact_cannot_cancel_a_forced_compaction() -> None:
    messages = chat(60)
    assert context_tokens(messages, BUDGET, count_tokens) > BUDGET.input_budget
    plan = plan_for(messages)
    assert plan.trigger == "overflow" and plan.forced

    async def cancel(p: CompactionPlan) -> BeforeCompact:
        return BeforeCompact(cancel=True)

    result = run(plan, hooks=CompactionHooks(before_compact=cancel))
    assert result.status == "compacted" and result.tokens_after <= BUDGET.input_budget
    # an ordinary cut made before sending is a compaction, not an overflow recovery
    assert plan.emergency is None
    assert not any(isinstance(e, OverflowRecovered) for e in result.events)
    ended = [e for e in result.events if isinstance(e, CompactionEnded)]
    assert [e.trigger for e in ended] == ["overflow"]


def test_an_emergency_stage_is_reported_as_an_overflow_recovery() -> None:
    plan = plan_emergency(chat(60), budget=BUDGET, count_tokens=count_tokens)
    assert plan.forced and plan.emergency is not None
    result = run(plan)
    recovered = [e for e in result.events if isinstance(e, OverflowRecovered)]
    assert result.status == "compacted"
    assert [e.stage for e in recovered] == [plan.emergency]


def test_before_compact_can_supply_the_summary() -> None:
    summarizer = RecordingSummarizer()
    hooks = CompactionHooks(before_compact=lambda p: BeforeCompact(summary="My own summary."))
    result = run(plan_for(chat(30, 1_200)), summarizer, hooks=hooks)
    assert result.status == "compacted" and result.summary_text == "My own summary."
    assert result.summarizer == "before_compact" and summarizer.requests == []
    assert result.summary is not None and result.summary.is_summary
    assert result.summary.text.endswith("My own summary.")


def test_events_are_streamed_and_returned() -> None:
    streamed: list[Any] = []
    result = run(plan_for(chat(30, 1_200)), hooks=CompactionHooks(on_event=streamed.append))
    assert streamed == list(result.events)
    assert isinstance(result.events[0], CompactionStarted)
    ended = next(e for e in result.events if isinstance(e, CompactionEnded))
    assert ended.messages_before > ended.messages_after
    assert ended.text.startswith("Compacted (") and "/11k (" in ended.text


def test_duration_is_measured_by_the_clock_given() -> None:
    ticks = iter([10.0, 12.5])
    result = run(plan_for(chat(30, 1_200)), clock=lambda: next(ticks))
    assert result.duration == 2.5


# -- compact: failures never lose history ------------------------------------------------------


def test_a_failing_summarizer_falls_back_to_the_extractive_one() -> None:
    messages = chat(30, 1_200)
    failing = FailingSummarizer()
    result = run(plan_for(messages), failing)
    assert failing.calls == 1 and result.status == "compacted"
    assert result.summarizer == "extractive" and result.fallback_reason is not None
    assert "timed out" in result.fallback_reason
    assert result.summary_text is not None and "timed out" not in result.summary_text
    assert "## User intent and requests" in result.summary_text
    assert any(isinstance(e, SummarizerFallback) for e in result.events)


def test_without_a_fallback_a_failed_summary_drops_nothing() -> None:
    messages = chat(30, 1_200)
    plan = plan_for(messages, settings=CompactionSettings(prune_enabled=False))
    result = run(plan, FailingSummarizer(), fallback=False)
    assert result.status == "failed" and result.summary is None
    assert result.state.summary is None and result.state.cut == 0
    assert build_context(messages, result.state) == messages
    assert result.error is not None and "timed out" in result.error
    assert result.state.backoff.failures == 1


def test_an_empty_summary_is_never_used() -> None:
    result = run(plan_for(chat(30, 1_200)), EmptySummarizer())
    assert result.summarizer == "extractive" and result.summary_text
    assert result.summary_text.strip()


def test_secrets_are_redacted_from_summaries() -> None:
    key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    messages = chat(30, 1_200)
    messages[3] = Message.user(f"use OPENAI_API_KEY={key} and postgres://app:hunter22@db/app")
    messages = assign_ids(messages)
    hooks = CompactionHooks(before_compact=lambda p: BeforeCompact(summary=f"The key is {key}."))
    for kwargs in ({}, {"hooks": hooks}):
        result = run(plan_for(messages, pinned=()), **kwargs)
        assert result.summary_text is not None
        assert key not in result.summary_text and "hunter22" not in result.summary_text
        assert "[REDACTED:" in result.summary_text


# -- progress guard --------------------------------------------------------------------------------


def test_a_kept_tail_above_the_target_backs_off_and_never_loops() -> None:
    # The last step alone is above the trigger (9,011), within the input budget (11,264): no cut
    # can bring the context to the target (5,632), and without the guard every call would
    # compact again.
    messages = [Message.system("s"), Message.user("go")]
    for k in range(6):
        messages += bash_step(k, "small " * 50)
    messages += bash_step(99, "huge " * 7_500)
    messages = assign_ids(messages)
    assert BUDGET.trigger < count_tokens(messages[-1]) < BUDGET.input_budget - 200
    state = CompactionState()
    compactions: list[int] = []
    for call in range(40):
        state = state.next_call()
        plan = plan_compaction(messages, budget=BUDGET, state=state, count_tokens=count_tokens)
        if plan is None:
            continue
        assert plan.trigger == "tokens"
        result = run(plan)
        assert not result.reached_target
        assert any(isinstance(e, CompactionBackoff) for e in result.events)
        compactions.append(call)
        state = result.state
    # Exponential backoff: the pauses double (1, 2, 4, 8, 16 calls).
    gaps = [b - a for a, b in itertools.pairwise(compactions)]
    assert gaps[:4] == [2, 3, 5, 9]
    assert len(compactions) <= 6
    assert (
        context_tokens(build_context(messages, state), BUDGET, count_tokens) <= BUDGET.input_budget
    )


def test_stale_usage_from_before_a_compaction_never_triggers() -> None:
    messages = chat(30, 1_200)
    # The last reply reports the context it was produced for: the big, old one.
    last = messages[-1]
    messages[-1] = last.replace(usage=Usage(input=BUDGET.input_budget - 10, output=300))
    result = run(plan_for(messages))
    assert result.reached_target
    state = result.state.next_call()
    assert state.usage_boundary == len(messages)
    later = [*messages, Message.user("next")]
    assert plan_compaction(later, budget=BUDGET, state=state, count_tokens=count_tokens) is None
    # Without the boundary the same report would trigger again at once: a loop.
    unbounded = replace(state, usage_boundary=0)
    assert (
        plan_compaction(later, budget=BUDGET, state=unbounded, count_tokens=count_tokens)
        is not None
    )


def test_a_fresh_usage_report_is_the_ground_truth() -> None:
    messages = chat(3)
    reply = Message.assistant("ok", usage=Usage(input=BUDGET.trigger + 500, output=2))
    later = [*messages, reply, Message.user("next")]
    plan = plan_compaction(later, budget=BUDGET, count_tokens=count_tokens)
    assert plan is not None and plan.tokens_before > BUDGET.trigger + 500
    assert context_tokens(later, BUDGET, count_tokens) < BUDGET.trigger


def test_settings_are_validated() -> None:
    with pytest.raises(SettingError, match="max_messages"):
        CompactionSettings(max_messages=3)
    with pytest.raises(SettingError, match="emergency_keep_share"):
        CompactionSettings(emergency_keep_share=0)
    with pytest.raises(SettingError, match="backoff_max_calls"):
        CompactionSettings(backoff_max_calls=0)
    with pytest.raises(SettingError, match="pin_first_task"):
        CompactionSettings(pin_first_task="yes")  # type: ignore[arg-type]


# -- emergency ---------------------------------------------------------------------------------


def test_overflow_shrinks_the_summary_to_the_room_left() -> None:
    # A last step of ~9.5k tokens: kept whole, it leaves less than summary_max for the summary.
    messages = [Message.system("s"), Message.user("go")]
    for k in range(10):
        messages += bash_step(k, "w " * 2_000)
    messages += [Message.user("and now this"), *bash_step(50, "big " * 9_500)]
    messages = assign_ids(messages)
    plan = plan_for(messages, settings=CompactionSettings(prune_enabled=False))
    assert plan.trigger == "overflow" and plan.forced and plan.emergency is None
    assert plan.summary_max_tokens < BUDGET.summary_max
    result = run(plan)
    context = build_context(messages, result.state)
    assert context_tokens(context, BUDGET, count_tokens) <= BUDGET.input_budget
    assert is_paired(context)


def test_overflow_escalates_to_the_emergency_path() -> None:
    # The last step leaves no room for a summary beside it: only the minimal context fits.
    messages = [Message.system("s"), Message.user("go"), *bash_step(0, "w " * 2_000)]
    messages += [Message.user("and now this"), *bash_step(50, "big " * 11_230)]
    messages = assign_ids(messages)
    plan = plan_for(messages)
    assert plan.trigger == "overflow" and plan.emergency == "minimal"
    result = run(plan)
    assert result.state.cut == len(messages)
    context = build_context(messages, result.state)
    assert context[-1].text == "and now this" and is_paired(context)
    assert context_tokens(context, BUDGET, count_tokens) <= BUDGET.input_budget


def test_the_minimal_stage_keeps_the_latest_user_message() -> None:
    messages = [Message.system("s"), Message.user("go"), *bash_step(0, "x " * 100)]
    messages += [Message.user("the question"), *bash_step(1, "huge " * 12_000)]
    messages = assign_ids(messages)
    plan = plan_emergency(messages, budget=BUDGET, count_tokens=count_tokens)
    assert plan.emergency == "minimal"
    result = run(plan)
    context = build_context(messages, result.state)
    assert [m.text for m in context if is_user_message(m) and not m.is_summary][
        -1
    ] == "the question"
    assert context_tokens(context, BUDGET, count_tokens) <= BUDGET.input_budget
    assert is_paired(context)


def test_an_unfittable_latest_message_raises() -> None:
    messages = assign_ids([Message.system("s"), Message.user("q " * 30_000)])
    with pytest.raises(ContextOverflowError) as caught:
        plan_emergency(messages, budget=BUDGET, count_tokens=count_tokens)
    assert caught.value.limit == BUDGET.input_budget


def test_a_reported_size_scales_the_emergency_plan() -> None:
    messages = chat(30)
    estimated = context_tokens(messages, BUDGET, count_tokens)
    plan = plan_emergency(
        messages, budget=BUDGET, count_tokens=count_tokens, context_tokens=2 * estimated
    )
    assert plan.reported and plan.forced
    # Scaled by 2: what is kept must fit half the input budget in the estimator's units.
    assert 2 * (plan.base_tokens_after + plan.summary_max_tokens) <= BUDGET.input_budget + 200


# -- sessions --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "messages",
    [agent_session(100, 3_000), chat_session(100, 2_000)],
    ids=["agent-1-task-100-steps", "chat-100-turns"],
)
def test_long_sessions_stay_within_budget(messages: list[Message]) -> None:
    changes = 0
    for call in replay(messages, BUDGET):
        assert call.tokens <= BUDGET.input_budget
        assert_valid_context(messages, call.context)
        changes += sum(r.changed for r in call.results)
    assert changes >= 3


def test_compose_summary_handles_missing_parts() -> None:
    assert compose_summary("Main.", None) == "Main."
    assert compose_summary(None, "Prefix.").endswith("Prefix.")


def test_summary_requests_carry_the_prefix_and_tools() -> None:
    from abridged.core.protocols import ToolSpec

    tools = (ToolSpec("bash", "run a command"),)
    plan = plan_for(chat(30, 1_200), tools=tools)
    request: SummaryRequest | None = plan.main_request
    assert request is not None and request.tools == tools
    # the context up to the cut: it ends with the last summarized message; what is kept after it
    # is not sent twice
    history = tuple(chat(30, 1_200))
    assert request.prefix == history[: plan.first_kept]
    assert request.prefix[-1] is request.messages[-1] or request.prefix[-1] == request.messages[-1]
    assert plan.first_kept < len(history)
    # The ceiling, divided by how much the counter counts over the plain estimate.
    assert request.max_tokens <= plan.summary_max_tokens <= BUDGET.summary_max
    ratio = sum(count_tokens(m) for m in request.messages) / sum(
        estimate_message_tokens(m) for m in request.messages
    )
    assert request.max_tokens == max(1, int(plan.summary_max_tokens / max(1.0, ratio)))


# -- prune on request and rebase ----------------------------------------------------------------


def test_prune_only_prunes_under_the_trigger_and_never_summarizes() -> None:
    messages = tool_heavy(until=BUDGET.target)  # well under the trigger: nothing is due
    assert plan_compaction(messages, budget=BUDGET, count_tokens=count_tokens) is None
    plan = plan_compaction(messages, budget=BUDGET, count_tokens=count_tokens, prune_only=True)
    assert plan is not None and plan.action == "prune" and plan.requests == ()
    result = run(plan)
    assert result.status == "pruned" and result.state.summary is None
    assert result.state.prune_boundary > 0 and result.tokens_after < result.tokens_before
    # pruned once, there is nothing left to prune before the boundary
    again = plan_compaction(
        messages, budget=BUDGET, count_tokens=count_tokens, state=result.state, prune_only=True
    )
    assert again is None


def test_prune_only_with_nothing_to_prune_is_none() -> None:
    messages = chat(4, 200)
    assert (
        plan_compaction(messages, budget=BUDGET, count_tokens=count_tokens, prune_only=True) is None
    )


def test_rebase_applies_a_result_to_the_grown_history() -> None:
    messages = tool_heavy()
    plan = plan_for(messages)
    result = run(plan)
    assert result.changed
    grown = [*messages, *bash_step(99, "late output")]
    current = replace(plan.state, calls=plan.state.calls + 3)
    rebased = rebase(result, grown, current)
    assert rebased is not None
    # reports on the messages appended meanwhile describe the old context
    assert rebased.state.usage_boundary == len(grown)
    assert rebased.state.calls == current.calls
    assert rebased.state.cut == result.state.cut and rebased.summary == result.summary


def test_rebase_drops_a_result_planned_on_an_older_context() -> None:
    messages = tool_heavy()
    result = run(plan_for(messages))
    moved = replace(result.plan.state, epoch=result.plan.state.epoch + 1)  # a prune came first
    assert rebase(result, messages, moved) is None


def test_rebase_refuses_a_history_that_does_not_continue_the_planned_one() -> None:
    messages = tool_heavy()
    result = run(plan_for(messages))
    with pytest.raises(MessageValidationError):
        rebase(result, messages[: result.plan.history_length - 1], result.plan.state)
    other = assign_ids([Message.system("sys")] + [Message.user(f"u{i}") for i in range(60)])
    with pytest.raises(MessageValidationError):
        rebase(result, other, result.plan.state)


def test_a_custom_summarizers_own_fallback_reason_is_redacted() -> None:
    """A custom summarizer that falls back inside itself and says why in ``fallback_reason``,
    quoting its provider's error with the key in it: neither the result nor the event carries
    the key."""
    key = "sk-" + "proj-" + "Qw3" * 12

    class OwnFallback:
        name = "own"

        async def summarize(self, request: SummaryRequest) -> Summary:
            return Summary(
                "## User intent and requests\n- keep going",
                "own",
                fallback_reason=f"AuthenticationError: Incorrect API key provided: {key}",
            )

    result = run(plan_for(chat(30, 1_200)), OwnFallback())
    assert result.status == "compacted"
    assert result.fallback_reason is not None and "AuthenticationError" in result.fallback_reason
    assert key not in result.fallback_reason
    fallbacks = [e for e in result.events if isinstance(e, SummarizerFallback)]
    assert fallbacks and all(key not in e.reason for e in fallbacks)
