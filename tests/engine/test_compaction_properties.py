"""Property tests of the invariants the compactor owns: pairing, budget, progress, deterministic
planning, cache-stable prefix, and nothing summarized away unseen."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.budget import Budget
from abridged.core.model import Message, message_to_dict
from abridged.engine.compaction import CompactionState, plan_compaction
from tests.engine.strategies_compaction import Call, FillingSummarizer, budgets, replay
from tests.strategies import assert_valid_context, conversations, count_tokens, pinned_indexes

AUTOMATIC = ("tokens", "messages")


def calls_of(messages: list[Message], budget: Budget) -> list[Call]:
    return list(replay(messages, budget, summarizer=FillingSummarizer()))


def wire(message: Message) -> str:
    return json.dumps(message_to_dict(message), sort_keys=True)


@settings(max_examples=40)
@given(conversations(), budgets())
def test_every_context_is_paired_and_within_budget(messages: list[Message], budget: Budget) -> None:
    for call in calls_of(messages, budget):
        assert_valid_context(messages, call.context)
        assert call.tokens <= budget.input_budget, (call.index, call.tokens)


@settings(max_examples=40)
@given(conversations(), budgets())
def test_automatic_compaction_never_runs_twice_in_a_row_without_shrinking(
    messages: list[Message], budget: Budget
) -> None:
    previous_stuck = False
    for call in calls_of(messages, budget):
        automatic = [r for r in call.results if r.plan.trigger in AUTOMATIC]
        if previous_stuck:
            assert not automatic, f"compacted again at {call.index} without progress"
        stuck = False
        for result in automatic:
            assert not stuck, "two automatic compactions in one call without progress"
            stuck = result.status != "cancelled" and result.tokens_after >= result.tokens_before
        previous_stuck = stuck
        assert len(call.results) <= 4


@settings(max_examples=40)
@given(conversations(), budgets(), st.data())
def test_planning_is_deterministic(
    messages: list[Message], budget: Budget, data: st.DataObject
) -> None:
    pins = data.draw(pinned_indexes(messages))
    state = CompactionState()
    for call in calls_of(messages, budget)[:: max(1, len(messages) // 5)]:
        state = call.state
        history = messages[: call.index]
        first = plan_compaction(
            history, budget=budget, state=state, count_tokens=count_tokens, pinned=pins
        )
        again = plan_compaction(
            list(history), budget=budget, state=state, count_tokens=count_tokens, pinned=set(pins)
        )
        assert first == again


@settings(max_examples=40)
@given(conversations(), budgets())
def test_the_sent_prefix_is_byte_identical_between_compactions(
    messages: list[Message], budget: Budget
) -> None:
    previous: list[str] | None = None
    for call in calls_of(messages, budget):
        sent = [wire(m) for m in call.context]
        if previous is not None and not any(r.changed for r in call.results):
            assert sent[: len(previous)] == previous
        previous = sent


@settings(max_examples=40)
@given(conversations(), budgets())
def test_nothing_leaves_the_context_without_being_summarized(
    messages: list[Message], budget: Budget
) -> None:
    summarized: set[int] = set()
    for call in calls_of(messages, budget):
        for result in call.results:
            if result.status == "compacted":
                summarized.update(result.plan.summarize)
                summarized.update(result.plan.turn_prefix)
        state = call.state
        sent = {m.id for m in call.context}
        for index in range(call.index):
            if messages[index].id not in sent and index not in state.pruned:
                assert index in summarized, f"message {index} vanished unsummarized"
