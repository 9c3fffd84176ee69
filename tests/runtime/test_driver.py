"""Tests of the runtime's shared driver pieces: which summarizer a compaction gets, and how big
its requests may be."""

from __future__ import annotations

from abridged.core.budget import compute_budget
from abridged.core.tokens import TokenCounter, estimate_context_tokens
from abridged.engine.compaction import CompactionHooks, CompactionResult
from abridged.engine.summarize import ExtractiveSummarizer, LLMSummarizer
from abridged.engine.summarize.prompts import render_sections
from abridged.providers.scripted import ScriptedCall, ScriptedModel
from abridged.runtime import ContextManager
from abridged.runtime.driver import (
    SUMMARY_ESTIMATE_MARGIN,
    SummarizerFactory,
    summarizer_limits,
    summary_input_tokens,
    summary_output_tokens,
)

GOOD = render_sections({"intent": "- Find the slow query.", "state": "Reading parts."})

BUDGET = compute_budget(16_384, 4_096)


def _made(factory: SummarizerFactory) -> LLMSummarizer:
    made = factory(BUDGET)
    assert isinstance(made, LLMSummarizer)
    return made


def test_the_conversations_own_model_reuses_its_prompt_cache() -> None:
    own = ScriptedModel([], name="gpt-x")
    # the runtime's own model, given or not
    assert _made(SummarizerFactory(None, own_model=own)).cache_reuse
    assert _made(SummarizerFactory(own, own_model=own)).cache_reuse
    # a model named like the ContextManager's model= is the conversation's model
    assert _made(SummarizerFactory(ScriptedModel([], name="gpt-x"), own_name="gpt-x")).cache_reuse
    # a different (cheaper) model could not read that cache: it gets a transcript
    assert not _made(
        SummarizerFactory(ScriptedModel([], name="mini"), own_name="gpt-x")
    ).cache_reuse
    assert not _made(SummarizerFactory(ScriptedModel([], name="mini"))).cache_reuse
    assert isinstance(SummarizerFactory(None)(BUDGET), ExtractiveSummarizer)


def test_summary_requests_may_use_the_window_less_the_summarys_own_output() -> None:
    counter = TokenCounter()
    made = _made(SummarizerFactory(ScriptedModel([], name="m"), own_name="m", counter=counter))
    assert made.counter is counter
    assert made.max_output_tokens == summary_output_tokens(BUDGET) == BUDGET.summary_max
    room = BUDGET.context_window - BUDGET.safety_margin - BUDGET.summary_max
    assert made.input_budget_tokens == summary_input_tokens(BUDGET) == room
    assert room > BUDGET.input_budget  # a summary's output is smaller than a reply's
    # never less than a call's own input budget
    tight = compute_budget(16_384, 1_024)
    assert summary_input_tokens(tight) >= tight.input_budget


def _replay_with(window: int | None) -> tuple[ScriptedModel, list[CompactionResult]]:
    """A 128k conversation summarized by a smaller (scripted) model, ``window`` its own."""
    model = ScriptedModel(default=lambda _m, _t: GOOD, name="small")
    results: list[CompactionResult] = []
    cm = ContextManager(
        context_window=128_000,
        max_output_tokens=16_384,
        summarizer=model,
        summary_window=window,
        summary_options={"temperature": 0.2},
        hooks=CompactionHooks(after_compact=results.append),
    )
    items: list[dict[str, object]] = [{"role": "user", "content": "Find the slow query."}]
    for k in range(120):
        items.append({"role": "assistant", "content": f"Reading part {k}."})
        items.append({"role": "user", "content": f"part {k}: " + f"row {k} took {k} ms; " * 200})
        cm.prepare(items)
    return model, results


def _sent(call: ScriptedCall) -> int:
    """What the model's own tokenizer may count: a fifth more than the estimate (measured on
    SmolLM2's: 17-20% more on map-reduce chunks)."""
    return int(estimate_context_tokens(call.messages) * 1.2)


def test_a_smaller_summarizer_gets_requests_sized_to_its_own_window() -> None:
    model, results = _replay_with(8_192)
    assert [r for r in results if r.status == "compacted"]
    assert model.calls
    for call in model.calls:
        assert call.max_output_tokens is not None
        assert _sent(call) + call.max_output_tokens <= 8_192
        assert call.options.get("temperature") == 0.2
    assert all(r.fallback_reason is None for r in results if r.status == "compacted")


def test_sized_from_the_conversations_window_a_smaller_summarizer_overflows() -> None:
    """The counterfactual (this test can fail): without its own window, requests are sized
    from the 128k conversation's."""
    model, _ = _replay_with(None)
    assert any(_sent(c) + (c.max_output_tokens or 0) > 8_192 for c in model.calls)


def test_summarizer_limits_keep_a_margin_for_the_estimator() -> None:
    budget = compute_budget(128_000, 16_384)
    output, room = summarizer_limits(budget, 8_192)
    assert output <= 8_192 // 4
    assert (room * (1 + SUMMARY_ESTIMATE_MARGIN)) + output <= 8_192 + 1
    # a larger summarizer window never gives more than the conversation's own sizing
    assert summarizer_limits(budget, 1_000_000)[1] == summary_input_tokens(budget)
