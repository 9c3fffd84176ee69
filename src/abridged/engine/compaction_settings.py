"""The compaction settings: how the compactor prunes, cuts, pins and backs off.

The token thresholds (trigger, target, keep, summary ceiling) are the budget's
(``abridged.core.budget.BudgetSettings``); ``CompactionSettings`` holds the rest, and
``prune_settings`` the prune settings in force for a budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from annotated_types import Ge

from abridged.core.budget import Budget
from abridged.core.fields import Flag, NonNegative, Positive, Ratio, check_fields
from abridged.core.turns import DEFAULT_MIN_SPLIT_TURN_MESSAGES
from abridged.engine.prune import PruneSettings


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """How the compactor prunes, cuts, pins and backs off; every field is validated.

    The token thresholds (trigger, target, keep, summary ceiling) are the budget's
    (``abridged.core.budget.BudgetSettings``); these are the rest.

    - ``prune`` (default ``None``: derived from the budget by ``prune_settings``): how tool
      outputs are pruned (``abridged.engine.prune.PruneSettings``).
    - ``prune_enabled`` (default ``True``): prune before summarizing (cheapest step first).
    - ``max_messages`` (default ``None``; an integer >= 4 otherwise): also compact when the
      context holds more messages than this; the cut then keeps at most half of them.
    - ``pin_first_task`` (default ``True``): the conversation's first user message is pinned
      (sent verbatim in every context) when it holds at most ``pin_first_task_max_tokens``
      tokens and at most a quarter of the input budget (``PIN_TASK_SHARE``): the task is what
      every later step serves, and laid out before the summary it stays in the cached prefix.
    - ``pin_first_task_max_tokens`` (default 4,096; integer >= 0).
    - ``min_split_turn_messages`` (default 5; integer >= 1): from this many messages on, the
      earlier part of a turn cut in two is summarized as a turn in progress (the summary says
      the turn goes on, and what it was doing).
    - ``backoff_max_calls`` (default 64; integer >= 1): the longest pause of automatic
      compaction after compactions that miss the target.
    - ``emergency_keep_share`` (default 0.25; in (0, 1]): the emergency path's first stage keeps
      this share of ``keep_recent`` verbatim.
    - ``headroom_steps`` (default 8; integer >= 0, 0 switches it off): how many recent steps
      the ``headroom`` trigger looks at for the size of the next one.

    >>> CompactionSettings(max_messages=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    abridged.errors.SettingError: setting max_messages=2 is invalid: expected None or an ...
    """

    prune: PruneSettings | None = None
    prune_enabled: Flag = True
    max_messages: Annotated[int, Ge(4)] | None = None
    pin_first_task: Flag = True
    pin_first_task_max_tokens: NonNegative = 4_096
    min_split_turn_messages: Positive = DEFAULT_MIN_SPLIT_TURN_MESSAGES
    backoff_max_calls: Positive = 64
    emergency_keep_share: Ratio = 0.25
    headroom_steps: NonNegative = 8

    def __post_init__(self) -> None:
        check_fields(self)


def prune_settings(settings: CompactionSettings, budget: Budget) -> PruneSettings:
    """The prune settings in force: the explicit ones, each threshold left unset sized to the
    budget (a tool policy alone never changes how much is protected).

    The defaults protect the ``keep_recent`` newest tokens (what a cut would keep anyway) and
    skip a prune that frees less than 5% of the input budget (at most 4,096 tokens): on a small
    window the fixed defaults of ``PruneSettings`` would protect, or require, the whole window.

    >>> from abridged.core.budget import compute_budget
    >>> p = prune_settings(CompactionSettings(), compute_budget(16_384, 4_096))
    >>> p.protect_recent_tokens, p.min_savings_tokens
    (1689, 563)
    """
    given = settings.prune if settings.prune is not None else PruneSettings()
    return given.fill(
        protect_recent=budget.keep_recent,
        min_savings=min(4_096, budget.input_budget // 20),
        min_result=min(256, max(1, budget.keep_recent // 8)),
    )
