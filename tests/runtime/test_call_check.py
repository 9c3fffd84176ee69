"""The check before a conversation's model call: each step decided from the size, by stage."""

from __future__ import annotations

import inspect
from dataclasses import replace

import pytest

from abridged.core.budget import compute_budget
from abridged.runtime.call_check import CallStep, Stage, call_step
from abridged.runtime.turn import TurnLoop

BUDGET = compute_budget(16_384, 4_096)  # input budget 11,264
LIMIT = BUDGET.input_budget
UNDER, NEAR, OVER = 2_000, LIMIT - 100, LIMIT + 2_000


@pytest.mark.parametrize(
    ("size", "stage", "running", "background", "expected"),
    [
        # first: plan when it fits and nothing runs (in the background, or awaited)
        (UNDER, "first", False, True, ("start", "count")),
        (UNDER, "first", False, False, ("compact", "count")),
        # first: a compaction running is waited for only when the context does not fit
        (UNDER, "first", True, True, ("send", "last")),
        (OVER, "first", True, True, ("wait", "count")),
        # over, nothing running: straight to the foreground fit
        (OVER, "first", False, True, ("fit", "last")),
        # fit: a compaction started in the first stage is waited for, then the fit
        (OVER, "fit", True, True, ("wait", "last")),
        (OVER, "last", False, True, ("fit", "last")),
        (UNDER, "last", False, True, ("send", "last")),
    ],
)
def test_each_stage_decides_one_thing(
    size: int, stage: Stage, running: bool, background: bool, expected: tuple[str, str]
) -> None:
    step = call_step(size, BUDGET, stage=stage, running=running, background=background)
    assert step == CallStep(*expected)  # type: ignore[arg-type]


def test_a_size_near_the_budget_is_counted_only_when_the_model_can() -> None:
    assert call_step(NEAR, BUDGET, stage="count", count_margin=0.05).action == "count"
    assert call_step(NEAR, BUDGET, stage="count", count_margin=None).action == "send"
    assert call_step(UNDER, BUDGET, stage="count", count_margin=0.05).action == "send"
    # just over the budget, within the margin: counted first, the fit only if the count agrees
    assert call_step(LIMIT + 100, BUDGET, stage="count", count_margin=0.05).action == "count"
    assert call_step(LIMIT + 100, BUDGET, stage="fit").action == "fit"


def test_without_compaction_or_recovery_an_oversized_context_is_sent() -> None:
    off = replace(BUDGET, enabled=False, overflow_recovery=False)
    assert call_step(OVER, off, stage="fit", running=True) == CallStep("send", "last")
    assert call_step(OVER, replace(off, overflow_recovery=True), stage="fit").action == "fit"


def test_every_path_ends_within_five_steps() -> None:
    # whatever the sizes measured after each step, the stages only move forward
    order: list[Stage] = ["first", "count", "fit", "last"]
    for size in (UNDER, NEAR, OVER):
        for running in (False, True):
            stage: Stage = "first"
            for _ in range(5):
                step = call_step(size, BUDGET, stage=stage, running=running, count_margin=0.05)
                assert order.index(step.stage) >= order.index(stage)
                if step.action in ("send", "fit"):
                    break
                stage = step.stage
            else:
                pytest.fail(f"no end for size {size}, running {running}")


def test_the_conversation_only_does_what_the_manager_decides() -> None:
    source = inspect.getsource(TurnLoop._before_call)
    assert "call_step" in source
    assert "input_budget" not in source and "exact_count_margin *" not in source
