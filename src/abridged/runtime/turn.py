"""One turn of a conversation: the user's messages, then model calls and tools until an answer.

``TurnLoop`` (a base of ``Conversation``) runs a batch of delivered user messages as one turn:

1. before each model call, make the context fit (``_before_call``): wait for the running
   compaction only when the context does not fit the input budget, count exactly when the model
   can and the estimate is close to the limit, compact in the foreground when still needed;
2. call the model, streaming (``_step_call``): deltas go to the readers of the turn; a provider
   overflow (or silent truncation) runs the emergency path and exactly one retry
   (``abridged.runtime.recovery``); retryable provider errors get ordinary retries;
3. store the reply with its usage and timings; learn the calibration from the usage;
4. run the tools it asked for, concurrently, and store their results (whole; the clipped form is
   what the model gets); check compaction (in the background) at this step boundary;
5. until the model answers without calling a tool, or ``max_steps``.

``abort`` cancels the model call or the tools in flight: the partial reply is stored, and every
tool call that did not finish gets an error result, so that pairing holds.

Under a turn lease (``lease_holder``, set by the HTTP service) every message a turn stores is
fenced by the lease it began with: once another worker took the lease over, the store refuses
the write (``LeaseLostError``) and the turn ends; the next turn of this copy reads the store
again first. A lease found lost otherwise (``lease_lost``: the holder's renewal) stops the turn
run under that lease only, with ``LeaseLostError`` too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from abridged.core.budget import Budget, format_token_size
from abridged.core.model import Message, Text, ToolCall, ToolResult, Usage
from abridged.core.protocols import Completion
from abridged.core.turns import unanswered_tool_calls
from abridged.engine.compaction import build_context
from abridged.errors import ContextOverflowError, LeaseLostError, ProviderError, StoreError
from abridged.events.engine import UsageUpdated
from abridged.events.runtime import ToolFinished, ToolStarted, TurnResult
from abridged.runtime.call_check import Stage
from abridged.runtime.compacting import Compacting
from abridged.runtime.history import is_command
from abridged.runtime.queue import Inbound
from abridged.runtime.recovery import (
    SilentTruncationError,
    call_with_recovery,
    check_truncation,
    exact_tokens,
    with_retries,
)
from abridged.runtime.state import AbortedError, CallRecord, Partial, new_id
from abridged.runtime.tools import ToolContext
from abridged.store import NewMessage

__all__ = ["INTERRUPTED_RESULT", "TurnLoop"]

INTERRUPTED_RESULT = (
    "This tool call did not finish: the turn that made it was interrupted (its process stopped)."
)


class TurnLoop(Compacting):
    """The turn loop of a conversation (see the module docstring)."""

    def abort(self) -> bool:
        """Cancel the model call or tools in flight; the turn ends with what was received
        stored. ``False`` when no turn is in progress."""
        if not self._turn_active:
            return False
        self._abort_requested = True
        if self._call_task is not None:
            self._call_task.cancel()
        for task in list(self._tool_tasks):
            task.cancel()
        return True

    @property
    def turn_holder(self) -> str | None:
        """The turn lease the running turn writes under (``None``: no turn runs, or not under
        a lease)."""
        return self._turn_holder if self._turn_active else None

    def lease_lost(self, holder: str) -> bool:
        """The turn lease ``holder`` is no longer this copy's (another worker took it over):
        the copy reads the store again before its next turn, and the turn running under
        ``holder``, if any, stops. That turn ends with ``LeaseLostError`` for every message of
        its batch, never an aborted result: the lease's holder finishes them. The loss of an
        older lease than the copy's current one changes nothing (a later turn under a live
        lease must not stop). Whether a turn was stopped."""
        running = self._turn_holder if self._turn_active else None
        if holder not in (running, self.lease_holder):
            return False
        self._lease_lost = True
        if running != holder:
            return False
        self._lease_abort = True
        return self.abort()

    async def _run_turn(self, batch: list[Inbound]) -> None:
        self._turn_active = True
        self._abort_requested = False
        self._lease_abort = False
        # the lease of this turn, for the whole turn: a later holder set on this copy (another
        # turn of it waiting for this one) must not let this turn's late writes through
        self._turn_holder = self.lease_holder
        self._listeners = batch
        self._turn_events = list(self._pending_events)
        self._pending_events = []
        for item in batch:
            for event in self._turn_events:
                item.put(event)
        result: TurnResult | None = None
        error: BaseException | None = None
        try:
            for item in batch:
                if item.stored is None and item.message is not None:
                    item.stored = asyncio.ensure_future(
                        self.store.append(self.id, item.message, owner=self.owner, status="queued")
                    )
            await asyncio.gather(*(i.stored for i in batch if i.stored is not None))
            if self._lease_lost:  # another worker went on from where this copy was refused
                await self._reload()
                self._lease_lost = False
            await self._close_interrupted_calls()
            delivered = await self.store.deliver(
                self.id, owner=self.owner, holder=self._turn_holder
            )
            if self._summary_pending:
                await self._refresh_summary()
            for stored in delivered:
                if not is_command(stored.message):
                    self._append(self._prepare_message(stored.message), stored.seq)
            result = await self._loop(inputs=len(batch))
            if result.aborted and self._lease_abort:
                # stopped because another worker holds the lease now: not the senders' abort
                raise LeaseLostError(
                    "the turn lease was taken over; the turn stopped", conversation_id=self.id
                )
        except Exception as exc:
            error = exc
            self._lease_lost = self._lease_lost or isinstance(exc, LeaseLostError)
        finally:
            self._turn_active = False
            self._listeners = []
            deferred, self._deferred = self._deferred, []
            if deferred:
                try:
                    await self.store.append_many(
                        self.id, deferred, owner=self.owner, holder=self._turn_holder
                    )
                except StoreError as exc:
                    self._notice(f"Commands could not be stored: {exc}")
        for item in batch:
            item.close()
            if item.future.done():
                continue
            if error is not None:
                item.future.set_exception(error)
            else:
                item.future.set_result(result)
        if not self._closed and not self._lease_lost:  # no plan made on a copy behind the store
            try:
                self._maybe_compact()
            except Exception as exc:  # planning failed: reported, the conversation goes on
                self._notice(f"Compaction check failed: {type(exc).__name__}: {exc}")

    async def _close_interrupted_calls(self) -> None:
        """Give every tool call left without a result (a process died in the middle of a turn,
        or stalled past its turn lease and was taken over: its late writes are refused) an
        error result, stored, before anything follows it: the history stays paired."""
        calls = unanswered_tool_calls(self._history)
        if not calls:
            return
        results = [
            ToolResult(
                call.id,
                call.name,
                (Text(INTERRUPTED_RESULT),),
                is_error=True,
            )
            for call in calls
        ]
        await self._store_tool_results(results, [])
        self._notice(
            f"{len(calls)} tool call(s) of an interrupted turn got an error result "
            "(the process running them stopped)"
        )

    async def _refresh_summary(self) -> None:
        """After ``/new``: adopt the previous session's summary once it is ready."""
        try:
            context = await self.store.load_context(self.id, owner=self.owner)
            if context.summary is not None:
                self._summary_pending = False
                await self._reload()
        except StoreError as exc:  # the turn goes on with the context it has
            self._notice(f"The new session's summary could not be read: {exc}")

    async def _loop(self, *, inputs: int) -> TurnResult:
        produced: list[Message] = []
        usage = Usage()
        calls = 0
        final: Message | None = None
        stopped: str | None = None
        for _ in range(self._settings.max_steps):
            try:
                completion = await self._step_call()
            except AbortedError:
                return await self._aborted(produced, usage, calls, inputs)
            calls += 1
            message = completion.message
            if completion.usage is not None:
                usage = add_usage(usage, completion.usage)
            if not message.parts:
                self._notice("The model returned an empty reply")
                break
            timing = message.meta.get("timing") or {}
            message = message.replace(id=new_id())
            stored = await self.store.append(
                self.id,
                NewMessage(
                    message,
                    model=completion.model,
                    ttft_ms=timing.get("ttft_ms"),
                    total_ms=timing.get("total_ms"),
                ),
                owner=self.owner,
                holder=self._turn_holder,
            )
            self._append(message, stored.seq)
            produced.append(message)
            final = message
            if not message.tool_calls:
                break
            try:
                results = await self._run_tools(message.tool_calls)
            except AbortedError as aborted:
                await self._store_tool_results(aborted.results, produced)
                return self._result(produced, usage, calls, inputs, aborted=True)
            await self._store_tool_results(results, produced)
            if self._abort_requested:
                return self._result(produced, usage, calls, inputs, aborted=True)
            self._maybe_compact()
        else:
            stopped = "max_steps"
            self._notice(f"Stopped after {self._settings.max_steps} model calls in one turn")
        return self._result(produced, usage, calls, inputs, final=final, stopped=stopped)

    def _result(
        self,
        produced: list[Message],
        usage: Usage,
        calls: int,
        inputs: int,
        *,
        final: Message | None = None,
        aborted: bool = False,
        stopped: str | None = None,
    ) -> TurnResult:
        last = final
        if last is None:
            last = next((m for m in reversed(produced) if m.role == "assistant"), None)
        return TurnResult(
            text=last.text if last is not None else "",
            message=last,
            messages=tuple(produced),
            usage=usage,
            calls=calls,
            aborted=aborted,
            stopped=stopped,
            inputs=inputs,
            events=tuple(self._turn_events),
        )

    async def _aborted(
        self, produced: list[Message], usage: Usage, calls: int, inputs: int
    ) -> TurnResult:
        """Store the partial reply of the call ``abort`` cancelled (its text: reasoning without
        its signature could not be sent back), and end the turn."""
        text = "".join(self._partial.text)
        message: Message | None = None
        if text.strip():
            message = Message.assistant(text, id=new_id(), meta={"aborted": True})
            stored = await self.store.append(
                self.id, message, owner=self.owner, holder=self._turn_holder
            )
            self._append(message, stored.seq)
            produced.append(message)
        self._notice("Aborted" + (": the partial reply was stored" if message else ""))
        return self._result(produced, usage, calls, inputs, final=message, aborted=True)

    async def _store_tool_results(
        self, results: Sequence[ToolResult], produced: list[Message]
    ) -> None:
        if not results:
            return
        messages = [Message("tool", (r,), id=new_id()) for r in results]
        stored = await self.store.append_many(
            self.id, messages, owner=self.owner, holder=self._turn_holder
        )
        for message, row in zip(messages, stored, strict=True):
            sent = self._prepare_message(message)
            if sent is not message:
                clipped = sent.meta.get("clipped") or {}
                self._notice(
                    f"Tool result of {message.tool_results[0].name} clipped for the model "
                    f"(~{format_token_size(int(clipped.get('tokens', 0)))} tokens, cap "
                    f"{format_token_size(self._tool_cap())}); stored whole"
                )
            self._append(sent, row.seq)
            produced.append(sent)

    async def _run_tools(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        for call in calls:
            self._emit(ToolStarted(call))

        def context(call: ToolCall) -> ToolContext:
            return ToolContext(call.id, call.name, self)

        def track(task: asyncio.Task[ToolResult]) -> None:
            self._tool_tasks.add(task)
            task.add_done_callback(self._tool_tasks.discard)

        def finished(result: ToolResult) -> None:
            self._emit(ToolFinished(result))

        results = await self.tools.run(calls, context=context, on_task=track, on_result=finished)
        if self._abort_requested:
            raise AbortedError(results)
        return results

    async def _step_call(self) -> Completion:
        """Check the context, then call the model with recovery; the completion."""
        self._partial = Partial()
        await self._before_call()
        retry = {"n": 0}

        async def attempt() -> Completion:
            retried = retry["n"] > 0
            retry["n"] += 1
            budget = self.budget()  # the recovery may have learnt the provider's real window
            context = build_context(self._history, self._state)
            epoch, length = self._state.epoch, len(self._history)
            estimate = self._estimate(context)
            self._state = self._state.next_call()
            self._partial.reset()
            try:
                completion: Completion = await self._interruptible(
                    with_retries(
                        lambda: self._stream(context, budget),
                        retries=self._settings.max_retries,
                        delay=self._settings.retry_delay,
                        on_retry=self._emit,
                    )
                )
            except (ContextOverflowError, ProviderError):
                self.call_log.append(
                    CallRecord(epoch, tuple(context), estimate, None, retry=retried, ok=False)
                )
                raise
            try:
                warning = check_truncation(completion.usage, estimate, budget.context_window)
            except SilentTruncationError:
                self.call_log.append(
                    CallRecord(epoch, tuple(context), estimate, completion.usage, retried, False)
                )
                raise
            self.call_log.append(
                CallRecord(epoch, tuple(context), estimate, completion.usage, retry=retried)
            )
            self._learn(completion.usage, length, epoch)
            if warning is not None:
                self._notice(warning)
            return completion

        return await call_with_recovery(
            attempt,
            self._recover,
            enabled=self.budget().overflow_recovery,
            input_budget=lambda: self.budget().input_budget,
            on_retry=self._emit,
            conversation_id=self.id,
        )

    async def _stream(self, context: Sequence[Message], budget: Budget) -> Completion:
        self._partial.reset()
        completion: Completion | None = None
        async for event in self.model.stream(
            context,
            tools=self.tools.specs or None,
            max_output_tokens=budget.output_reserve,
            **dict(self._settings.model_options),
        ):
            if isinstance(event, Completion):
                completion = event
            else:
                self._partial.add(event)
                self._delta(event)
        if completion is None:
            raise ProviderError("the model's stream ended without a completion")
        return completion

    async def _before_call(self) -> None:
        """Make the context fit before a call: the manager decides each step from the size
        (``ContextManager.call_step``: wait for the running compaction only when it must,
        count exactly when close to the limit, compact in the foreground if needed); this
        does what it says until the context may be sent."""
        budget = self.budget()  # the budget the check began with, for every step of it
        size = self._size()
        counts = callable(getattr(self.model, "count_tokens", None))
        margin = self._settings.exact_count_margin if counts else None
        stage: Stage = "first"
        while True:
            step = self._manager.call_step(
                size,
                budget,
                stage=stage,
                background=self._settings.background_compaction,
                count_margin=margin,
            )
            stage = step.stage
            if step.action == "send":
                return
            if step.action == "fit":
                await self._fit(size)
                return
            if step.action == "wait":
                await self._wait_compaction()
                size = self._size()
            elif step.action == "count":
                size = await self._count_exactly(size)
            else:  # start, or compact: planned now (the plan says whether a trigger fires)
                plan = self._plan(size=size)
                if plan is not None:
                    task = self._spawn(plan)
                    if step.action == "compact":
                        await self._interruptible(asyncio.shield(task))
                        size = self._size()

    async def _count_exactly(self, size: int) -> int:
        """The model's own count of the context (``size`` when it gives none); a count is a
        report without a call: learned by the same rule as usage."""
        context = build_context(self._history, self._state)
        exact = await self._interruptible(exact_tokens(self.model, context, self.tools.specs))
        if exact is None:
            return size
        self._manager.take_report_for(
            self.tools.specs, Usage(input=exact), len(self._history), self._state.epoch
        )
        return int(exact)

    def _learn(self, usage: Usage | None, length: int, epoch: int) -> None:
        """Record the provider's report and learn the calibration from it, as every
        ``ContextManager`` does (the conversation's manager: ``take_report_for``)."""
        budget = self.budget()
        if usage is None or usage.context_tokens <= 0:
            return
        taken, hidden = self._manager.take_report_for(self.tools.specs, usage, length, epoch)
        if hidden is not None:
            self._engine_event(hidden)
        event = UsageUpdated(
            usage=usage,
            context_tokens=usage.context_tokens,
            input_budget=budget.input_budget,
            stale=not taken,
            calibration=round(self.counter.calibration.factor, 4),
        )
        self._engine_event(event)


def add_usage(a: Usage, b: Usage) -> Usage:
    """The sum of two usage reports."""
    return Usage(
        input=a.input + b.input,
        output=a.output + b.output,
        cache_read=a.cache_read + b.cache_read,
        cache_write=a.cache_write + b.cache_write,
        reasoning=a.reasoning + b.reasoning,
    )
