"""What a replay reports of each call, compaction and session, built from the manager's steps.

Per call: the context size, what was done (``send``, ``prune``, ``compact``, ``recover``), the
tokens before and after, an estimate of the prompt-cache hit (the prefix identical to the
previous call's context is read from the cache) and, when the model's prices are known, an
estimate of the call's cost. Plain functions of values; the ``Replayer`` calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from abridged.core.budget import Budget
from abridged.core.model import Message, usage_to_dict
from abridged.core.turns import split_turns
from abridged.core.windows import ModelLimits, Pricing
from abridged.engine.compaction import CompactionResult
from abridged.errors import ContextOverflowError
from abridged.events.engine import (
    CompactionEnded,
    CompactionStarted,
    Event,
    OverflowRecovered,
    Pruned,
)
from abridged.runtime.replay.schema import (
    Action,
    BudgetReport,
    CompactionReport,
    LimitsReport,
    PricingReport,
    RunTotals,
    SessionReport,
    StepReport,
    StoppedReport,
    Totals,
)

__all__ = [
    "action_of",
    "budget_report",
    "cached_tokens",
    "compaction_report",
    "limits_report",
    "overflow_step",
    "run_totals",
    "session_totals",
    "stopped_report",
]


def cost(pricing: Pricing | None, uncached: int, cached: int, output: int) -> float | None:
    """A call's cost at list prices; ``None`` when the prices are not known."""
    if pricing is None:
        return None
    return pricing.cost(input=uncached, output=output, cache_read=cached)


def action_of(events: Sequence[Event]) -> tuple[Action, int | None, int | None, bool]:
    """What a call's events did: action, tokens before and after, and whether it pruned."""
    action: Action = "send"
    before: int | None = None
    after: int | None = None
    pruned = False
    for event in events:
        if isinstance(event, CompactionStarted) and before is None:
            before = event.tokens_before
        elif isinstance(event, Pruned):
            pruned = True
        elif isinstance(event, CompactionEnded):
            if before is None:
                before = event.tokens_before
            if event.status == "compacted":
                action, after = "compact", event.tokens_after
            elif event.status == "pruned":
                after = event.tokens_after
                if action == "send":
                    action = "prune"
        elif isinstance(event, OverflowRecovered):
            action, after = "recover", event.tokens_after
    return action, before, after, pruned


def cached_tokens(
    previous: Sequence[Message],
    context: Sequence[Message],
    tokens: int,
    *,
    same_epoch: bool,
    previous_tokens: int,
    count: Callable[[Message], int],
) -> int:
    """The estimated cache hit of a call: all of the previous context when nothing was
    compacted or pruned since (``same_epoch``), else the prefix identical to it."""
    if same_epoch:
        return min(previous_tokens, tokens)
    cached = 0
    for old, new in zip(previous, context, strict=False):
        if old is not new and old != new:
            break
        cached += count(new)
    return min(cached, tokens)


def compaction_report(result: CompactionResult, call: int) -> CompactionReport:
    """A compaction that made a summary, as the replay reports it."""
    return CompactionReport(
        call=call,
        trigger=result.plan.trigger,
        emergency=result.plan.emergency,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        messages_before=result.messages_before,
        messages_after=result.messages_after,
        first_kept=result.first_kept,
        summarizer=result.summarizer,
        truncated=result.truncated,
        fallback_reason=result.fallback_reason,
        summary_usage=usage_to_dict(result.summary_usage),
        seconds=round(result.duration, 3),
        summary=result.summary_text or "",
    )


def stopped_report(
    error: ContextOverflowError, call: int, budget: Budget, limits: ModelLimits
) -> StoppedReport:
    """Where the replay stopped: the call no compaction could fit."""
    limit = error.limit if error.limit is not None else budget.input_budget
    stage = error.context.get("stage")
    return StoppedReport(
        call=call,
        reason=error.message,
        tokens=int(error.tokens or 0),
        limit=int(limit),
        window=limits.context_window,
        stage=None if stage is None else str(stage),
    )


def overflow_step(session: str, stopped: StoppedReport, limits: ModelLimits) -> StepReport:
    """The call that could not be made: nothing was sent."""
    return StepReport(
        session=session,
        call=stopped.call,
        index=None,
        context_tokens=stopped.tokens,
        context_messages=None,
        action="overflow",
        pruned=False,
        tokens_before=stopped.tokens,
        tokens_after=None,
        cached_tokens=0,
        output_tokens=0,
        cost=cost(limits.pricing, 0, 0, 0),
        recorded_context_tokens=None,
        over_budget=True,
        over_window=stopped.tokens > limits.context_window,
        events=[stopped.reason],
    )


