"""When to compact: the triggers and the progress guard's backoff.

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
from typing import Literal, TypeAlias, get_args

from abridged.core.budget import Budget, format_token_size
from abridged.core.model import Message
from abridged.core.turns import TokenCount
from abridged.engine.compaction_settings import CompactionSettings

Trigger: TypeAlias = Literal["tokens", "headroom", "messages", "manual", "overflow"]
TRIGGERS: tuple[Trigger, ...] = get_args(Trigger)

#: The smallest summary worth making on the emergency path (tokens).
MIN_EMERGENCY_SUMMARY_TOKENS = 64


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
