"""What a conversation does before a model call, decided from its context's size (pure).

The check runs in stages, each deciding one thing from the size measured after the last step
(``call_step``); the conversation does what it says (plans and spawns its compaction task,
waits for it, counts, fits) and asks again, until ``send`` or ``fit``:

1. ``first``: a context over the input budget waits for the compaction running, if any; one
   within it, with nothing running, is planned now (the plan says whether a trigger fires),
   compacted in the background (``start``) or, without background compaction, awaited
   (``compact``);
2. ``count``: a size within the margin of the input budget is counted exactly (``count``),
   when the model can count;
3. ``fit``: a context still over the input budget (compaction or overflow recovery on) waits
   for the compaction running, if any, then (``last``) compacts in the foreground until it
   fits (``fit``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from abridged.core.budget import Budget

__all__ = ["Action", "CallStep", "Stage", "call_step"]

Stage = Literal["first", "count", "fit", "last"]
Action = Literal["send", "start", "compact", "wait", "count", "fit"]


@dataclass(frozen=True, slots=True)
class CallStep:
    """What to do now (``action``), and the stage to ask at next, with the size measured after
    it (after ``send`` and ``fit`` the check is over)."""

    action: Action
    stage: Stage


def call_step(
    size: int,
    budget: Budget,
    *,
    stage: Stage = "first",
    running: bool = False,
    background: bool = True,
    count_margin: float | None = None,
) -> CallStep:
    """The next step of the check before a call (see the module docstring), for a context of
    ``size`` tokens under ``budget`` (the one the check began with). ``running``: a compaction
    is running; ``background``: a compaction started here may run in the background;
    ``count_margin``: how close to the input budget an estimate is counted exactly (``None``:
    the model cannot count).

    >>> from abridged.core.budget import compute_budget
    >>> b = compute_budget(16_384, 4_096)
    >>> b.input_budget
    11264
    >>> call_step(2_000, b)
    CallStep(action='start', stage='count')
    >>> call_step(12_000, b, running=True)
    CallStep(action='wait', stage='count')
    >>> call_step(11_000, b, stage="count", count_margin=0.05)
    CallStep(action='count', stage='fit')
    >>> call_step(12_000, b, stage="count")
    CallStep(action='fit', stage='last')
    >>> call_step(12_000, b, stage="fit", running=True), call_step(2_000, b, stage="last")
    (CallStep(action='wait', stage='last'), CallStep(action='send', stage='last'))
    """
    limit = budget.input_budget
    if stage == "first":
        if size > limit and running:
            return CallStep("wait", "count")
        if size <= limit and not running:
            return CallStep("start" if background else "compact", "count")
        stage = "count"
    if stage == "count":
        if count_margin is not None and limit * (1 - count_margin) <= size <= limit * (
            1 + count_margin
        ):
            return CallStep("count", "fit")
        stage = "fit"
    if stage == "fit":
        if not (size > limit and (budget.enabled or budget.overflow_recovery)):
            return CallStep("send", "last")
        if running:
            return CallStep("wait", "last")
    if size > limit:
        return CallStep("fit", "last")
    return CallStep("send", "last")
