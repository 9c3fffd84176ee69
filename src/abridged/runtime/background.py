"""A conversation's compaction task: one at a time, planned off the loop, committed whole.

A ``Conversation``'s manager (``ContextManager.for_conversation``) owns one
``BackgroundCompaction``. At a step boundary the conversation asks it to ``start`` when a trigger
fires: the task plans in a worker thread, summarizes, and commits through the manager's one
commit path (``ContextManager.commit``: rebased onto the history that grew meanwhile, or dropped
when the context changed). The reply path never waits for it unless the context does not fit. A
compaction the conversation needs now (before a call, on an overflow, on request) is ``spawn``ed
as the same task, and awaited.

The task never raises, except when cancelled: a failure is a notice and the history stays as it
was. Committing is never cut in half: a cancellation that arrives then comes too late. A lost
compare-and-swap (another writer compacted first) or the store's contention makes the
conversation read the store again (``reload``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from abridged.core.budget import Budget
from abridged.core.protocols import Summarizer
from abridged.engine.compaction import CompactionHooks, CompactionResult
from abridged.engine.plan import CompactionPlan
from abridged.errors import ContentionError, ContextOverflowError
from abridged.runtime.tracing import log_failure

if TYPE_CHECKING:
    from abridged.runtime.context_manager import ContextManager
    from abridged.store import SessionInfo

__all__ = ["BackgroundCompaction", "Host"]


@dataclass(frozen=True, slots=True)
class Host:
    """What the task needs of its conversation: the summarizer for a budget, the hooks, a plan
    of the context at a size (made in a worker thread), where notices go, how to read the store
    again, and what to do with the session a summary started."""

    summarizer: Callable[[Budget], Summarizer]
    hooks: Callable[[], CompactionHooks]
    plan: Callable[[int], Awaitable[CompactionPlan | None]]
    notice: Callable[[str], None]
    reload: Callable[[], Awaitable[None]]
    started_session: Callable[[SessionInfo], None]


class BackgroundCompaction:
    """The compaction task of one conversation (see the module docstring)."""

    def __init__(self, manager: ContextManager, host: Host) -> None:
        self.manager = manager
        self.host = host
        self.task: asyncio.Task[CompactionResult | None] | None = None

    @property
    def running(self) -> bool:
        """Whether a compaction is running."""
        return self.task is not None and not self.task.done()

    def start(self, size: int) -> None:
        """Plan (in a worker thread) and carry out a compaction of the context of ``size``
        tokens, in the background; nothing when one is running."""
        if not self.running:
            self.task = asyncio.ensure_future(self._planned(size))

    def spawn(self, plan: CompactionPlan) -> asyncio.Task[CompactionResult | None]:
        """Carry ``plan`` out as the conversation's compaction task."""
        task = asyncio.ensure_future(self._job(plan))
        self.task = task
        return task

    async def _job(self, plan: CompactionPlan) -> CompactionResult | None:
        notice = self.host.notice
        started = time.monotonic()
        try:
            result = await self.manager.run_plan(
                plan, self.host.summarizer(plan.budget), self.host.hooks()
            )
        except asyncio.CancelledError:
            self._forget()
            notice("Compaction cancelled; nothing was changed")
            raise
        except Exception as exc:
            self._forget()
            log_failure("compaction_failed", exc, self.manager.conversation_id)
            notice(f"Compaction failed: {type(exc).__name__}: {exc}; history kept as it was")
            return None
        # Committing is never cut in half: a cancellation that arrives now comes too late.
        commit = asyncio.ensure_future(self._commit(result, (time.monotonic() - started) * 1000))
        try:
            await asyncio.shield(commit)
        except asyncio.CancelledError:
            await asyncio.gather(commit, return_exceptions=True)
            notice("The compaction was being committed: too late to cancel it")
        except Exception as exc:
            log_failure("compaction_failed", exc, self.manager.conversation_id)
            notice(f"Compaction failed: {type(exc).__name__}: {exc}; history kept as it was")
            return None
        finally:
            self._forget()
        return result

    async def _planned(self, size: int) -> CompactionResult | None:
        notice = self.host.notice
        try:
            plan = await self.host.plan(size)
        except asyncio.CancelledError:
            self._forget()
            notice("Compaction cancelled; nothing was changed")
            raise
        except ContextOverflowError:  # left to the next call's check, which says so
            self._forget()
            return None
        except Exception as exc:  # planning failed: reported; the turn goes on
            self._forget()
            log_failure("compaction_check_failed", exc, self.manager.conversation_id)
            notice(f"Compaction check failed: {type(exc).__name__}: {exc}")
            return None
        if plan is None:
            self._forget()
            return None
        return await self._job(plan)

    def _forget(self) -> None:
        if self.task is asyncio.current_task():
            self.task = None

    async def _commit(self, result: CompactionResult, duration_ms: float) -> None:
        """Commit ``result`` through the manager's one commit path (store first, then memory),
        which reads the store again (``reload``) when another writer came first."""
        host = self.host
        try:
            committed = await self.manager.commit(
                result,
                duration_ms=duration_ms,
                on_prune_error=lambda exc: host.notice(
                    f"The prune boundary could not be stored: {exc}"
                ),
                reload=host.reload,
            )
        except ContentionError:
            host.notice("Other writers kept changing this conversation; reloaded")
            raise
        if committed is None:
            host.notice("A compaction planned on an older context was dropped")
            return
        if committed.lost:  # the manager adopted what the store holds
            host.notice("Another writer compacted this conversation first; reloaded")
            return
        if committed.session is not None:
            host.started_session(committed.session)
