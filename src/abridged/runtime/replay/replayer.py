"""A recorded session replayed call by call through a store-backed ``ContextManager``.

Each model call of the transcript gets the context abridged would have sent
(``ContextManager.areplay``: pruning, compaction and the emergency path, with the provider's
recorded usage as long as the context is the recorded one), as if the model had produced the
recorded replies. The manager keeps the conversation in the store as a live one does
(``abridged.runtime.persistence``): every message is stored as it arrives, every compaction,
prune and pruned form goes through the one commit path, so a replay kept in a database reopens
sending the same bytes.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from abridged.core.budget import Budget, BudgetSettings
from abridged.core.model import Message
from abridged.core.protocols import ChatModel, Summarizer
from abridged.core.turns import head_length
from abridged.core.windows import LimitsOverride, ModelLimits, resolve_limits
from abridged.engine.compaction import CompactionHooks, CompactionResult
from abridged.engine.compaction_settings import CompactionSettings
from abridged.errors import ContextOverflowError
from abridged.formats.transcripts import Transcript
from abridged.providers.registry import load_registry
from abridged.runtime.context_manager import ContextManager, ReplayStep
from abridged.runtime.history import seq_at
from abridged.runtime.replay.accounting import (
    action_of,
    budget_report,
    cached_tokens,
    compaction_report,
    cost,
    limits_report,
    overflow_step,
    session_totals,
    stopped_report,
)
from abridged.runtime.replay.schema import (
    CompactionReport,
    SessionReport,
    StepReport,
    StoppedReport,
    StoredReport,
)
from abridged.store import NewMessage, Store

__all__ = ["ReplayOptions", "Replayed", "Replayer", "SessionReplay"]


@dataclass(frozen=True, slots=True)
class ReplayOptions:
    """How transcripts are replayed: the budget and compaction settings, the summarizer (a
    ``Summarizer``, a ``ChatModel``, or ``None`` for the extractive one) and its name for
    reports, the limits overriding the transcript model's (``window``, ``max_output``, in
    tokens), the model (default: the transcript's), and the summarizer's own window and call
    options."""

    budget: BudgetSettings = field(default_factory=BudgetSettings)
    settings: CompactionSettings = field(default_factory=CompactionSettings)
    summarizer: Summarizer | ChatModel | None = None
    summarizer_name: str = "extractive"
    window: int | None = None
    max_output: int | None = None
    model: str | None = None
    summary_window: int | None = None
    summary_options: Mapping[str, Any] = field(default_factory=dict)

    def model_of(self, transcript: Transcript) -> str | None:
        """The model the transcript is replayed as."""
        model = self.model or transcript.meta.get("model")
        return str(model) if model else None

    def limits(self, transcript: Transcript) -> ModelLimits:
        """The transcript model's limits, with ``window`` and ``max_output`` overriding them
        (``SettingError`` when they are out of range)."""
        override = None
        if self.window is not None or self.max_output is not None:
            override = LimitsOverride(context_window=self.window, max_output=self.max_output)
        name = self.model_of(transcript) or "unknown"
        return resolve_limits(name, override=override, registry=load_registry())


@dataclass(frozen=True, slots=True)
class Replayed:
    """One transcript replayed: the session's report and its calls."""

    session: SessionReport
    steps: list[StepReport]


@dataclass(slots=True)
class SessionReplay:
    """One transcript's replay as it goes: the calls and compactions recorded so far."""

    transcript: Transcript
    limits: ModelLimits
    conversation_id: str
    count: Callable[[Message], int]  # a message's calibrated estimate (the cache estimate's)
    count_output: Callable[[Message], int]  # a reply's raw estimate, when it recorded no usage
    budget: Budget | None = None
    steps: list[StepReport] = field(default_factory=list)
    compactions: list[CompactionReport] = field(default_factory=list)
    stopped: StoppedReport | None = None
    _previous: Sequence[Message] = ()
    _previous_tokens: int = 0
    _previous_epoch: int = 0

    def call(self, step: ReplayStep, results: Sequence[CompactionResult]) -> None:
        """Record one call: the compactions that made a summary for it, then the call."""
        number = len(self.steps) + 1
        self.budget = step.budget
        for result in results:
            if result.status == "compacted" and result.state.summary is not None:
                self.compactions.append(compaction_report(result, number))
        self.steps.append(self._step(step, number))
        self._previous, self._previous_tokens = step.context, step.tokens
        self._previous_epoch = step.state.epoch

    def _step(self, step: ReplayStep, number: int) -> StepReport:
        limits, tokens, messages = self.limits, step.tokens, self.transcript.messages
        cached = cached_tokens(
            self._previous,
            step.context,
            tokens,
            same_epoch=step.state.epoch == self._previous_epoch and number > 1,
            previous_tokens=self._previous_tokens,
            count=self.count,
        )
        reply = messages[step.index] if step.index < len(messages) else None
        output, recorded = 0, None
        if reply is not None and reply.usage is not None:
            output, recorded = reply.usage.output, reply.usage.context_tokens or None
        elif reply is not None:
            output = self.count_output(reply)
        action, before, after, pruned = action_of(step.events)
        return StepReport(
            session=self.transcript.id,
            call=number,
            index=step.index,
            context_tokens=tokens,
            context_messages=len(step.context),
            action=action,
            pruned=pruned,
            tokens_before=before,
            tokens_after=after,
            cached_tokens=cached,
            output_tokens=output,
            cost=cost(limits.pricing, tokens - cached, cached, output),
            recorded_context_tokens=recorded,
            over_budget=tokens > step.budget.input_budget,
            over_window=tokens > limits.context_window,
            events=[e.text for e in step.events if e.kind != "usage_updated"],
        )

    def stop(self, error: ContextOverflowError, budget: Budget) -> None:
        """The call no compaction could fit: the replay stops there."""
        self.budget = budget  # the budget the call was planned against
        self.stopped = stopped_report(error, len(self.steps) + 1, budget, self.limits)
        self.steps.append(overflow_step(self.transcript.id, self.stopped, self.limits))

    def report(self, stored: StoredReport, *, seconds: float, hidden_prefix: int) -> SessionReport:
        """The session as ``--json`` shows it."""
        transcript = self.transcript
        model = transcript.meta.get("model")
        return SessionReport(
            id=transcript.id,
            format=transcript.source_format,
            model=None if model is None else str(model),
            limits=limits_report(self.limits),
            budget=budget_report(self.budget),
            conversation_id=self.conversation_id,
            stored=stored,
            stopped=self.stopped,
            compactions=self.compactions,
            totals=session_totals(
                self.steps,
                transcript.messages,
                window=self.limits.context_window,
                compactions=len(self.compactions),
                seconds=seconds,
                stopped=self.stopped is not None,
                hidden_prefix=hidden_prefix,
            ),
        )


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:40] or "session"


