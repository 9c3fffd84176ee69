"""What a ``Conversation`` holds: its history and compaction state, sizes, budget and events.

``ConversationCore`` is the base of ``Conversation`` (``abridged.runtime.conversation``): the
in-memory history as sent to the model (system prompt, carried messages, tail; clipped tool
results) with the store's sequence number of each message, the compaction state, the version of
the conversation's row it corresponds to (for the single writer), the provider's last usage
report, and the events reported to the caller. Compaction (``abridged.runtime.compacting``) and
the turn loop (``abridged.runtime.turn``) build on it.

**Size of the context**: the provider's last report, when it describes the current compaction
epoch, plus the calibrated estimate of what was added since; otherwise the calibrated estimate
of the whole context (``TokenCounter``, calibrated from the reports by the rule every
``ContextManager`` learns by: ``abridged.runtime.sizing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from abridged.core.budget import Budget
from abridged.core.model import Message, ToolResult, Usage, starts_with_same
from abridged.core.protocols import (
    ChatModel,
    ReasoningDelta,
    Summarizer,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from abridged.core.summary import summary_message
from abridged.core.tokens import (
    REPLY_PRIMING,
    TokenCounter,
)
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import (
    CompactionHooks,
    CompactionResult,
    build_context,
)
from abridged.engine.context import CompactionState
from abridged.errors import AbridgedError, SettingError
from abridged.events.engine import Event
from abridged.events.runtime import ConversationEvent, Notice
from abridged.runtime.context_manager import ContextManager
from abridged.runtime.driver import SummarizerFactory
from abridged.runtime.history import damaged_notice, load_history
from abridged.runtime.queue import Inbound, Inbox
from abridged.runtime.settings import ConversationSettings
from abridged.runtime.tools import ToolRegistry, clip_tool_message
from abridged.store import SessionInfo, Store

__all__ = ["AbortedError", "CallRecord", "ConversationCore", "new_id", "summary_tokens"]


def new_id() -> str:
    """A fresh message id (unique, so that equal messages stay distinct in the store)."""
    return "m" + uuid.uuid4().hex[:24]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call the conversation made: the context sent, the compaction epoch it was built
    in (two calls of one epoch had no prune or compaction between them), the estimate, what the
    provider reported, and whether it was the retry after an overflow."""

    epoch: int
    messages: tuple[Message, ...]
    estimate: int
    usage: Usage | None
    retry: bool = False
    ok: bool = True


class AbortedError(AbridgedError):
    """The turn was aborted (internal); ``results`` holds the tool results finished by then."""

    def __init__(self, results: Sequence[ToolResult] = ()) -> None:
        super().__init__("the turn was aborted")
        self.results = list(results)


class Partial:
    """What one model call streamed so far (kept for ``abort``)."""

    def __init__(self) -> None:
        self.text: list[str] = []

    def reset(self) -> None:
        self.text.clear()

    def add(self, event: object) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)


