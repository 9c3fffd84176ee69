"""Tests of the runtime's shared driver pieces: which summarizer a compaction gets, and how big
its requests may be."""

from __future__ import annotations

from abridged.core.budget import compute_budget
from abridged.core.tokens import TokenCounter
from abridged.engine.summarize import ExtractiveSummarizer, LLMSummarizer
from abridged.providers.scripted import ScriptedModel
from abridged.runtime.driver import SummarizerFactory, summary_input_tokens, summary_output_tokens

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
