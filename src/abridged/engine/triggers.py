"""When to compact: the compaction settings, the triggers, the progress guard's backoff.

A conversation is checked at every step boundary (before each model call). The trigger, in order:

1. ``manual``: the user asked (``/compact``), with optional focus instructions; it ignores the
   thresholds and the backoff, and cuts even a history under ``keep_recent`` (``force``).
2. ``overflow``: the context does not fit the input budget. It ignores ``enabled`` (when
   ``overflow_recovery`` is on) and the backoff, and ``before_compact`` cannot cancel it.
3. Nothing automatic while compaction is switched off (``Budget.enabled``) or backing off.
4. ``tokens``: the context reached ``Budget.trigger`` (``trigger_ratio`` of the input budget).
5. ``headroom``: the context is above the target and one more step as large as the largest of
   the last ``CompactionSettings.headroom_steps`` would not fit the input budget: compacting
   now, ahead of the call, beats the forced compaction of an overflow one step later.
6. ``messages``: the context holds more than ``CompactionSettings.max_messages`` messages.

**Progress guard.** A compaction that does not get the context down to the target is reported,
and automatic compaction backs off for the conversation, exponentially, counted in model calls:
after the k-th such compaction in a row it is skipped for ``min(2 ** (k - 1),
backoff_max_calls)`` calls. A compaction that reaches the target resets the count. Together with
the usage boundary (a usage report from before a compaction never counts) this makes a compaction
loop impossible: two automatic compactions in a row without shrinking the context cannot happen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal, TypeAlias, get_args

from annotated_types import Ge

from abridged.core.budget import Budget, format_token_size
from abridged.core.fields import Flag, NonNegative, Positive, Ratio, check_fields
from abridged.core.model import Message
from abridged.core.turns import DEFAULT_MIN_SPLIT_TURN_MESSAGES, TokenCount
from abridged.engine.prune import PruneSettings

Trigger: TypeAlias = Literal["tokens", "headroom", "messages", "manual", "overflow"]
TRIGGERS: tuple[Trigger, ...] = get_args(Trigger)

#: The smallest summary worth making on the emergency path (tokens).
MIN_EMERGENCY_SUMMARY_TOKENS = 64


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


@dataclass(frozen=True, slots=True)
class Backoff:
    """The progress guard's counters, carried in the compaction state.

    ``failures`` counts the compactions in a row that missed the target; ``until`` is the model
    call number from which automatic compaction may run again.
    """

    failures: int = 0
    until: int = 0

    def active(self, calls: int) -> bool:
        """Whether automatic compaction is paused at model call ``calls``."""
        return calls < self.until

    def after(
        self, *, reached_target: bool, calls: int, max_calls: int, progressed: bool = False
    ) -> Backoff:
        """The counters after a compaction at call ``calls``. ``progressed``: it freed enough
        to count as progress although it ended above the target: no failure, but no second
        automatic compaction in the same call (the next call may try again).

        >>> b = Backoff().after(reached_target=False, calls=10, max_calls=64)
        >>> b, b.after(reached_target=False, calls=12, max_calls=64).until
        (Backoff(failures=1, until=12), 15)
        >>> b.after(reached_target=True, calls=12, max_calls=64)
        Backoff(failures=0, until=0)
        >>> b.after(reached_target=False, progressed=True, calls=12, max_calls=64)
        Backoff(failures=0, until=13)
        """
        if reached_target:
            return Backoff()
        if progressed:
            return Backoff(failures=0, until=calls + 1)
        failures = self.failures + 1
        pause = min(2 ** min(failures - 1, 30), max_calls)
        return Backoff(failures=failures, until=calls + 1 + pause)


def choose_trigger(
    context_tokens: int,
    context_messages: int,
    budget: Budget,
    settings: CompactionSettings,
    *,
    backoff: Backoff,
    calls: int,
    manual: bool = False,
    next_step_tokens: int = 0,
) -> Trigger | None:
    """Which trigger fires for a context of ``context_tokens`` and ``context_messages``, if any;
    ``next_step_tokens`` is how large the next step may be (``recent_step_tokens``).

    See the module docstring for the order. Pure and O(1).

    >>> from abridged.core.budget import compute_budget
    >>> b = compute_budget(16_384, 4_096)
    >>> s = CompactionSettings()
    >>> b.trigger
    9574
    >>> choose_trigger(9_700, 40, b, s, backoff=Backoff(), calls=3)
    'tokens'
    >>> choose_trigger(9_700, 40, b, s, backoff=Backoff(1, 5), calls=3) is None
    True
    >>> choose_trigger(12_000, 40, b, s, backoff=Backoff(1, 5), calls=3)
    'overflow'
    """
    if manual:
        return "manual"
    if context_tokens > budget.input_budget and (budget.overflow_recovery or budget.enabled):
        return "overflow"
    if not budget.enabled or backoff.active(calls):
        return None
    if context_tokens >= budget.trigger:
        return "tokens"
    headroom = budget.input_budget - context_tokens
    if context_tokens > budget.target and next_step_tokens > headroom:
        return "headroom"
    if settings.max_messages is not None and context_messages > settings.max_messages:
        return "messages"
    return None


def recent_step_tokens(messages: Sequence[Message], count_tokens: TokenCount, steps: int) -> int:
    """The largest of the last ``steps`` steps of ``messages`` (an assistant message and what
    follows it up to the next one), in tokens: how much one more step may add. Reads only
    those steps (O(steps)), never the whole history.

    >>> from abridged.core.model import Message
    >>> history = [Message.user("go"), Message.assistant("a"), Message.user("x" * 400)]
    >>> recent_step_tokens(history, lambda m: len(m.text) // 4, 4)
    100
    """
    if steps <= 0:
        return 0
    largest = current = 0
    seen = 0
    for message in reversed(messages):
        if message.role == "system" or message.is_summary:
            break
        current += count_tokens(message)
        if message.role == "assistant":
            largest = max(largest, current)
            current = 0
            seen += 1
            if seen >= steps:
                break
    return largest


def trigger_reason(
    trigger: Trigger,
    context_tokens: int,
    context_messages: int,
    budget: Budget,
    settings: CompactionSettings,
    *,
    next_step_tokens: int = 0,
) -> str:
    """Why the trigger fired, for people.

    >>> from abridged.core.budget import compute_budget
    >>> trigger_reason("tokens", 9_700, 40, compute_budget(16_384, 4_096), CompactionSettings())
    'context 9.5k >= trigger 9.3k'
    """
    size = format_token_size(context_tokens)
    if trigger == "tokens":
        return f"context {size} >= trigger {format_token_size(budget.trigger)}"
    if trigger == "headroom":
        return (
            f"context {size} + a step of up to {format_token_size(next_step_tokens)} > input "
            f"budget {format_token_size(budget.input_budget)}"
        )
    if trigger == "messages":
        return f"context holds {context_messages} messages > max_messages {settings.max_messages}"
    if trigger == "overflow":
        return f"context {size} > input budget {format_token_size(budget.input_budget)}"
    return "requested"
