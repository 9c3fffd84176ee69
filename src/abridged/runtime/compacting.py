"""Compaction inside a conversation: in the background, in the foreground, on an overflow.

``Compacting`` (a base of ``Conversation``) decides when the conversation compacts; its
``ContextManager`` (``abridged.runtime.context_manager``, made for the conversation) plans,
runs and commits every compaction over the history it holds:

- **in the background** (``_maybe_compact``, at every step boundary): the O(1) trigger check
  runs on the loop; when it fires, the manager's compaction task (``abridged.runtime.background``)
  plans in a worker thread and compacts, so that the summarizer's call never delays the reply;
  the next model call waits for it only when the context does not fit;
- **in the foreground** (``_fit``): when the context still does not fit, the overflow trigger
  and then the emergency path, until it fits (``ContextOverflowError`` when nothing can);
- **on the provider's overflow** (``_recover``): the emergency path, scaled to the size the
  provider reported, before the one retry;
- **on request**: ``compact_now`` (``/compact``), ``prune_now`` (``/prune``).

The foreground fit and the recovery are the manager's one fit loop (``ContextManager.afit`` and
``arecover``, over ``abridged.runtime.driver.fit_context``), given the conversation's way of
carrying a plan out: its compaction task, so that ``cancel_compaction`` and notices work as for
any other compaction.

**Commit.** Through the one commit path of every runtime (``ContextManager.commit``, over
``abridged.runtime.persistence.commit_result``: the store's single writer, against the version
the conversation's state was read at), rebased onto the history that grew meanwhile: the store
starts a child session carrying the kept messages; a lost compare-and-swap means another writer
compacted first, and the conversation re-reads the store (its ``reload``) and adopts its state.
Then the in-memory state changes. A compaction planned on a state that changed since is
dropped. Prunes move the stored prune boundary forward. Stored messages are never changed.

**Summarizers.** By default the conversation's own model (``LLMSummarizer`` reusing the prompt
cache, with the extractive fallback); each call is bounded by ``summary_timeout``, past which the
extractive summary is used; ``cancel_compaction`` cancels a compaction with its summarization.
Planning and the extractive summary are CPU work that grows with the context: they run in a
worker thread (planning on a snapshot of the history), so a long conversation never holds the
event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from abridged.core.budget import MIN_CONTEXT_WINDOW, Budget, format_token_size
from abridged.core.protocols import Summarizer, Summary, SummaryRequest
from abridged.core.windows import with_notes
from abridged.engine.compaction import (
    CompactionHooks,
    CompactionResult,
    run_compaction,
)
from abridged.engine.plan import CompactionPlan
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.redact import redact
from abridged.errors import ContextOverflowError
from abridged.events.engine import Pruned, SummarizerFallback
from abridged.runtime.background import Host
from abridged.runtime.driver import OffLoopSummarizer, off_loop
from abridged.runtime.history import is_command
from abridged.runtime.recovery import SilentTruncationError
from abridged.runtime.state import ConversationCore
from abridged.runtime.tracing import failure_reason, log_event
from abridged.store import FinalizeRequest, SessionInfo, StoredSummary

__all__ = ["Compacting"]

T = TypeVar("T")


class _TimedSummarizer:
    """A summarizer bounded by a timeout: past it, the call is cancelled and the engine falls
    back to the extractive summary."""

    def __init__(self, inner: Summarizer, timeout: float | None) -> None:
        self.inner = inner
        self.timeout = timeout

    @property
    def name(self) -> str:
        return self.inner.name

    async def summarize(self, request: SummaryRequest) -> Summary:
        if self.timeout is None:
            return await self.inner.summarize(request)
        try:
            return await asyncio.wait_for(self.inner.summarize(request), self.timeout)
        except TimeoutError:
            raise TimeoutError(
                f"the summarizer took longer than {self.timeout:g} s and was cancelled"
            ) from None


class Compacting(ConversationCore):
    """Compaction of a conversation (see the module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._manager.attach(
            Host(
                summarizer=self.summarizer,
                hooks=self._hooks,
                plan=lambda size: self._aplan(size=size),
                notice=self._notice,
                reload=self._reload,
                started_session=self._started_session,
            )
        )

    def _started_session(self, session: SessionInfo) -> None:
        self.session = session

    def summarizer(self, budget: Budget | None = None) -> Summarizer:
        """The summarizer compactions use now (sized to the budget, bounded by
        ``summary_timeout``)."""
        return self._timed(self._summarizers(budget or self.budget()))

    def _timed(self, summarizer: Summarizer) -> _TimedSummarizer:
        """``summarizer`` bounded by ``summary_timeout``; an extractive one runs in a worker
        thread, unbounded (it is local work that always ends, as it did on the loop)."""
        inner = off_loop(summarizer)
        timeout = None if isinstance(inner, OffLoopSummarizer) else self._settings.summary_timeout
        return _TimedSummarizer(inner, timeout)

    async def finalize_summary(self, request: FinalizeRequest) -> StoredSummary | None:
        """Summarize a session left by ``/new``, ``/clear`` or ``/resume`` (for its successor
        and for search); runs in the store's background. ``None`` for a session of slash
        commands alone: there is nothing to summarise, and asking a model would invent it."""
        messages = tuple(m for m in request.messages if not is_command(m))
        previous = request.previous.text if request.previous is not None else None
        if not messages:
            return StoredSummary(previous, {"summarizer": "carried"}) if previous else None
        budget = self.budget()
        ask = SummaryRequest(
            messages=messages,
            kind="update" if previous else "initial",
            previous_summary=previous,
            max_tokens=budget.summary_max,
        )
        summarizer = self.summarizer(budget)
        extractive = OffLoopSummarizer(ExtractiveSummarizer())
        try:
            made = await summarizer.summarize(ask)
        except Exception as exc:
            self._fell_back(summarizer, failure_reason(exc))
            made = await extractive.summarize(ask)
        if not made.text.strip():
            self._fell_back(summarizer, "the summary was empty")
            made = await extractive.summarize(ask)
        return StoredSummary(redact(made.text), {"summarizer": made.summarizer})

    def _fell_back(self, summarizer: Summarizer, reason: str) -> None:
        """Log that a session's final summary fell back to the extractive one, and why."""
        fallback = SummarizerFallback(summarizer.name, fallback="extractive", reason=reason)
        log_event(fallback, self.id)

    def _hooks(self) -> CompactionHooks:
        return CompactionHooks(
            before_compact=self.hooks.before_compact,
            after_compact=self.hooks.after_compact,
            on_event=self._engine_event,
        )

    def _plan(
        self, *, manual: bool = False, focus: str | None = None, size: int | None = None
    ) -> CompactionPlan | None:
        return self._manager.planner_for(self.tools.specs, size=size, focus=focus, manual=manual)()

    async def _aplan(
        self,
        *,
        manual: bool = False,
        focus: str | None = None,
        size: int | None = None,
        prune_only: bool = False,
    ) -> CompactionPlan | None:
        """``_plan`` in a worker thread, on a snapshot of the history."""
        return await asyncio.to_thread(
            self._manager.planner_for(
                self.tools.specs, size=size, focus=focus, manual=manual, prune_only=prune_only
            )
        )

    def _due(self, size: int) -> bool:
        """Whether a trigger fires for a context of ``size`` tokens (what ``plan_compaction`` checks
        first, O(1)): only then is there anything to plan."""
        return self._manager.due(self.tools.specs, size)

    def _spawn(self, plan: CompactionPlan) -> asyncio.Task[CompactionResult | None]:
        """Carry ``plan`` out as the conversation's compaction task (the manager's)."""
        assert self._manager.background is not None
        return self._manager.background.spawn(plan)

    def _maybe_compact(self) -> None:
        """The check at a step boundary: start a compaction if one is due (in the background).
        A context that cannot be made to fit is left to the next call's check, which says so."""
        if self.compacting:
            return
        try:
            size = self._size()
            due = self._due(size)
        except Exception as exc:  # the check failed: reported; the turn goes on
            self._notice(f"Compaction check failed: {type(exc).__name__}: {exc}")
            return
        if due:  # planning, in a worker thread, is the background task's first step
            assert self._manager.background is not None
            self._manager.background.start(size)

    async def _wait_compaction(self) -> None:
        """Wait for the running compaction (abort ends the wait, not the compaction)."""
        task = self._compaction
        if task is None or task.done():
            return
        try:
            await self._interruptible(asyncio.shield(task))
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or not current.cancelling()):
                return  # the compaction was cancelled (cancel_compaction): carry on without
            raise

    async def _settle_compaction(self, *, cancel: bool = False) -> None:
        task = self._compaction
        if task is None or task.done():
            return
        if cancel:
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    async def _fit(self, size: int) -> int:
        """Compact in the foreground until the context fits the input budget (the manager's
        fit loop, ``ContextManager.afit``: the overflow trigger, then the emergency path), each
        plan carried out as the conversation's compaction task; the size after.
        ``ContextOverflowError`` when it cannot fit."""
        self.budget()  # the budget as it is now (the calibration moves at every call)

        async def run(plan: CompactionPlan) -> CompactionResult | None:
            result: CompactionResult | None = await self._interruptible(
                asyncio.shield(self._spawn(plan))
            )
            return result

        await self._manager.afit(size, run=run)
        return self._size()

    async def _recover(self, error: ContextOverflowError) -> int:
        """The emergency path after the provider said the context was too long (or cut it)."""
        await self._wait_compaction()  # a compaction under way commits first; then ours
        self._learn_window(error)
        budget = self.budget()
        reported: int | None = error.tokens
        if isinstance(error, SilentTruncationError) and error.reported > 0:
            # Aim at what the provider really read: its estimates scale up by sent/read.
            reported = int(self._size() * budget.input_budget / error.reported)
        # the manager's fit loop (``ContextManager.arecover``), strict: a rejected context whose
        # emergency compaction did not compact is not sent again
        fitted = await self._manager.arecover(reported, run=self._spawn, strict=True)
        result = fitted.first
        if result is None or result.status != "compacted":
            raise ContextOverflowError(
                "the provider rejected the context as too long and the emergency compaction failed",
                tokens=error.tokens,
                limit=error.limit,
                conversation_id=self.id,
                input_budget=budget.input_budget,
            )
        return self._size()

    def _learn_window(self, error: ContextOverflowError) -> None:
        """The provider named its window in its overflow error, and it is smaller than the one
        assumed (a wrong registry entry, a server started with a smaller context): use it from
        now on, so that the emergency path and every later budget fit the real window."""
        limit = error.limit
        window = self.limits.context_window
        if isinstance(error, SilentTruncationError) or limit is None:
            return
        if not MIN_CONTEXT_WINDOW <= limit < window:
            return
        self.limits = with_notes(
            replace(
                self.limits,
                context_window=limit,
                max_output=min(self.limits.max_output, limit),
                source="probe",
                known=True,
            ),
            f"context window {limit:,} from the provider's overflow error (was {window:,})",
        )
        self._notice(
            f"The provider's context window is {format_token_size(limit)}, not "
            f"{format_token_size(window)}: the budget now uses it"
        )

    async def compact_now(self, instructions: str | None = None) -> CompactionResult | None:
        """Compact at once (what ``/compact`` runs; call it between turns): ``None`` when
        there was nothing to plan."""
        await self._settle_compaction()
        plan = await self._aplan(manual=True, focus=instructions)
        if plan is None:
            return None
        return await self._spawn(plan)

    async def preview_compaction(self, instructions: str | None = None) -> CompactionPlan | None:
        """What ``compact_now`` would do, planned but not carried out (nothing is summarized,
        stored or changed): the plan's ``tokens_before``, ``base_tokens_after`` (the context
        after it, without the new summary) and ``summary_max_tokens`` give the before/after
        breakdown. ``None`` when there is nothing to plan."""
        return await self._aplan(manual=True, focus=instructions)

    async def preview_tokens_after(self, plan: CompactionPlan) -> int:
        """The context's size after ``plan``, its summary made for real by the extractive
        summarizer (off the event loop; no hook runs, nothing is stored). For a conversation
        summarized by a model this estimates the model's summary, which is held to the same
        ceiling; a preview that used the ceiling itself promised far less than compaction did."""
        if plan.action != "summarize":
            return plan.base_tokens_after
        result = await run_compaction(
            plan,
            OffLoopSummarizer(ExtractiveSummarizer()),
            count_tokens=self._count,
            fallback=False,
        )
        return result.tokens_after

    async def prune_now(self) -> Pruned | None:
        """Prune old tool outputs at once (what ``/prune`` runs): no summary, no minimum
        saving. ``None`` when there was nothing to prune."""
        await self._settle_compaction()
        plan = await self._aplan(prune_only=True)
        if plan is None:
            return None
        result = await self._spawn(plan)
        if result is None or result.status != "pruned":
            return None
        return next((e for e in result.events if isinstance(e, Pruned)), None)

    def cancel_compaction(self) -> bool:
        """Cancel the compaction in progress (its summarization included): nothing is changed
        or stored. ``False`` when none is running."""
        task = self._compaction
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def switch_session(self, action: Callable[[], Awaitable[T]]) -> T:
        """Run a session change (``/new``, ``/clear``, ``/resume``: ``action`` calls the
        store), then reload the context; the running compaction (of the session left) is
        cancelled first."""
        await self._settle_compaction(cancel=True)
        result = await action()
        self._summary_pending = False
        await self._reload()
        return result

    def expect_summary(self) -> None:
        """The new session's summary is being made in the background: adopt it at the start
        of a turn once it is ready."""
        self._summary_pending = True