def limits_report(limits: ModelLimits) -> LimitsReport:
    """The limits a session was replayed with."""
    pricing = limits.pricing
    return LimitsReport(
        context_window=limits.context_window,
        max_output=limits.max_output,
        source=limits.source,
        known=limits.known,
        pricing=None
        if pricing is None
        else PricingReport(
            input=pricing.input, output=pricing.output, cache_read=pricing.cache_read
        ),
    )


def budget_report(budget: Budget | None) -> BudgetReport | None:
    """The budget a session's calls were planned against (none when call 1 stopped)."""
    if budget is None:
        return None
    return BudgetReport(
        input_budget=budget.input_budget,
        trigger=budget.trigger,
        target=budget.target,
        keep_recent=budget.keep_recent,
        summary_max=budget.summary_max,
        output_reserve=budget.output_reserve,
    )


def session_totals(
    steps: Sequence[StepReport],
    messages: Sequence[Message],
    *,
    window: int,
    compactions: int,
    seconds: float,
    stopped: bool,
    hidden_prefix: int,
) -> Totals:
    """One session's figures."""
    # a call that could not be made (``overflow``: the replay stopped there) sent nothing
    input_tokens = sum(s.context_tokens for s in steps if s.action != "overflow")
    cached = sum(s.cached_tokens for s in steps)
    costs = [s.cost for s in steps]
    recorded = [s.recorded_context_tokens for s in steps if s.recorded_context_tokens]
    return Totals(
        calls=len(steps),
        turns=len(split_turns(messages)),
        messages=len(messages),
        prunes=sum(1 for s in steps if s.pruned),
        compactions=compactions,
        recoveries=sum(1 for s in steps if s.action == "recover"),
        max_context_tokens=max((s.context_tokens for s in steps), default=0),
        overflows=sum(1 for s in steps if s.context_tokens > window),
        over_budget=sum(1 for s in steps if s.over_budget),
        input_tokens=input_tokens,
        cached_tokens=cached,
        cache_hit=round(cached / input_tokens, 4) if input_tokens else 0.0,
        output_tokens=sum(s.output_tokens for s in steps),
        cost=round(sum(c for c in costs if c is not None), 6)
        if costs and all(c is not None for c in costs)
        else None,
        recorded_input_tokens=sum(r for r in recorded if r is not None) if recorded else None,
        seconds=round(seconds, 3),
        stopped=1 if stopped else 0,
        hidden_prefix=hidden_prefix,
    )


_SUMMED = (
    "calls",
    "turns",
    "messages",
    "prunes",
    "compactions",
    "recoveries",
    "overflows",
    "over_budget",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "stopped",
)


def run_totals(sessions: Sequence[SessionReport], seconds: float) -> RunTotals:
    """The whole run's figures: the sessions' summed, priced sessions' costs summed and the
    models without prices named (``unpriced``)."""
    summed = {k: sum(getattr(s.totals, k) for s in sessions) for k in _SUMMED}
    costs = [s.totals.cost for s in sessions if s.totals.cost is not None]
    recorded = [s.totals.recorded_input_tokens for s in sessions]
    return RunTotals(
        **summed,
        sessions=len(sessions),
        hidden_prefix=max((s.totals.hidden_prefix for s in sessions), default=0),
        max_context_tokens=max((s.totals.max_context_tokens for s in sessions), default=0),
        cache_hit=round(summed["cached_tokens"] / summed["input_tokens"], 4)
        if summed["input_tokens"]
        else 0.0,
        cost=round(sum(costs), 6) if costs else None,
        unpriced=sorted({str(s.model or "unknown") for s in sessions if s.totals.cost is None}),
        recorded_input_tokens=sum(r for r in recorded if r) if any(recorded) else None,
        seconds=round(seconds, 3),
        calls_per_second=round(summed["calls"] / seconds, 1) if seconds > 0 else None,
        turns_per_second=round(summed["turns"] / seconds, 2) if seconds > 0 else None,
        stored_consistent=all(s.stored.consistent for s in sessions),
    )
