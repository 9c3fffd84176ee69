"""Tests of the triggers, the derived prune settings and the progress guard's backoff."""

from __future__ import annotations

from abridged.core.budget import BudgetSettings, compute_budget
from abridged.engine.compaction_settings import CompactionSettings, prune_settings
from abridged.engine.prune import PruneSettings
from abridged.engine.triggers import Backoff, choose_trigger, trigger_reason

BUDGET = compute_budget(16_384, 4_096)
SETTINGS = CompactionSettings()


def trigger(tokens: int, messages: int = 10, **kwargs: object) -> str | None:
    values: dict[str, object] = {
        "budget": BUDGET,
        "settings": SETTINGS,
        "backoff": Backoff(),
        "calls": 1,
    }
    values.update(kwargs)
    return choose_trigger(tokens, messages, **values)  # type: ignore[arg-type]


def test_the_order_of_the_triggers() -> None:
    assert trigger(BUDGET.trigger - 1) is None
    assert trigger(BUDGET.trigger) == "tokens"
    assert trigger(BUDGET.input_budget + 1) == "overflow"
    assert trigger(10, manual=True) == "manual"
    limited = CompactionSettings(max_messages=8)
    assert trigger(10, 9, settings=limited) == "messages"
    assert trigger(10, 8, settings=limited) is None


def test_switched_off_compaction_still_recovers_from_overflow() -> None:
    off = compute_budget(16_384, 4_096, BudgetSettings(enabled=False))
    assert trigger(off.trigger, budget=off) is None
    assert trigger(off.input_budget + 1, budget=off) == "overflow"
    neither = compute_budget(16_384, 4_096, BudgetSettings(enabled=False, overflow_recovery=False))
    assert trigger(neither.input_budget + 1, budget=neither) is None


def test_backoff_pauses_automatic_compaction_only() -> None:
    paused = Backoff(failures=1, until=5)
    assert trigger(BUDGET.trigger, backoff=paused, calls=4) is None
    assert trigger(BUDGET.trigger, backoff=paused, calls=5) == "tokens"
    assert trigger(BUDGET.input_budget + 1, backoff=paused, calls=4) == "overflow"
    assert trigger(1, backoff=paused, calls=4, manual=True) == "manual"


def test_backoff_doubles_and_is_capped() -> None:
    backoff, calls, pauses = Backoff(), 0, []
    for _ in range(10):
        backoff = backoff.after(reached_target=False, calls=calls, max_calls=16)
        pauses.append(backoff.until - calls - 1)
        calls = backoff.until
    assert pauses == [1, 2, 4, 8, 16, 16, 16, 16, 16, 16]
    assert backoff.after(reached_target=True, calls=calls, max_calls=16) == Backoff()


def test_prune_settings_follow_the_budget_unless_given() -> None:
    derived = prune_settings(SETTINGS, BUDGET)
    assert derived.protect_recent_tokens == BUDGET.keep_recent
    assert derived.min_savings_tokens == BUDGET.input_budget // 20
    big = compute_budget(200_000, 32_000)
    assert prune_settings(SETTINGS, big).min_savings_tokens == 4_096
    explicit = PruneSettings(protect_recent_tokens=900, min_savings_tokens=50, min_result_tokens=9)
    assert prune_settings(CompactionSettings(prune=explicit), BUDGET) is explicit
    # a knob given alone leaves the thresholds sized to the budget (issue 29's trap)
    steps = prune_settings(CompactionSettings(prune=PruneSettings(protect_recent_steps=9)), BUDGET)
    assert steps.protect_recent_steps == 9
    assert steps.protect_recent_tokens == derived.protect_recent_tokens


def test_reasons_name_the_thresholds() -> None:
    assert trigger_reason("overflow", 12_000, 5, BUDGET, SETTINGS) == (
        "context 11.7k > input budget 11k"
    )
    limited = CompactionSettings(max_messages=8)
    assert trigger_reason("messages", 10, 9, BUDGET, limited) == (
        "context holds 9 messages > max_messages 8"
    )
    assert trigger_reason("manual", 10, 9, BUDGET, SETTINGS) == "requested"


def test_call_trigger_says_whether_plan_compaction_plans() -> None:
    """``call_trigger`` (checked on a caller's event loop) and ``plan_compaction`` agree on
    whether there is anything to plan, at every size around the thresholds."""
    from abridged.core.model import Message
    from abridged.core.tokens import estimate_message_tokens
    from abridged.engine.context import CompactionState
    from abridged.engine.plan import call_trigger, plan_compaction

    budget = compute_budget(16_384, 4_096)
    settings = CompactionSettings()
    history = [Message.system("s"), Message.user("task")]
    for k in range(12):
        history += [Message.assistant(f"step {k} " * 40), Message.user(f"more {k} " * 40)]
    for state in (CompactionState(), CompactionState(calls=3)):
        for tokens in range(0, budget.input_budget + 2_000, 250):
            args = {
                "budget": budget,
                "settings": settings,
                "state": state,
                "count_tokens": estimate_message_tokens,
                "context_tokens": tokens,
            }
            planned = plan_compaction(history, **args)  # type: ignore[arg-type]
            assert (call_trigger(history, **args) is None) == (planned is None), tokens  # type: ignore[arg-type]