class Replayer:
    """Replays transcripts into one store (see the module docstring). ``on_step`` hears of
    every call, with the context it got."""

    def __init__(
        self,
        store: Store,
        options: ReplayOptions | None = None,
        *,
        on_step: Callable[[ReplayStep], None] | None = None,
    ) -> None:
        self.store = store
        self.options = options if options is not None else ReplayOptions()
        self.on_step = on_step

    async def replay(self, transcript: Transcript) -> Replayed:
        """Replay one transcript; its report and calls."""
        started = time.perf_counter()
        results: list[CompactionResult] = []
        manager, session = self._open(transcript, results)
        await self._create_conversation(transcript, session)
        try:
            async for step in manager.areplay(transcript.messages):
                session.call(step, results)
                results.clear()
                if self.on_step is not None:
                    self.on_step(step)
        except ContextOverflowError as exc:
            session.stop(exc, manager.budget)
        await self._store_the_rest(transcript, session.conversation_id)
        stored = await self._stored(session.conversation_id, manager)
        seconds = time.perf_counter() - started
        report = session.report(stored, seconds=seconds, hidden_prefix=manager.hidden_prefix)
        return Replayed(report, session.steps)

    def _open(
        self, transcript: Transcript, results: list[CompactionResult]
    ) -> tuple[ContextManager, SessionReplay]:
        """The session's store-backed manager (``SettingError`` before anything is stored)."""
        options = self.options
        limits = options.limits(transcript)
        cid = f"{_slug(transcript.id)}-{uuid.uuid4().hex[:6]}"
        manager = ContextManager(
            limits,
            model=options.model_of(transcript),
            budget=options.budget,
            settings=options.settings,
            summarizer=options.summarizer,
            summary_window=options.summary_window,
            summary_options=options.summary_options,
            hooks=CompactionHooks(after_compact=results.append),
            store=self.store,
            conversation_id=cid,
        )
        counter = manager.counter
        session = SessionReplay(
            transcript,
            limits,
            cid,
            count=lambda m: counter.calibration.apply(counter.message_tokens(m)),
            count_output=counter.message_tokens,
        )
        return manager, session

    async def _create_conversation(self, transcript: Transcript, session: SessionReplay) -> None:
        """The conversation the replay is kept in: the system prompt and where it came from in
        its settings (the manager stores the messages)."""
        messages = transcript.messages
        system = "\n\n".join(m.text for m in messages[: head_length(messages)])
        await self.store.create_conversation(
            session.conversation_id,
            model=self.options.model_of(transcript),
            settings={
                **({"system": system} if system else {}),
                "replay": {
                    "source": str(transcript.meta.get("path") or ""),
                    "transcript": transcript.id,
                    "format": transcript.source_format,
                    "window": session.limits.context_window,
                    "summarizer": self.options.summarizer_name,
                },
            },
        )

    async def _store_the_rest(self, transcript: Transcript, conversation_id: str) -> None:
        """Store the messages after the last call (its replies), which no call sent."""
        messages = transcript.messages
        info = await self.store.open_conversation(conversation_id)
        stored = head_length(messages) + info.next_seq - 1
        model = self.options.model_of(transcript)
        rest = [
            NewMessage(m, model=model if m.role == "assistant" else None) for m in messages[stored:]
        ]
        if rest:
            await self.store.append_many(conversation_id, rest)

    async def _stored(self, conversation_id: str, manager: ContextManager) -> StoredReport:
        """What the store holds after the replay, checked against the engine's state."""
        sessions = await self.store.list_sessions(conversation_id)
        commits = await self.store.compactions(conversation_id)
        context = await self.store.load_context(conversation_id)
        state = manager.state
        history = manager.history
        head = head_length(history)
        seqs = [None if i < head else i - head + 1 for i in range(len(history))]
        expected = seq_at(seqs, state.cut) if state.compacted else 1
        return StoredReport(
            conversation_id=conversation_id,
            messages=sum(s.totals.messages for s in sessions if s.totals is not None),
            sessions=len(sessions),
            compactions=len(commits),
            context_messages=len(context.messages),
            carry_from=context.session.carry_from,
            consistent=context.session.carry_from == expected and len(commits) == state.compactions,
        )
