"""Invariant 8: a compaction never makes the context larger. A summary that would not shrink
it changes nothing (status ``nothing``, or ``pruned`` when a prune applies)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.budget import Budget, compute_budget
from abridged.core.model import Message
from abridged.core.protocols import Summary, SummaryRequest
from abridged.engine.compaction import (
    BeforeCompact,
    CompactionHooks,
    CompactionPlan,
    CompactionResult,
    CompactionSettings,
    CompactionState,
    plan_compaction,
    run_compaction,
)
from abridged.engine.summarize.prompts import render_sections
from abridged.events.engine import CompactionEnded
from tests.engine.strategies_compaction import RecordingSummarizer, budgets
from tests.strategies import agent_session, chat_session, conversations, count_tokens

BUDGET = compute_budget(16_384, 4_096)
HUGE = render_sections({"intent": "- " + "an endlessly repeated requirement " * 6_000})


def _huge(plan: CompactionPlan) -> BeforeCompact:
    return BeforeCompact(summary=HUGE)


def _plan(messages: Sequence[Message], **kwargs: Any) -> CompactionPlan:
    kwargs.setdefault("budget", BUDGET)
    plan = plan_compaction(messages, count_tokens=count_tokens, manual=True, **kwargs)
    assert plan is not None
    return plan


def _run(plan: CompactionPlan, summarizer: Any = None, **kwargs: Any) -> CompactionResult:
    return asyncio.run(run_compaction(plan, summarizer, count_tokens=count_tokens, **kwargs))


def _ended(result: CompactionResult) -> CompactionEnded:
    (ended,) = [e for e in result.events if isinstance(e, CompactionEnded)]
    return ended


def _same_context(a: CompactionState, b: CompactionState) -> bool:
    """Whether two states send the same context (the backoff counters aside)."""
    return (a.summary, a.cut, a.through_id, a.carried, a.prune_boundary, a.epoch) == (
        b.summary,
        b.cut,
        b.through_id,
        b.carried,
        b.prune_boundary,
        b.epoch,
    )


def test_a_summary_larger_than_what_it_replaces_changes_nothing() -> None:
    messages = chat_session(30, 1_200)
    plan = _plan(messages, settings=CompactionSettings(prune_enabled=False))
    assert plan.action == "summarize" and plan.prune is None
    summarizer = RecordingSummarizer()
    result = _run(plan, summarizer, hooks=CompactionHooks(before_compact=_huge))
    assert summarizer.requests == []  # the hook's summary was used
    assert result.status == "nothing"
    assert result.summary is None and result.summary_text is None
    assert _same_context(result.state, plan.state)
    assert result.state.compactions == plan.state.compactions
    assert result.tokens_after <= result.tokens_before
    ended = _ended(result)
    assert ended.status == "nothing" and ended.detail is not None
    assert "summary would leave" in ended.detail
    # The notice says so, once.
    assert ended.text.startswith("Nothing to compact")
    assert ended.text.lower().count("nothing to compact") == 1


def test_the_same_plan_with_a_small_summary_compacts() -> None:
    # The control: the same plan is carried out when its summary is small.
    messages = chat_session(30, 1_200)
    plan = _plan(messages, settings=CompactionSettings(prune_enabled=False))
    small = render_sections({"intent": "- keep going"})
    result = _run(
        plan, hooks=CompactionHooks(before_compact=lambda _plan: BeforeCompact(summary=small))
    )
    assert result.status == "compacted"
    assert result.tokens_after < result.tokens_before
    assert result.state.summary is not None and "keep going" in result.state.summary


def test_with_a_prune_only_the_prune_applies() -> None:
    messages = agent_session(60, 1_500)
    plan = _plan(messages)
    assert plan.prune is not None and plan.action == "summarize"
    result = _run(plan, hooks=CompactionHooks(before_compact=_huge))
    assert result.status == "pruned"
    assert result.summary is None
    assert result.state.summary == plan.state.summary is None
    assert result.state.cut == plan.state.cut
    assert result.state.prune_boundary > plan.state.prune_boundary
    assert result.tokens_after < result.tokens_before
    ended = _ended(result)
    assert ended.status == "pruned" and ended.detail is not None
    assert "summary would leave" in ended.detail


@dataclass
class SizedSummarizer:
    """A summarizer whose summary is ``factor`` times its ceiling (over it, too)."""

    factor: float
    requests: list[SummaryRequest] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "sized"

    async def summarize(self, request: SummaryRequest) -> Summary:
        self.requests.append(request)
        size = max(1, int(4 * request.max_tokens * self.factor))
        return Summary(text=("## Progress\n" + "word " * size)[: 12 + size], summarizer=self.name)


@settings(max_examples=40, deadline=None)
@given(conversations(), budgets(), st.sampled_from([0.05, 0.5, 1.0, 3.0, 30.0]))
def test_a_compaction_never_returns_a_larger_context(
    messages: list[Message], budget: Budget, factor: float
) -> None:
    state = CompactionState()
    summarizer = SizedSummarizer(factor)
    for end in range(len(messages) // 2, len(messages) + 1, max(1, len(messages) // 4)):
        history = messages[:end]
        plan = plan_compaction(
            history, budget=budget, state=state, count_tokens=count_tokens, manual=True
        )
        if plan is None:
            continue
        result = _run(plan, summarizer)
        if result.status == "compacted":
            assert result.tokens_after < result.tokens_before
        if result.status in ("nothing", "pruned"):
            assert result.summary is None
        if result.status == "nothing":
            assert _same_context(result.state, plan.state)
        state = replace(result.state)