class ConversationCore:
    """The state a conversation holds, its sizes and its events (see the module docstring).

    Not used alone: ``Conversation.open`` makes conversations.
    """

    def __init__(
        self,
        *,
        store: Store,
        model: ChatModel,
        conversation_id: str,
        owner: str | None,
        system: str | None,
        tools: ToolRegistry,
        settings: ConversationSettings,
        summarizer: Summarizer | ChatModel | str | None,
        limits: ModelLimits,
        hooks: CompactionHooks | None,
        on_event: Callable[[ConversationEvent], Any] | None,
        counter: TokenCounter | None,
    ) -> None:
        self.store = store
        self.model = model
        self.id = conversation_id
        self.owner = owner
        # the turn lease this copy writes under (set by whoever runs its turns under one, as
        # the HTTP service does): every message it stores is fenced by it, so that once another
        # worker took the lease over, a late write of this copy is refused (LeaseLostError)
        # instead of landing in the middle of the new holder's turn
        self.lease_holder: str | None = None
        self._turn_holder: str | None = None  # lease_holder as the running turn began
        self._lease_lost = False  # the lease was lost (a write refused): the copy is behind
        self._lease_abort = False  # the running turn was stopped because its lease was lost
        self.system = system
        self.tools = tools
        self._settings = settings
        self._limits = limits
        self.hooks = hooks if hooks is not None else CompactionHooks()
        self.on_event = on_event
        provider = str(getattr(model, "provider", "") or "")
        self.counter = counter or TokenCounter(
            model=model.name,
            image_provider="anthropic" if provider == "anthropic" else "openai",
        )
        self._summarizers = SummarizerFactory(
            summarizer,
            own_model=model,
            counter=self.counter,
            retries=settings.max_retries,
            retry_delay=settings.retry_delay,
        )
        # the history, its sums, the sizer, the budget and the compaction state live in the
        # conversation's ContextManager: one of each per conversation, as for any manager
        self._manager = ContextManager.for_conversation(
            limits,
            budget=settings.budget,
            settings=settings.compaction,
            counter=self.counter,
            summarizers=self._summarizers,
            store=store,
            conversation_id=conversation_id,
            owner=owner,
        )
        self._system_messages: list[Message] = (
            [Message.system(system, id="system")] if system else []
        )
        self.session: SessionInfo | None = None
        self.call_log: deque[CallRecord] = deque(maxlen=10_000)
        # the last context estimated: its counter, messages and their uncalibrated sum
        self._last_counted: tuple[TokenCounter, list[Message], int] | None = None
        # the worker, the turn in progress, the background compaction
        self._inbox = Inbox()
        self._worker: asyncio.Task[None] | None = None
        self._turn_active = False
        self._listeners: list[Inbound] = []
        self._turn_events: list[ConversationEvent] = []
        self._pending_events: list[ConversationEvent] = []
        self._collectors: list[list[ConversationEvent]] = []
        self._deferred: list[Message] = []
        self._abort_requested = False
        self._call_task: asyncio.Task[Any] | None = None
        self._tool_tasks: set[asyncio.Task[Any]] = set()
        self._manual_request: tuple[str | None] | None = None
        self._summary_pending = False
        self._closed = False
        self._partial = Partial()
        self._background: set[asyncio.Task[Any]] = set()

    @property
    def settings(self) -> ConversationSettings:
        """The settings; assign new ones to change them: they take effect at the next check."""
        return self._settings

    @settings.setter
    def settings(self, value: ConversationSettings) -> None:
        if not isinstance(value, ConversationSettings):
            raise SettingError("settings", value, "a ConversationSettings")
        self._settings = value
        self._manager.configure(budget=value.budget, settings=value.compaction)
        self._summarizers.set_retries(value.max_retries, value.retry_delay)
        if value.tool_timeout is not None:
            self.tools.timeout = value.tool_timeout

    def update_settings(self, **changes: Any) -> ConversationSettings:
        """Change some settings (``budget=BudgetSettings(enabled=False)``...); effective at the
        next check."""
        self.settings = replace(self._settings, **changes)
        return self._settings

    @property
    def limits(self) -> ModelLimits:
        """The model's limits the budget is computed from."""
        return self._limits

    @limits.setter
    def limits(self, value: ModelLimits) -> None:
        self._limits = value
        self._manager.configure(limits=value)

    @property
    def _history(self) -> list[Message]:
        """The history as sent to the model (the manager's: appended to in place)."""
        return self._manager.held

    @property
    def _state(self) -> CompactionState:
        return self._manager.state

    @_state.setter
    def _state(self, state: CompactionState) -> None:
        self._manager.adopt(state)

    @property
    def _compaction(self) -> asyncio.Task[CompactionResult | None] | None:
        """The compaction task running or last run (the manager's, once ``Compacting`` gave
        it one)."""
        background = self._manager.background
        return background.task if background is not None else None

    @property
    def _seqs(self) -> list[int | None]:
        """The stored sequence number of each history message (``None``: not stored)."""
        return self._manager.seqs

    @property
    def history(self) -> tuple[Message, ...]:
        """The messages the runtime holds, as sent to the model (system first; clipped tool
        results); the summary and cut are in ``state``."""
        return tuple(self._history)

    @property
    def state(self) -> CompactionState:
        """The compaction state (summary, cut, pruned outputs)."""
        return self._state

    @property
    def busy(self) -> bool:
        """Whether a turn is in progress."""
        return self._turn_active

    @property
    def compacting(self) -> bool:
        """Whether a compaction is running."""
        return self._compaction is not None and not self._compaction.done()

    async def wait_compaction(self) -> None:
        """Wait for the running compaction, if any, to end (its failure is its own events')."""
        while self._compaction is not None and not self._compaction.done():
            await asyncio.gather(self._compaction, return_exceptions=True)

    @property
    def tool_specs(self) -> tuple[ToolSpec, ...]:
        """The tool definitions sent to the model."""
        return self.tools.specs

    def budget(self) -> Budget:
        """The budget now (recomputed at each check, so that changed settings apply)."""
        return self._manager.budget_for(self.tools.specs)

    def context(self) -> list[Message]:
        """The context the next call would send (before any compaction it may need)."""
        return build_context(self._history, self._state)

    def context_tokens(self) -> int:
        """The context's size: the provider's last report plus the estimate of what followed."""
        return self._size()

    async def reload(self) -> None:
        """Read the conversation again from the store (another process changed it: a turn, a
        compaction, a session switch). Call it between turns."""
        await self._reload()

    def reply_to(self, seq: int) -> tuple[bool, Message | None]:
        """Whether the stored message ``seq`` was answered, and the final reply that answered
        it: the first assistant message after it that calls no tool. A message older than the
        current context counts as answered (``(True, None)``)."""
        try:
            index = self._seqs.index(seq)
        except ValueError:
            known = [s for s in self._seqs if s is not None]
            return (bool(known) and seq < min(known), None)
        for message in self._history[index + 1 :]:
            if message.role == "assistant" and not message.tool_calls:
                return True, message
        return False, None

    def reported_context(self) -> int | None:
        """The provider's count of the last call's context when it still describes the start
        of the current one (no prune or compaction since), else ``None``."""
        report = self._manager.last_report
        if report is None or report.epoch != self._state.epoch:
            return None
        return report.tokens

    def estimate_tokens(self, messages: Sequence[Message]) -> int:
        """The calibrated estimate of a context of ``messages`` (tools and priming included)."""
        return self._estimate(messages)

    def _emit(self, event: ConversationEvent) -> None:
        if self._turn_active:
            self._turn_events.append(event)
            for item in self._listeners:
                item.put(event)
        elif self._collectors:
            for collector in self._collectors:
                collector.append(event)
        else:
            self._pending_events.append(event)
            del self._pending_events[:-100]
        if self.on_event is not None:
            with contextlib.suppress(Exception):  # a broken callback never breaks the turn
                self.on_event(event)

    def _notice(self, text: str, event: Event | None = None) -> None:
        self._emit(Notice(text, event))

    def _engine_event(self, event: Event) -> None:
        self._notice(event.text, event)
        user = self.hooks.on_event
        if user is not None:
            user(event)

    def _delta(self, event: TextDelta | ReasoningDelta | ToolCallDelta) -> None:
        for item in self._listeners:
            item.put(event)

    def _count(self, message: Message) -> int:
        """One message's calibrated estimate (what the engine plans with)."""
        return self._manager.count(message)

    def _raw_estimate(self, messages: Sequence[Message]) -> int:
        return (
            self._messages_raw(messages) + self._manager.tools_raw(self.tools.specs) + REPLY_PRIMING
        )

    def _messages_raw(self, messages: Sequence[Message]) -> int:
        """The uncalibrated estimate of ``messages``: the last context counted plus what is
        new when they start with it (the same objects, as a call's context does between
        prunes and compactions), so a call counts its new messages only."""
        counter, last = self.counter, self._last_counted
        start, total = 0, 0
        if last is not None and last[0] is counter:
            counted, sum_counted = last[1], last[2]
            if starts_with_same(messages, counted):
                start, total = len(counted), sum_counted
        tokens = counter.message_tokens
        total += sum(tokens(messages[i]) for i in range(start, len(messages)))
        self._last_counted = (counter, list(messages), total)
        return total

    def _estimate(self, messages: Sequence[Message]) -> int:
        return self.counter.calibration.apply(self._raw_estimate(messages))

    def _size(self) -> int:
        """The provider's last report (of this epoch) plus the calibrated estimate since."""
        return self._manager.size_for(self.tools.specs)

    def _tool_cap(self, budget: Budget | None = None) -> int:
        cap = self._settings.tool_result_max_tokens
        if cap is not None:
            return cap
        budget = budget or self.budget()
        return max(64, budget.input_budget // 4)

    def _prepare_message(self, message: Message) -> Message:
        """The form of a stored message sent to the model (big tool results clipped)."""
        if message.role != "tool":
            return message
        return clip_tool_message(message, self._tool_cap(), self.counter.message_tokens)

    async def _reload(self) -> None:
        """Read the current context from the store (opening, session switches, a lost CAS)."""
        loaded = await load_history(
            self.store,
            self.id,
            self._system_messages,
            owner=self.owner,
            prepare=self._prepare_message,
            epoch=self._state.epoch + 1 if self.session is not None else 0,
            calls=self._state.calls,
        )
        self._manager.load(loaded)
        if loaded.context.damaged:  # sent as placeholders: said, never silent
            self._notice(damaged_notice(loaded.context.damaged))
        self.session = loaded.context.session

    def _append(self, message: Message, seq: int | None) -> None:
        self._manager.append(message, seq)

    async def _interruptible(self, awaitable: Any) -> Any:
        """Await ``awaitable`` as the task ``abort`` cancels; ``AbortedError`` when it did."""
        if self._abort_requested and self._turn_active:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise AbortedError()
        task = asyncio.ensure_future(awaitable)
        self._call_task = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._abort_requested and (current is None or not current.cancelling()):
                raise AbortedError() from None
            raise
        finally:
            if self._call_task is task:
                self._call_task = None


def summary_tokens(convo: ConversationCore) -> int:
    """Tokens of the current summary message (0 without one)."""
    text = convo.state.summary
    return convo.counter.message_tokens(summary_message(text)) if text else 0
