"""Helpers for the compaction tests: budgets, test summarizers, and an engine-level replay."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from hypothesis import strategies as st

from abridged.core.budget import Budget, BudgetSettings, compute_budget
from abridged.core.model import Message
from abridged.core.protocols import FileOps, Summarizer, Summary, SummaryRequest
from abridged.engine.compaction import (
    CompactionHooks,
    CompactionResult,
    CompactionSettings,
    CompactionState,
    build_context,
    context_tokens,
    plan_compaction,
    run_compaction,
)
from tests.strategies import count_tokens


@dataclass
class RecordingSummarizer:
    """A summarizer that writes a short, fixed-shape summary and records every request."""

    text: str = "## User intent and requests\nkeep going"
    requests: list[SummaryRequest] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "recording"

    async def summarize(self, request: SummaryRequest) -> Summary:
        self.requests.append(request)
        return Summary(text=f"{self.text} ({len(request.messages)} messages)", summarizer=self.name)


@dataclass
class FailingSummarizer:
    """A summarizer whose every call raises (an outage, a timeout)."""

    error: Exception = field(default_factory=lambda: TimeoutError("the model timed out"))
    calls: int = 0

    @property
    def name(self) -> str:
        return "failing"

    async def summarize(self, request: SummaryRequest) -> Summary:
        self.calls += 1
        raise self.error


@dataclass
class EmptySummarizer:
    """A summarizer that answers with nothing (an empty completion)."""

    @property
    def name(self) -> str:
        return "empty"

    async def summarize(self, request: SummaryRequest) -> Summary:
        return Summary(text="  ", summarizer=self.name, file_ops=FileOps())


@st.composite
def budgets(draw: st.DrawFn) -> Budget:
    """Windows where generated conversations compact often, yet the minimal context (system,
    pinned task, latest user message, a short summary) always fits."""
    window = draw(st.sampled_from([8_192, 16_384, 32_768]))
    trigger, target = draw(st.sampled_from([(0.8, 0.5), (0.7, 0.4), (0.9, 0.6)]))
    settings = BudgetSettings(trigger_ratio=trigger, target_ratio=target)
    return compute_budget(window, window // 4, settings)


@dataclass
class FillingSummarizer:
    """The worst case for the budget, and fast: a summary exactly as long as it may be (by the
    test counter, ``tests.strategies.count_tokens``: 4 characters a token)."""

    calls: int = 0

    @property
    def name(self) -> str:
        return "filling"

    async def summarize(self, request: SummaryRequest) -> Summary:
        self.calls += 1
        size = max(1, 4 * request.max_tokens - 8)
        text = ("## Progress\n" + "summary " * (size // 8 + 1))[:size]
        return Summary(text=text, summarizer=self.name)


@dataclass(frozen=True)
class Call:
    """One model call of an engine-level replay: the context sent and what compaction did."""

    index: int
    context: list[Message]
    tokens: int
    results: tuple[CompactionResult, ...]
    state: CompactionState


def model_calls(messages: Sequence[Message]) -> list[int]:
    """Indexes where a model call starts (its context is ``messages[:i]``)."""
    calls = [
        i
        for i, m in enumerate(messages)
        if m.role == "assistant" and i > 0 and messages[i - 1].role != "assistant"
    ]
    if messages and messages[-1].role != "assistant":
        calls.append(len(messages))
    return calls


def replay(
    messages: Sequence[Message],
    budget: Budget,
    *,
    settings: CompactionSettings | None = None,
    summarizer: Summarizer | None = None,
    hooks: CompactionHooks | None = None,
    state: CompactionState | None = None,
) -> Iterator[Call]:
    """Drive the pure engine over ``messages`` call by call, as a runtime would: prepare,
    compact while a plan comes back (at most 4 times), then build the context to send."""
    state = state or CompactionState()
    for index in model_calls(messages):
        history = list(messages[:index])
        state = state.next_call()
        results: list[CompactionResult] = []
        for _ in range(4):
            plan = plan_compaction(
                history, budget=budget, settings=settings, state=state, count_tokens=count_tokens
            )
            if plan is None:
                break
            result = asyncio.run(
                run_compaction(plan, summarizer, hooks=hooks, count_tokens=count_tokens)
            )
            results.append(result)
            state = result.state
            if not result.changed:
                break
        context = build_context(history, state)
        yield Call(
            index,
            context,
            context_tokens(context, budget, count_tokens),
            tuple(results),
            state,
        )
