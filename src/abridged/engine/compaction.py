"""The compactor: plan purely (``plan_compaction``), then summarize and commit (``run_compaction``).

::

    plan = plan_compaction(history, budget=budget, state=state)          # pure; None: nothing to do
    if plan is not None:
        result = await run_compaction(plan, summarizer, clock=time.monotonic)
        state = result.state                                      # the new state
    context = build_context(history, state)                       # what to send

``run_compaction`` runs the hooks (``before_compact`` may cancel an automatic compaction or
supply its own summary; it cannot cancel a forced one; ``after_compact`` sees the result), asks the
summarizer (and, when it fails, the fallback: the extractive summarizer by default), redacts
secrets from the summary, and returns a ``CompactionResult`` with the new state and the events.
History is never dropped because a summary failed: without a summary the cut is not made.

The engine has no clock and no event loop: pass ``clock`` (``time.monotonic``) to measure the
duration, and ``gather`` (``asyncio.gather``) to run a plan's summary requests concurrently.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

from abridged.core.model import Message, Usage
from abridged.core.protocols import FileOps, Summarizer, Summary, SummaryRequest
from abridged.core.summary import summary_message
from abridged.core.tokens import estimate_message_tokens
from abridged.core.turns import TokenCount
from abridged.engine.compaction_settings import CompactionSettings
from abridged.engine.context import (
    CompactionState,
    build_context,
    build_view,
    compose_summary,
)
from abridged.engine.plan import (
    CompactionPlan,
    context_length,
    context_tokens,
    plan_compaction,
    plan_emergency,
)
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.redact import redact
from abridged.errors import MessageValidationError
from abridged.events.engine import (
    CompactionBackoff,
    CompactionCancelled,
    CompactionEnded,
    CompactionStarted,
    EndStatus,
    Event,
    OverflowRecovered,
    Pruned,
    SummarizerFallback,
)

__all__ = [
    "AfterCompactHook",
    "BeforeCompact",
    "BeforeCompactHook",
    "CompactionHooks",
    "CompactionPlan",
    "CompactionResult",
    "CompactionSettings",
    "CompactionState",
    "build_context",
    "build_view",
    "compose_summary",
    "context_length",
    "context_tokens",
    "plan_compaction",
    "plan_emergency",
    "rebase",
    "run_compaction",
]


#: A compaction that frees at least this share (1/n) of the input budget made progress.
PROGRESS_SHARE = 10


@dataclass(frozen=True, slots=True)
class BeforeCompact:
    """What ``before_compact`` decides: ``cancel`` the compaction (ignored when the plan is
    forced), or use ``summary`` as the summary instead of asking the summarizer."""

    cancel: bool = False
    summary: str | None = None


BeforeCompactHook: TypeAlias = Callable[
    [CompactionPlan], "BeforeCompact | Awaitable[BeforeCompact | None] | None"
]
AfterCompactHook: TypeAlias = Callable[["CompactionResult"], "Awaitable[None] | None"]
EventSink: TypeAlias = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class CompactionHooks:
    """Callbacks around a compaction; each may be a plain function or a coroutine function.

    - ``before_compact(plan)``: return ``BeforeCompact(cancel=True)`` to cancel an automatic or
      manual compaction (never a forced one), ``BeforeCompact(summary=...)`` to supply the
      summary, or ``None`` to go on.
    - ``after_compact(result)``: sees every result (cancelled and failed ones too).
    - ``on_event(event)``: every event, as it happens.
    """

    before_compact: BeforeCompactHook | None = None
    after_compact: AfterCompactHook | None = None
    on_event: EventSink | None = None


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """What a compaction did.

    - ``status``: ``compacted``, ``pruned``, ``cancelled``, ``failed`` or ``nothing`` (see
      ``CompactionEnded``); ``state``: the state after (the plan's state, with the backoff
      updated, when nothing changed).
    - ``summary``: the summary message (``meta["kind"] == "summary"``) the next contexts carry;
      ``summary_text`` its text (redacted); ``None`` when no summary was made.
    - ``first_kept`` / ``first_kept_id``: the first message of the verbatim tail.
    - ``tokens_before`` / ``tokens_after``, ``messages_before`` / ``messages_after``: the
      context's size before and after (after: estimated, the summary included).
    - ``file_ops``: cumulative; ``summarizer``: who made the summary (``"before_compact"`` for
      a hook's); ``truncated``: the summary was cut at its ceiling (it is kept);
      ``fallback_reason``: why the fallback summarizer made it; ``summary_usage``: what the
      summary calls cost, as their provider reported it (``None``: nothing reported, as with
      llama.cpp's streams, or no model call).
    - ``reached_target``: the context is at or below the target; otherwise automatic compaction
      backs off. ``duration``: seconds, by the clock passed to ``run_compaction`` (0 without one).
    - ``events``: what was reported, in order.
    """

    plan: CompactionPlan
    status: EndStatus
    state: CompactionState
    summary: Message | None
    summary_text: str | None
    first_kept: int
    first_kept_id: str | None
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    file_ops: FileOps
    summarizer: str | None
    truncated: bool
    reached_target: bool
    duration: float
    events: tuple[Event, ...]
    fallback_reason: str | None = None
    error: str | None = None
    summary_usage: Usage | None = None

    @property
    def changed(self) -> bool:
        """Whether the context changed (a summary, or a prune): its cached prefix is gone."""
        return self.state.epoch != self.plan.state.epoch


# -- committing --------------------------------------------------------------------------------


def commit_prune(plan: CompactionPlan) -> CompactionState:
    """The state with the plan's prune applied (and nothing else)."""
    state = plan.state
    if plan.prune is None:
        return state
    return replace(
        state,
        pruned={**state.pruned, **plan.pruned},
        prune_boundary=max(state.prune_boundary, plan.prune_boundary),
        epoch=state.epoch + 1,
        usage_boundary=plan.history_length,
    )


def commit_summary(plan: CompactionPlan, text: str, file_ops: FileOps) -> CompactionState:
    """The state after the plan's cut, with ``text`` as the summary."""
    state = plan.state
    pruned = {i: m for i, m in state.pruned.items() if i >= plan.first_kept}
    pruned.update((i, m) for i, m in plan.pruned.items() if i >= plan.first_kept)
    return replace(
        state,
        summary=text,
        file_ops=file_ops,
        cut=plan.first_kept,
        through_id=plan.through_id,
        carried=plan.carried,
        leading=plan.leading,
        prune_boundary=max(state.prune_boundary, plan.prune_boundary, plan.first_kept),
        pruned=pruned,
        epoch=state.epoch + 1,
        usage_boundary=plan.history_length,
        compactions=state.compactions + 1,
    )


def rebase(
    result: CompactionResult, history: Sequence[Message], current: CompactionState
) -> CompactionResult | None:
    """``result``, planned on the first ``plan.history_length`` messages, applied to ``history``
    (those messages and the ones appended while it ran), whose state is now ``current``.

    ``None`` when ``current`` is not the state the plan was made on (a prune or another
    compaction changed the context meanwhile: the result is stale and must be dropped). Usage
    reported on the messages appended meanwhile was measured on the old context: the usage
    boundary moves past them. The call count is ``current``'s (calls went on meanwhile).

    ``MessageValidationError`` when ``history`` is not a continuation of the planned one.
    """
    plan = result.plan
    if current.epoch != plan.state.epoch:
        return None
    if len(history) < plan.history_length:
        raise MessageValidationError(
            f"the history has {len(history)} messages, fewer than the {plan.history_length} "
            "the compaction was planned on",
            field="history",
        )
    last = plan.history_length - 1
    if last >= 0 and plan.last_id is not None and history[last].id != plan.last_id:
        raise MessageValidationError(
            f"message {last} is not the one the compaction was planned with (id "
            f"{history[last].id!r}, expected {plan.last_id!r}): the history was edited",
            index=last,
            field="id",
        )
    result.state.check(history)
    state = replace(result.state, calls=current.calls)
    if result.changed:
        state = replace(state, usage_boundary=max(state.usage_boundary, len(history)))
    return replace(result, state=state)


# -- summarizing -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Outcome:
    summary: Summary | None
    reason: str | None


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def _summarize_one(
    request: SummaryRequest, summarizer: Summarizer, fallback: Summarizer | None
) -> _Outcome:
    try:
        summary = await summarizer.summarize(request)
        if not summary.text.strip():
            raise ValueError("the summarizer returned an empty summary")
        return _Outcome(summary, None)
    except Exception as exc:  # any failure: fall back, never lose history
        reason = redact(f"{type(exc).__name__}: {exc}")[:300]
    if fallback is None:
        return _Outcome(None, reason)
    try:
        summary = await fallback.summarize(request)
    except Exception as exc:
        return _Outcome(None, f"{reason}; the fallback failed too: {type(exc).__name__}")
    if not summary.text.strip():
        return _Outcome(None, f"{reason}; the fallback's summary was empty")
    return _Outcome(replace(summary, fallback_reason=reason), reason)


# -- compact -----------------------------------------------------------------------------------


async def run_compaction(
    plan: CompactionPlan,
    summarizer: Summarizer | None = None,
    *,
    hooks: CompactionHooks | None = None,
    clock: Callable[[], float] | None = None,
    count_tokens: TokenCount = estimate_message_tokens,
    fallback: Summarizer | bool | None = True,
    gather: Callable[..., Awaitable[Sequence[Any]]] | None = None,
) -> CompactionResult:
    """Carry ``plan`` out: hooks, summary (with fallback), redaction, the new state, events.

    - ``summarizer``: who summarizes (default: ``ExtractiveSummarizer()``).
    - ``fallback``: who summarizes when ``summarizer`` raises or returns nothing: ``True`` (the
      default) is an ``ExtractiveSummarizer``, ``False``/``None`` none. When no summary can be
      made the status is ``failed``: the history stays as it was (the plan's prune still
      applies) and automatic compaction backs off.
    - ``count_tokens``: counts the summary message for ``tokens_after`` (use the same counter as
      ``plan_compaction``).
    - ``clock`` (seconds) measures ``duration``; ``gather`` (``asyncio.gather``) runs the two
      summaries of a split turn concurrently (sequentially without it).
    """
    hooks = hooks if hooks is not None else CompactionHooks()
    summarizer = summarizer if summarizer is not None else ExtractiveSummarizer()
    backup: Summarizer | None
    if fallback is True:
        backup = None if isinstance(summarizer, ExtractiveSummarizer) else ExtractiveSummarizer()
    elif fallback is False or fallback is None:
        backup = None
    else:
        backup = fallback
    run = _Run(plan, hooks, clock, count_tokens)
    run.emit(
        CompactionStarted(
            trigger=plan.trigger,
            reason=plan.reason,
            tokens_before=plan.tokens_before,
            messages_before=plan.messages_before,
            forced=plan.forced,
            emergency=plan.emergency,
        )
    )
    decision: BeforeCompact | None = None
    if hooks.before_compact is not None and plan.action != "nothing":
        decision = await _maybe_await(hooks.before_compact(plan))
    if decision is not None and decision.cancel and not plan.forced:
        run.emit(CompactionCancelled(trigger=plan.trigger, tokens=plan.tokens_before))
        return await run.finish("cancelled", plan.state)
    if plan.action == "nothing":
        return await run.finish("nothing", plan.state)
    if plan.action == "prune":
        return await run.finish("pruned", commit_prune(plan))

    custom = decision.summary if decision is not None else None
    if custom is not None and custom.strip():
        made = _Made(custom, "before_compact", plan.file_ops, False, None)
    else:
        outcome = await _make_summary(plan, summarizer, backup, gather, run.emit)
        if isinstance(outcome, str):
            return await run.finish("failed", commit_prune(plan), error=outcome)
        made = outcome
    made = replace(made, text=redact(made.text))
    after = plan.base_tokens_after + count_tokens(summary_message(made.text))
    before = plan.tokens_before if plan.prune is None else plan.tokens_after_prune
    # Smaller in tokens; for the message-count trigger, smaller in messages.
    shrinks = (
        plan.messages_after + 1 < plan.messages_before
        if plan.trigger == "messages"
        else after < before
    )
    if not shrinks:
        # Never larger: a summary that does not shrink the context changes nothing (the
        # prune, when there is one, still applies).
        detail = f"a summary would leave {after:,} tokens of {before:,}, no fewer"
        if plan.prune is not None:
            return await run.finish("pruned", commit_prune(plan), detail=detail)
        return await run.finish("nothing", plan.state, detail=detail)
    state = commit_summary(plan, made.text, plan.file_ops.merge(made.file_ops))
    return await run.finish("compacted", state, made=made)


@dataclass(frozen=True, slots=True)
class _Made:
    text: str
    summarizer: str
    file_ops: FileOps
    truncated: bool
    fallback_reason: str | None
    usage: Usage | None = None


async def _make_summary(
    plan: CompactionPlan,
    summarizer: Summarizer,
    fallback: Summarizer | None,
    gather: Callable[..., Awaitable[Sequence[Any]]] | None,
    emit: Callable[[Event], None],
) -> _Made | str:
    """The summary text, or why none could be made."""
    requests = plan.requests
    if gather is not None and len(requests) > 1:
        outcomes = list(await gather(*(_summarize_one(r, summarizer, fallback) for r in requests)))
    else:
        outcomes = [await _summarize_one(r, summarizer, fallback) for r in requests]
    main_text: str | None = plan.previous_summary
    prefix_text: str | None = None
    file_ops = FileOps()
    truncated = False
    names: list[str] = []
    reasons: list[str] = []
    usage: Usage | None = None
    for request, outcome in zip(requests, outcomes, strict=True):
        summary = outcome.summary
        if summary is not None and summary.usage is not None:
            usage = summary.usage if usage is None else usage + summary.usage
        # a summarizer's own reason (a custom one's fallback, its exception text) may quote a
        # key from a provider's error: redacted like the reasons made here
        own = summary.fallback_reason if summary is not None else None
        reason = outcome.reason or (redact(own)[:300] if own is not None else None)
        if reason is not None:
            emit(
                SummarizerFallback(
                    summarizer=summarizer.name,
                    fallback=summary.summarizer if summary is not None else None,
                    reason=reason,
                )
            )
            reasons.append(reason)
        if summary is None:
            return reason or "no summary was made"
        if request.kind == "turn_prefix" and len(requests) > 1:
            prefix_text = summary.text  # a plan made with a separate split-turn request
        else:
            main_text = summary.text
        file_ops = file_ops.merge(summary.file_ops)
        truncated = truncated or summary.truncated
        if summary.summarizer not in names:
            names.append(summary.summarizer)
    text = compose_summary(main_text, prefix_text)
    if not text.strip():
        return "the summary was empty"
    return _Made(text, "+".join(names), file_ops, truncated, "; ".join(reasons) or None, usage)


class _Run:
    """One ``run_compaction`` call in progress: its events, hooks and clock."""

    def __init__(
        self,
        plan: CompactionPlan,
        hooks: CompactionHooks,
        clock: Callable[[], float] | None,
        count_tokens: TokenCount,
    ) -> None:
        self.plan = plan
        self.hooks = hooks
        self.clock = clock
        self.count_tokens = count_tokens
        self.started = clock() if clock is not None else None
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
        if self.hooks.on_event is not None:
            self.hooks.on_event(event)

    async def finish(
        self,
        status: EndStatus,
        state: CompactionState,
        *,
        made: _Made | None = None,
        error: str | None = None,
        detail: str | None = None,
    ) -> CompactionResult:
        plan, budget, emit = self.plan, self.plan.budget, self.emit
        pruned_applied = plan.prune is not None and status in ("pruned", "compacted", "failed")
        if pruned_applied and plan.prune is not None:
            before, after = plan.prune_tokens
            emit(
                Pruned(
                    outputs=len(plan.prune.pruned),
                    messages=len(plan.pruned),
                    tokens_before=before,
                    tokens_after=after,
                    context_before=plan.tokens_before,
                    context_after=plan.tokens_after_prune,
                )
            )
        summary: Message | None = None
        summary_tokens = 0
        if made is not None:
            summary = summary_message(made.text)
            summary_tokens = self.count_tokens(summary)
            tokens_after = plan.base_tokens_after + summary_tokens
            messages_after = plan.messages_after + 1
            first_kept = plan.first_kept
        else:
            tokens_after = plan.tokens_after_prune if pruned_applied else plan.tokens_before
            messages_after = plan.messages_before
            first_kept = plan.state.cut
        reached = tokens_after <= budget.target
        # A summary that freed a tenth of the budget made progress even above the target (the
        # newest step alone may be what keeps it there): no failure, so the next call's trigger
        # can summarize that step once it is no longer the newest, before it overflows; but not
        # again in this call, where nothing new can be cut.
        progressed = status == "compacted" and (
            tokens_after <= plan.tokens_before - budget.input_budget // PROGRESS_SHARE
        )
        if status != "cancelled":
            backoff = state.backoff.after(
                reached_target=reached,
                progressed=progressed,
                calls=plan.state.calls,
                max_calls=plan.backoff_max_calls,
            )
            state = replace(state, backoff=backoff)
        duration = 0.0
        if self.clock is not None and self.started is not None:
            duration = self.clock() - self.started
        kept = tokens_after - plan.system_tokens - summary_tokens - budget.tools_tokens
        emit(
            CompactionEnded(
                status=status,
                trigger=plan.trigger,
                tokens_before=plan.tokens_before,
                tokens_after=tokens_after,
                messages_before=plan.messages_before,
                messages_after=messages_after,
                system_tokens=plan.system_tokens,
                summary_tokens=summary_tokens,
                kept_tokens=max(0, kept),
                tools_tokens=budget.tools_tokens,
                input_budget=budget.input_budget,
                target=budget.target,
                reached_target=reached,
                summarizer=made.summarizer if made is not None else None,
                truncated=made.truncated if made is not None else False,
                duration=duration,
                detail=error or detail or plan.detail,
            )
        )
        # The emergency path proper (design: "when the provider rejects a request as too long or
        # a single turn exceeds the budget"): an emergency stage ran, or the provider reported
        # the overflow. An ordinary cut made before the call because the newest messages went
        # over the input budget sent nothing too large: it is a compaction (trigger "overflow"),
        # not a recovery, and is reported as such.
        recovered = plan.emergency is not None or plan.reported
        if recovered and status == "compacted" and tokens_after <= budget.input_budget:
            emit(
                OverflowRecovered(
                    tokens_before=plan.tokens_before,
                    tokens_after=tokens_after,
                    input_budget=budget.input_budget,
                    stage=plan.emergency or "compaction",
                    reported=plan.reported,
                )
            )
        if status != "cancelled" and not reached and not progressed:
            emit(
                CompactionBackoff(
                    tokens_after=tokens_after,
                    target=budget.target,
                    calls=max(0, state.backoff.until - plan.state.calls - 1),
                    failures=state.backoff.failures,
                )
            )
        result = CompactionResult(
            plan=plan,
            status=status,
            state=state,
            summary=summary,
            summary_text=made.text if made is not None else None,
            first_kept=first_kept,
            first_kept_id=plan.first_kept_id if made is not None else None,
            tokens_before=plan.tokens_before,
            tokens_after=tokens_after,
            messages_before=plan.messages_before,
            messages_after=messages_after,
            file_ops=state.file_ops,
            summarizer=made.summarizer if made is not None else None,
            truncated=made.truncated if made is not None else False,
            reached_target=reached,
            duration=duration,
            events=tuple(self.events),
            fallback_reason=made.fallback_reason if made is not None else None,
            error=error,
            summary_usage=made.usage if made is not None else None,
        )
        if self.hooks.after_compact is not None:
            await _maybe_await(self.hooks.after_compact(result))
        return result
