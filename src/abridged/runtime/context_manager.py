"""ContextManager: keep the context of your own agent loop inside the window, O(new) per call.

::

    cm = ContextManager(context_window=128_000, max_output_tokens=16_384, tools=tools)
    while True:
        ctx = cm.prepare(messages)                        # OpenAI or Anthropic dicts, or Messages
        reply = client.chat.completions.create(model=m, messages=ctx.messages, tools=tools)
        cm.record_usage(reply.usage)                      # the provider's count: ground truth
        messages.append(reply.choices[0].message)         # the SDK's object, or a dict
        ...                                               # run the tools, append their results

You keep the whole history; ``prepare`` returns the context to send, in the same format, and what
it did (``ctx.events``, ``ctx.notifications``). The context is the history itself until the
first prune or compaction (the very list you passed, not a copy); after it, a list laid out
stable-first (system, summary, pinned, pruned region, tail: see ``abridged.engine.context``).

**Cost per call.** The manager recognises the unchanged prefix of the list you pass
(``abridged.runtime.tracking``), reads only the new items, keeps running token sums and bounds
(``abridged.runtime.token_sums``, ``abridged.runtime.sizing``), and builds a context only when it
changes (``abridged.runtime.output``). A call costs O(new messages) while nothing is compacted;
a compaction costs O(context). When you edit or drop earlier messages the manager re-plans from
the first difference: a summary that covered an edited message is dropped, an older one is kept.
Passing the last context plus new messages (``ctx.messages + [reply]``) works too.

**Sync and async.** ``prepare`` and ``aprepare`` do the same; the sync form runs the summarizer
with ``asyncio.run`` when a compaction needs it (in a worker thread when called inside a running
event loop: prefer ``aprepare`` there). The async forms keep the event loop free: the CPU work
(reading many new items, sizing, planning, the extractive summary, building the context after a
change) runs in a worker thread while they await it, and the hooks still run on the loop (the
``on_event`` calls made by that work are delivered when it returns). Not thread-safe: one manager
per conversation, one call at a time.

**One fit loop.** ``afit`` and ``arecover`` are the driver that plans, runs, commits and
re-measures until the context fits (``abridged.runtime.driver.fit_context``); ``prepare``,
``compact`` and ``recover_overflow`` use it, and so does a ``Conversation``, whose manager this
is too (see "hosting a Conversation" below), passing its compaction task as the ``run``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from abridged.core.budget import Budget, BudgetSettings
from abridged.core.model import Message, Usage
from abridged.core.protocols import ChatModel, Summarizer, ToolSpec
from abridged.core.tokens import REPLY_PRIMING, TokenCounter, estimate_tools_tokens
from abridged.core.turns import head_length
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import CompactionHooks, CompactionResult, rebase, run_compaction
from abridged.engine.compaction_settings import CompactionSettings
from abridged.engine.context import CompactionState, build_context
from abridged.engine.plan import (
    CompactionPlan,
    call_trigger,
    context_length,
    plan_compaction,
    plan_emergency,
)
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.triggers import choose_trigger
from abridged.errors import ContentionError, SettingError, StoreError
from abridged.events.engine import Event, HiddenPrefix, UsageUpdated
from abridged.runtime.background import BackgroundCompaction, Host
from abridged.runtime.call_check import CallStep, Stage, call_step
from abridged.runtime.caller_formats import (
    Format,
    check_format,
    read_usage,
    token_upper_bound,
    tool_definitions,
    tool_specs,
)
from abridged.runtime.driver import (
    Fitted,
    OffLoopSummarizer,
    Runner,
    SummarizerFactory,
    calibrated_budget,
    fit_context,
    off_loop,
    off_loop_fallback,
)
from abridged.runtime.output import OutputCache
from abridged.runtime.persistence import Committed, StoredConversation, stored_seqs
from abridged.runtime.settings import Settings, check_budget, resolve_settings, resolve_window
from abridged.runtime.sizing import Report, Sizer, known_output_tokens
from abridged.runtime.token_sums import TokenSums
from abridged.runtime.tracing import logged
from abridged.runtime.tracking import VERIFY_MODES, Change, TrackedList, Verify

if TYPE_CHECKING:
    from abridged.runtime.history import Loaded
    from abridged.store import ConversationInfo, Store

__all__ = [
    "ContextManager",
    "OffLoopSummarizer",
    "Prepared",
    "ReplayStep",
    "known_output_tokens",
    "off_loop",
    "off_loop_fallback",
    "run_sync",
]

T = TypeVar("T")

_UNSET: Any = object()


#: ``aprepare`` reads up to this many new items on the event loop; more go to a worker thread.
INLINE_ITEMS = 256


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion from sync code (in a worker thread when an event loop is
    already running in this thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class _Size:
    """A context size known now, or computed on first use."""

    __slots__ = ("_compute", "_value")

    def __init__(self, value: int | None, compute: Callable[[], int] | None = None) -> None:
        self._value = value
        self._compute = compute

    def get(self) -> int:
        if self._value is None:
            self._value = self._compute() if self._compute is not None else 0
            self._compute = None
        return self._value


@dataclass(frozen=True, slots=True)
class Prepared:
    """The context to send for one call, and what the manager did to get it.

    - ``messages``: the context in the caller's format (the list passed in, unchanged, until
      the first prune or compaction); ``system``: the system prompt to send (Anthropic).
    - ``events``: what happened since the previous call (usage reports, prunes, compactions);
      ``notifications`` their human text.
    - ``changed``: this call changed the sent prefix (the provider's cache starts over).
    - ``tokens``: the context's size (the provider's last report plus the calibrated estimate of
      what followed), computed on first access when deciding did not need it.
    - ``budget``, ``state``, ``format``, ``history_length``: for meters and debugging.
    """

    messages: list[Any]
    system: Any
    events: tuple[Event, ...]
    changed: bool
    budget: Budget
    state: CompactionState
    format: Format
    history_length: int
    _size: _Size = field(repr=False, compare=False)

    @property
    def tokens(self) -> int:
        """Estimated tokens of the context (its limit: ``budget.input_budget``)."""
        return self._size.get()

    @property
    def notifications(self) -> list[str]:
        """The human text of ``events``."""
        return [event.text for event in self.events]


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One model call of a replayed transcript: the context it would have been sent.

    ``index``: the transcript index of the call's reply (the context covers ``[:index]``).
    """

    index: int
    context: list[Message]
    tokens: int
    events: tuple[Event, ...]
    state: CompactionState
    budget: Budget


class ContextManager:
    """Keeps one conversation's context within the model's window (see the module docstring).

    - The model, first: its name (``ContextManager("openai/gpt-4.1")``: the window and the
      maximum output come from the bundled registry, ``abridged.providers.registry``) or its
      ``ModelLimits``. ``context_window`` and ``max_output_tokens`` override them;
      ``limits=``/``model=`` say the same by keyword. ``SettingError`` when no window is known.
    - ``format``: ``"auto"`` (detected from the list), ``"openai"``, ``"responses"`` (OpenAI
      Responses input items), ``"anthropic"`` or ``"abridged"``. ``tools``: the tool
      definitions, any format (``prepare`` may change them).
    - The compaction knobs, flat, by keyword (``trigger=0.85, keep_recent=20_000,
      prune={"read_file": "keep"}``: every name of ``abridged.runtime.Settings``, listed with
      defaults and ranges in the README), or ``settings=Settings(...)``. A knob left out keeps
      its default, sized to the window. The engine's forms work too: ``budget``
      (``BudgetSettings``) and ``settings`` (``CompactionSettings``), with the knobs on top.
    - ``summarizer``: a ``Summarizer``, or a ``ChatModel`` to summarize with (an
      ``LLMSummarizer`` sized to this budget, with the extractive fallback; when the model's
      ``name`` is ``model``, the summary request is the context itself plus an instruction, so
      the provider reads it from the prompt cache); default ``ExtractiveSummarizer()``.
      ``summary_window``: that model's own context window, when it is not the conversation's
      (its requests are sized to it, with a margin for the estimator's error);
      ``summary_options``: passed to every summary call (``{"temperature": 0}``).
    - ``hooks``: ``before_compact``, ``after_compact``, ``on_event``. ``counter``: the token
      counter (an exact tokenizer, a carried-over calibration). ``clock``: for durations.
    - ``pinned``: history indexes never summarized away.
    - ``store`` (a ``Store``), ``conversation_id`` (default: a new conversation, see
      ``conversation_id`` after the first call) and ``owner``: keep the conversation in the
      store (``abridged.runtime.persistence``): messages, compactions and prunes are stored and
      the state is read back, so a restart or another process sends the same bytes. Use the
      async methods (``aprepare``, ``acompact``, ``arecover_overflow``) with a store; the
      history is append-only once stored.
    - ``verify``: how the unchanged prefix of the list is recognised: ``"auto"`` (spot checks
      when you pass the same list object as last time, grown in place; one comparison of every
      item, at C speed, when you pass a new list), ``"spot"`` or ``"full"`` (always).

    >>> cm = ContextManager(context_window=16_384, max_output_tokens=4_096)
    >>> history = [{"role": "user", "content": "hi"}]
    >>> ctx = cm.prepare(history)
    >>> ctx.messages is history, ctx.tokens < 20, cm.budget.input_budget
    (True, True, 11264)
    """

    def __init__(
        self,
        spec: str | ModelLimits | None = None,
        /,
        *,
        limits: ModelLimits | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        model: str | None = None,
        format: str = "auto",
        tools: Sequence[Any] | None = None,
        budget: BudgetSettings | None = None,
        settings: Settings | CompactionSettings | None = None,
        summarizer: Summarizer | ChatModel | None = None,
        summary_window: int | None = None,
        summary_options: Mapping[str, Any] | None = None,
        hooks: CompactionHooks | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], float] = time.monotonic,
        pinned: Iterable[int] = (),
        verify: str = "auto",
        store: Store | None = None,
        conversation_id: str | None = None,
        owner: str | None = None,
        **knobs: Any,
    ) -> None:
        window, output, limits, model = resolve_window(
            spec,
            limits=limits,
            model=model,
            context_window=context_window,
            max_output_tokens=max_output_tokens,
        )
        if verify not in VERIFY_MODES:
            raise SettingError("verify", verify, '"auto", "spot" or "full"')
        self._budget_settings, self.settings = resolve_settings(settings, budget, knobs)
        self._window = window
        self._max_output = output
        check_budget(window, output, self._budget_settings, knobs)  # validates now
        self._fixed_format = check_format(format)
        self._verify: Verify = verify
        if counter is None:
            name = model or (limits.model if limits is not None and limits.model else None)
            counter = TokenCounter(model=name)
        self.counter = counter
        self._summarizer = SummarizerFactory(
            summarizer,
            own_name=model,
            counter=counter,
            window=summary_window,
            options=summary_options,
        )
        self.hooks = hooks if hooks is not None else CompactionHooks()
        self._clock = clock
        self._pins: set[int] = {int(i) for i in pinned}
        self._tools_arg: Sequence[Any] | None = tools
        self._tools_key: Any = _UNSET
        self._tool_specs: tuple[ToolSpec, ...] = ()
        # ``on_event`` calls made in a worker thread, delivered on the loop when it returns.
        self._held: list[Event] | None = None
        if conversation_id is not None and store is None:
            raise SettingError("conversation_id", conversation_id, "None without a store")
        self._persisted = (
            StoredConversation(store, conversation_id, owner=owner, model=model)
            if store is not None
            else None
        )
        self._edited: int | None = None  # the first history index edited since the last call
        self._background: BackgroundCompaction | None = None  # a conversation's compaction task
        self._reset()

    def _reset(self) -> None:
        self._tracked = TrackedList(self._fixed_format, self._verify, self._new_sums)
        self._sizer = Sizer(self.counter)
        self._output = OutputCache()
        self._state = CompactionState()
        self._states: list[CompactionState] = [self._state]
        self._last_prepare: tuple[int, int] | None = None
        self._events: list[Event] = []
        # the history index of the provider's own compaction the state starts at (None: none),
        # and whether it moved since the last context was handed out
        self._provider_cut: int | None = None
        self._provider_moved = False
        self._budget: Budget | None = None
        self._head_key: tuple[str, ...] | None = None
        self._tools_key = _UNSET
        # a conversation's: the state its size was last rebased for (``size_for``), and the
        # stored sequence number of each history message (``None``: not stored)
        self._sized_for: tuple[Any, ...] | None = None
        self._seqs: list[int | None] = []
        self._refresh_tools()

    def _new_sums(self) -> TokenSums:
        return TokenSums(self.counter.message_tokens, token_upper_bound)

    # -- public state ------------------------------------------------------------------------

    @property
    def format(self) -> Format | None:
        """The format in use (``None`` until the first call detects it)."""
        return self._tracked.format

    @property
    def state(self) -> CompactionState:
        """The current compaction state."""
        return self._state

    @property
    def conversation_id(self) -> str | None:
        """The stored conversation's id (with a store; created on the first call when none
        was given), else ``None``."""
        return self._persisted.conversation_id if self._persisted is not None else None

    @property
    def budget(self) -> Budget:
        """The budget for the current system prompt and tools."""
        return self._current_budget()

    @property
    def context_window(self) -> int:
        """The context window the budget is computed for (the model's, or the one given). Read
        without computing the budget: unlike ``budget``, it never raises ``ContextOverflowError``
        when the system prompt, tools and hidden prefix alone fill the input budget."""
        return self._window

    @property
    def history(self) -> tuple[Message, ...]:
        """The whole history as abridged messages (an O(n) copy)."""
        return tuple(self._tracked.history)

    def context_messages(self) -> list[Message]:
        """The current context as abridged messages (O(context))."""
        return build_context(self._tracked.history, self._state)

    @property
    def hidden_prefix(self) -> int:
        """Tokens the provider counts that the messages do not hold (a system prompt or tool
        definitions left out, as in agent logs), learned from its reports; 0 when none. They
        are counted in every size and in the budget, and never compacted."""
        return self._sizer.hidden

    def context_tokens(self) -> int:
        """The current context's size (estimating what was only bounded so far)."""
        tracked = self._tracked
        return self._sizer.exact(self._state, len(tracked.history), tracked.history, tracked.sums)

    def history_tokens(self) -> int:
        """The size the whole history would have if it were sent as the caller holds it (the
        calibrated estimate, tools and hidden prefix included), whatever was compacted: the
        proxy's request log compares it with ``context_tokens()``. Estimates what was only
        bounded so far (each message once)."""
        tracked = self._tracked
        tracked.sums.materialize(tracked.history)
        raw = tracked.sums.exact(0, tracked.sums.length)
        return self.counter.calibration.apply(raw + self._sizer.tools_raw + REPLY_PRIMING) + (
            self._sizer.hidden
        )

    def pin(self, index: int) -> None:
        """Pin history message ``index``: never summarized away (from the next cut on)."""
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise SettingError("index", index, "a history index >= 0")
        self._pins.add(index)

    def unpin(self, index: int) -> None:
        """Unpin history message ``index`` (messages already carried stay until the next cut)."""
        self._pins.discard(index)

    def invalidate(self, index: int = 0) -> None:
        """Say that the caller's items from ``index`` on changed in place: they are read again
        on the next call, and everything from there is re-planned."""
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise SettingError("index", index, "an item index >= 0")
        if index < len(self._tracked.items):
            self._rollback(self._tracked.truncate(index))

    def reset(self) -> None:
        """Forget the conversation (the calibration is kept); with a store, the next call reads
        the stored conversation's state again."""
        self._reset()
        if self._persisted is not None:
            self._persisted.detach()

    # -- the calls ---------------------------------------------------------------------------

    def prepare(
        self,
        messages: Sequence[Any],
        *,
        system: Any = None,
        tools: Sequence[Any] | None = None,
        usage: Any = None,
    ) -> Prepared:
        """The context to send for ``messages`` (the whole history, or the last context plus
        new messages). ``system``: the Anthropic system prompt. ``tools``: the tool definitions
        when they changed. ``usage``: the last call's usage, if not given to ``record_usage``.
        """
        self._no_store("prepare")
        plan = self._begin(messages, system, tools, usage)
        changed = run_sync(self._drive(plan)).changed if plan is not None else False
        return self._finish(messages, changed=changed)

    async def aprepare(
        self,
        messages: Sequence[Any],
        *,
        system: Any = None,
        tools: Sequence[Any] | None = None,
        usage: Any = None,
        stored: ConversationInfo | None = None,
        write_behind: bool = False,
    ) -> Prepared:
        """The async form of ``prepare``; the CPU work runs in a worker thread (see the module
        docstring), so the event loop is never held for long. ``stored``: the conversation as
        the caller has just read it from the store (a turn lease's ``conversation``), which
        saves reading it again. ``write_behind``: when nothing is to be compacted, the new
        messages are stored later, by ``aflush``, once the caller has sent the context and
        passed on the answer (the proxy: its client keeps the whole history and sends it
        again, so nothing is lost if the process dies first); the caller must ``aflush``
        before it gives up its turn lease. The next store operation flushes first too."""
        if self._few_new(messages):
            due = self._begin_call(messages, system, tools, usage)
        else:
            due = await self._off_loop(self._begin_call, messages, system, tools, usage)
        due = await self._persist_messages(stored, behind=write_behind and not due) or due
        if due and self._few_unestimated():
            # near a threshold: whether a trigger fires is known on the loop, and a plan that
            # would find nothing to do is not made in a worker thread (a hop a request)
            due = self._trigger_fires()
        plan = await self._off_loop(self._plan_call) if due else None
        changed = (await self._drive(plan, threaded=True)).changed if plan is not None else False
        if not changed:
            return self._finish(messages, changed=changed)
        return await self._off_loop(self._finish, messages, changed=changed)

    def compact(
        self,
        instructions: str | None = None,
        *,
        messages: Sequence[Any] | None = None,
        system: Any = None,
    ) -> Prepared:
        """Compact now (``/compact``), with optional focus ``instructions``; returns the context
        to send next. ``messages`` default to the last ones given."""
        self._no_store("compact")
        return run_sync(self.acompact(instructions, messages=messages, system=system))

    async def acompact(
        self,
        instructions: str | None = None,
        *,
        messages: Sequence[Any] | None = None,
        system: Any = None,
    ) -> Prepared:
        """The async form of ``compact`` (the CPU work in a worker thread)."""
        if messages is not None:
            await self._off_loop(self._sync, messages, system)
        await self._persist_messages()
        plan = await self._off_loop(self._plan_manual, instructions)
        changed = (await self._drive(plan, threaded=True)).changed if plan is not None else False
        # A usage reported next describes the context sent before this compaction (stale),
        # unless the caller prepares again: which one was sent, the manager cannot know.
        return await self._off_loop(self._finish, None, changed=changed, sending=False)

    def _plan_manual(self, instructions: str | None) -> CompactionPlan | None:
        self._refresh_fixed(None)
        return plan_compaction(
            self._tracked.history,
            **self._engine_args(),
            focus=instructions,
            manual=True,
            context_tokens=self.context_tokens(),
        )

    def recover_overflow(self, reported_tokens: int | None = None) -> Prepared:
        """The provider rejected the last context as too long: run the emergency path and
        return the context to retry with (retry once). ``reported_tokens``: the size the
        provider said the context had, if it said."""
        self._no_store("recover_overflow")
        return run_sync(self.arecover_overflow(reported_tokens))

    async def aflush(self) -> None:
        """Store the messages ``aprepare(..., write_behind=True)`` held back; raises the
        store's error if that write fails (the next call writes them again)."""
        if self._persisted is not None:
            await self._persisted.flush()

    async def arecover_overflow(self, reported_tokens: int | None = None) -> Prepared:
        """The async form of ``recover_overflow`` (the CPU work in a worker thread)."""
        fitted = await self.arecover(reported_tokens)
        return await self._off_loop(self._finish, None, changed=fitted.changed)

    # -- the fit driver -------------------------------------------------------------------------
    # The one loop that plans, runs, commits and re-measures until the context fits, for every
    # runtime: ``prepare``, ``compact`` and ``recover_overflow`` above, and a ``Conversation``'s
    # foreground fit and overflow recovery (``abridged.runtime.compacting``), which pass the
    # ``run`` that carries a plan out as their compaction task.

    async def afit(self, size: int | None = None, *, run: Runner | None = None) -> Fitted:
        """Make the context fit the input budget now: plan at ``size`` tokens (default:
        ``context_tokens()``; a conversation passes the provider's exact count when it has
        one), carry the plan out, then the emergency path while it does not fit
        (``abridged.runtime.driver.fit_context``). ``run``: how a plan is carried out and
        committed (default: here, through the manager's commit). The budget is the current
        one. ``ContextOverflowError`` when the context cannot fit."""
        budget = self._current_budget()
        if size is None:
            size = await self._size_now(threaded=True)
        plan = await self._off_loop(self._planner(budget, context_tokens=size))
        return await self._drive(plan, budget=budget, run=run, threaded=True)

    async def arecover(
        self, reported_tokens: int | None = None, *, run: Runner | None = None, strict: bool = False
    ) -> Fitted:
        """The provider rejected the last context as too long: the emergency path, scaled to
        ``reported_tokens`` (what the provider said the context held, if it said), then the fit
        loop as ``afit``'s. ``run`` as ``afit``'s. ``strict``: when the emergency compaction does
        not compact, stop there (``Fitted.first`` says so) rather than measure again: the
        caller's estimate was just proven wrong by the provider (a ``Conversation`` raises)."""
        # what the last reports taught is learned first: the plan scales its estimates
        if not self._holds_conversation:  # a caller's list: its new items are read off the loop
            await self._off_loop(self._learn)
        else:
            self._learn()
        budget = self._current_budget()
        planner = self._planner(budget, emergency=True, context_tokens=reported_tokens)
        plan = await self._off_loop(planner)
        assert plan is not None  # an emergency plan is always made
        return await self._drive(plan, budget=budget, run=run, threaded=True, strict=strict)

    def _learn(self) -> None:
        tracked = self._tracked
        self._sizer.learn(self._state, tracked.history, tracked.sums)

    def _planner(
        self, budget: Budget, *, emergency: bool = False, **options: Any
    ) -> Callable[[], CompactionPlan | None]:
        """A plan of the context as it is now under ``budget`` (``plan_compaction``, or
        ``plan_emergency`` with ``emergency``; ``options`` are theirs), to make in a worker
        thread: its arguments are read now, on a snapshot of the history."""
        args = self._engine_args(budget)
        history = tuple(self._tracked.history)
        if emergency:
            return functools.partial(plan_emergency, history, **args, **options)
        return functools.partial(plan_compaction, history, **args, **options)

    async def _drive(
        self,
        plan: CompactionPlan | None,
        *,
        budget: Budget | None = None,
        run: Runner | None = None,
        threaded: bool = False,
        strict: bool = False,
    ) -> Fitted:
        """Carry ``plan`` out, then the emergency path while the context does not fit
        (``fit_context``). ``run``: a conversation's way of carrying a plan out (its
        compaction task), else the manager's own. ``threaded``: the CPU work (the extractive
        summary, committing, planning again, measuring a caller's list) runs in a worker
        thread; a conversation's size is measured on the loop, where its meters read it."""
        budget = budget if budget is not None else (plan.budget if plan else self.budget)
        if run is None:
            run = functools.partial(self._run_here, threaded=threaded)

        async def size() -> int:
            return await self._size_now(threaded=threaded)

        async def emergency(budget: Budget, measured: int) -> CompactionPlan:
            planner = self._planner(budget, emergency=True, measured=measured)
            made = await self._off_loop(planner) if threaded else planner()
            assert made is not None  # an emergency plan is always made
            return made

        return await fit_context(
            plan,
            run=run,
            size=size,
            emergency=emergency,
            budget=budget,
            conversation_id=self.conversation_id,
            strict=strict,
        )

    async def _run_here(self, plan: CompactionPlan, *, threaded: bool) -> CompactionResult:
        """Carry ``plan`` out and commit it (store first, with a store), on the loop or with
        the CPU work in a worker thread (``threaded``)."""
        summarizer = self._summarizer(plan.budget)
        if not threaded:
            result = await run_compaction(
                plan,
                summarizer,
                hooks=self._logged(self.hooks),
                clock=self._clock,
                count_tokens=self._count,
                gather=asyncio.gather,
            )
            await self.commit(result)
            return result
        result = await run_compaction(
            plan,
            off_loop(summarizer),
            hooks=self._logged(self.hooks),
            clock=self._clock,
            count_tokens=self._count,
            fallback=off_loop_fallback(summarizer),
            gather=asyncio.gather,
        )
        await self.commit(result, threaded=True)
        return result

    # -- the commit ------------------------------------------------------------------------------
    # The one commit path of every runtime: the fit loop's ``_run_here`` (a caller's list, the
    # replay) and a Conversation's compaction task (``abridged.runtime.background``) call it.

    async def commit(
        self,
        result: CompactionResult,
        *,
        duration_ms: float | None = None,
        on_prune_error: Callable[[StoreError], None] | None = None,
        reload: Callable[[], Awaitable[None]] | None = None,
        threaded: bool = False,
    ) -> Committed | None:
        """Commit ``result``, store first, then memory: applied by the engine's ``rebase`` to
        the history as it is now (a conversation's grew while its task ran), stored through
        ``StoredConversation.commit`` (with a store), then taken as the manager's state.
        ``None`` when it was dropped (planned on a state that changed meanwhile); without a
        store, or before the stored conversation is attached, version 0.

        What differs between runtimes is said here, not copied: ``duration_ms`` (default: the
        result's own, run time); ``on_prune_error`` (given, a prune the store refused is
        reported to it, the summary kept; else raised); ``reload``: how the store is read
        again when another writer changed the conversation first (``lost``: nothing of
        ``result`` is kept, its events are still reported) or kept changing it
        (``ContentionError``, raised after it): a conversation reloads its history, the
        default restores this manager's state from the stored context. ``threaded``: the
        in-memory step (sizing the new state) runs in a worker thread."""
        rebased = rebase(result, self._tracked.history, self._state)
        if rebased is None:
            return None
        committed = Committed(0)
        if self._persisted is not None:
            if duration_ms is None:
                duration_ms = round(result.duration * 1000, 3)
            try:
                stored = await self._persisted.commit(
                    rebased,
                    self._stored_seqs(),
                    duration_ms=duration_ms,
                    on_prune_error=on_prune_error,
                )
            except ContentionError:
                if reload is not None:
                    await reload()
                raise
            committed = stored if stored is not None else committed
            if committed.lost:
                await (reload or functools.partial(self._restore_stored, rebased))()
                return committed
        if threaded:
            await self._off_loop(self._take, rebased)
        else:
            self._take(rebased)
        return committed

    def _stored_seqs(self) -> list[int | None]:
        """The stored sequence number of each history message: a conversation holds them as
        its store gave them (``seqs``); a caller's list is stored in order after the system
        prompt (``StoredConversation.sync``)."""
        if self._holds_conversation:
            return self._seqs
        return stored_seqs(self._tracked.history)

    async def _restore_stored(self, result: CompactionResult) -> None:
        """Another writer came first: adopt the store's state instead of ``result``'s."""
        assert self._persisted is not None
        adopted = await self._persisted.reread(self._tracked.history, self._state)
        self._events.extend(result.events)
        self._set_state(adopted, push=True)

    def _take(self, result: CompactionResult) -> None:
        """A committed ``result`` as the manager's state. A caller's list keeps the states it
        may roll back to (an edit) and hands the events out with the next context; a
        conversation's history is never edited, its events went to its hooks as they happened,
        and its size is rebased when next measured (``_rebase_if_moved``)."""
        if self._holds_conversation:
            self.adopt(result.state)
            return
        self._events.extend(result.events)
        self._set_state(result.state, push=result.changed)

    @property
    def _holds_conversation(self) -> bool:
        """Whether this is a ``Conversation``'s manager (see "hosting a Conversation"): its
        history comes from its store, appended, never tracked as a caller's list."""
        return self._background is not None

    async def _size_now(self, *, threaded: bool) -> int:
        """``_measure``, in a worker thread when ``threaded`` and the list is a caller's."""
        if threaded and not self._holds_conversation:
            return await self._off_loop(self._measure)
        return self._measure()

    def _measure(self) -> int:
        """The context's size now; a conversation's state moves without ``_set_state`` (its
        commits and reloads adopt states), so what it sends before the tail is recomputed
        first when the state moved."""
        if self._holds_conversation:
            self._rebase_if_moved()
        return self.context_tokens()

    def record_usage(self, usage: Any) -> UsageUpdated | None:
        """Record the provider's usage for the call made with the last prepared context.

        Accepts a ``Usage``, an OpenAI or Anthropic usage dict, or an SDK usage object. Returns
        the ``usage_updated`` event (also delivered with the next ``prepare``); ``None`` when
        the report holds no context size or no context was prepared yet.
        """
        parsed = read_usage(self._tracked.format, usage)
        if parsed is None or parsed.context_tokens <= 0 or self._last_prepare is None:
            return None
        length, epoch = self._last_prepare
        return self._record(parsed, length, epoch)

    # -- replay --------------------------------------------------------------------------------

    def replay(
        self, transcript: Sequence[Message], *, use_recorded_usage: bool = True
    ) -> Iterator[ReplayStep]:
        """Replay a recorded transcript call by call: the context each call would get.

        A call is each run of assistant messages (its context is everything before it); a
        transcript ending with a non-assistant message gets one last step. The recorded usage
        is used while the context is the recorded one (before the first prune or compaction),
        never after. The manager must be fresh and in the ``abridged`` (or ``auto``) format.

        >>> cm = ContextManager(context_window=16_384, max_output_tokens=4_096)
        >>> steps = list(cm.replay([Message.user("hi"), Message.assistant("hello")]))
        >>> [s.index for s in steps], steps[0].tokens <= cm.budget.input_budget
        ([1], True)
        """
        self._no_store("replay")
        fed, calls = self._replay_setup(transcript)
        for index in calls:
            self._replay_feed(fed, transcript, index, use_recorded_usage)
            prepared = self.prepare(fed)
            yield self._replay_step(index, prepared, transcript, use_recorded_usage)

    async def areplay(
        self, transcript: Sequence[Message], *, use_recorded_usage: bool = True
    ) -> AsyncIterator[ReplayStep]:
        """The async form of ``replay``."""
        fed, calls = self._replay_setup(transcript)
        for index in calls:
            self._replay_feed(fed, transcript, index, use_recorded_usage)
            prepared = await self.aprepare(fed)
            yield self._replay_step(index, prepared, transcript, use_recorded_usage)

    def _replay_setup(self, transcript: Sequence[Message]) -> tuple[list[Message], list[int]]:
        tracked = self._tracked
        if tracked.items or tracked.history:
            raise SettingError("replay", "a used ContextManager", "a fresh ContextManager")
        if self._fixed_format not in (None, "abridged"):
            raise SettingError("format", self._fixed_format, '"abridged" (or "auto") to replay')
        tracked.format, tracked.certain = "abridged", True
        calls = [
            i
            for i, m in enumerate(transcript)
            if m.role == "assistant" and (i == 0 or transcript[i - 1].role != "assistant")
        ]
        if transcript and transcript[-1].role != "assistant":
            calls.append(len(transcript))
        return [], calls

    def _replay_feed(
        self, fed: list[Message], transcript: Sequence[Message], index: int, use_usage: bool
    ) -> None:
        for message in transcript[len(fed) : index]:
            pristine = self._state.epoch == 0
            if message.usage is not None and not (use_usage and pristine):
                fed.append(message.replace(usage=None))
            else:
                fed.append(message)

    def _replay_step(
        self, index: int, prepared: Prepared, transcript: Sequence[Message], use_usage: bool
    ) -> ReplayStep:
        step = ReplayStep(
            index=index,
            context=self.context_messages(),
            tokens=self.context_tokens(),
            events=prepared.events,
            state=self._state,
            budget=prepared.budget,
        )
        if use_usage and self._state.epoch == 0 and index < len(transcript):
            recorded = transcript[index].usage
            if recorded is not None and recorded.context_tokens > 0:
                self.record_usage(recorded)
        return step

    # -- following the caller's list -------------------------------------------------------------

    def _sync(self, messages: Sequence[Any], system: Any) -> None:
        tracked = self._tracked
        change: Change = tracked.sync(messages, system)
        if change.edited is not None:
            self._rollback(change.edited)
            if self._persisted is not None:  # the store must hear of it (append-only)
                edited = self._edited
                self._edited = change.edited if edited is None else min(edited, change.edited)
        elif change.head:
            state = self._state
            through = state.through_id
            if state.cut and state.cut - 1 < head_length(tracked.history):
                through = tracked.history[state.cut - 1].id
            self._set_state(replace(state, through_id=through, epoch=state.epoch + 1))
            self._states = [self._state]
            self._sizer.forget()
        elif change.reread:
            self._output.invalidate()
            self._sizer.rebase(self._state, tracked.history, tracked.sums)
        boundary = tracked.provider_compaction
        if boundary is not None and boundary > self._state.cut:
            # The provider compacted the conversation itself (a Responses or Anthropic
            # compaction item): what precedes it is neither sent nor summarized again.
            history = tracked.history
            through = history[boundary - 1].id if boundary > 0 else None
            state = self._state.at_provider_compaction(boundary, through, len(history))
            self._set_state(state, push=True)
            self._provider_cut = boundary
            self._provider_moved = True
        self._pick_embedded_usage(change.appended_at)

    def _rollback(self, length: int) -> None:
        """History from ``length`` on changed: roll the state back to one that does not depend
        on it, and forget what was measured after it."""
        current = self._state
        # a state cut at the provider's compaction depends on that item itself
        lost = self._provider_cut is not None and self._provider_cut >= length
        while len(self._states) > 1 and (
            self._states[-1].truncated(length) is None or (lost and self._states[-1].cut >= length)
        ):
            self._states.pop()
        if lost:
            self._provider_cut = None
            self._provider_moved = True
        rolled = self._states[-1].truncated(length) or CompactionState()
        rolled = replace(
            rolled, calls=current.calls, backoff=current.backoff, epoch=current.epoch + 1
        )
        self._states[-1] = rolled
        self._set_state(rolled)
        self._sizer.forget(length)
        if self._last_prepare is not None and self._last_prepare[0] > length:
            self._last_prepare = None

    def _pick_embedded_usage(self, start: int) -> None:
        """A reply carrying its own usage (abridged messages) reports like ``record_usage``."""
        history = self._tracked.history
        last = self._last_prepare
        if last is None or last[0] != start or start >= len(history):
            return
        usage = history[start].usage
        if history[start].role != "assistant" or usage is None or usage.context_tokens <= 0:
            return
        report = self._sizer.report
        if report is None or (report.length, report.epoch) != last:
            self._record(usage, last[0], last[1])

    def _take_report(
        self, usage: Usage, length: int, epoch: int
    ) -> tuple[bool, HiddenPrefix | None]:
        """Take the provider's report of the context of ``history[:length]`` sent in ``epoch``
        (the one rule every manager, a conversation's too, learns its calibration by): whether
        it was taken (``False``: stale), and the hidden prefix it revealed or changed."""
        sizer = self._sizer
        taken = sizer.record(usage, length, epoch, self._state.epoch, window=self._window)
        if not (taken and sizer.whole_pending):
            return taken, None
        # Learned now, not at the next estimate: a hidden prefix changes this call's budget.
        before = sizer.hidden
        tracked = self._tracked
        sizer.learn(self._state, tracked.history, tracked.sums)
        after = sizer.hidden
        if after != before:
            self._budget = None
        if (after > 0) != (before > 0) or abs(after - before) > before // 4:
            return taken, HiddenPrefix(tokens=after, previous=before)
        return taken, None

    def _record(self, usage: Usage, length: int, epoch: int) -> UsageUpdated:
        taken, hidden = self._take_report(usage, length, epoch)
        if hidden is not None:
            self._emit(hidden)
        event = UsageUpdated(
            usage=usage,
            context_tokens=usage.context_tokens,
            input_budget=self._current_budget().input_budget,
            stale=not taken,
            calibration=round(self.counter.calibration.factor, 4),
        )
        self._emit(event)
        return event

    def _logged(self, hooks: CompactionHooks) -> CompactionHooks:
        """``hooks`` with each compaction event logged (``abridged.runtime.tracing``)."""
        return logged(hooks, self.conversation_id)

    def _emit(self, event: Event) -> None:
        self._events.append(event)
        if self.hooks.on_event is not None:
            if self._held is not None:
                self._held.append(event)  # in a worker thread: delivered on the loop after it
            else:
                self.hooks.on_event(event)

    # -- off the event loop ------------------------------------------------------------------

    def _few_new(self, messages: Sequence[Any]) -> bool:
        """Whether ``messages`` holds few items beyond those already read (the list grown in
        place, or the last context plus new messages): cheap enough to read on the loop."""
        tracked = self._tracked
        m = len(messages)
        if 0 <= m - len(tracked.items) <= INLINE_ITEMS:
            return True
        out = tracked.last_out
        return out is not None and 0 <= m - len(out) <= INLINE_ITEMS

    async def _off_loop(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``work(*args, **kwargs)`` in a worker thread; the ``on_event`` calls it makes are
        delivered on the loop when it returns. A cancellation waits for the work to end (a
        thread cannot be stopped, and the manager must not be left half-updated)."""
        held: list[Event] = []
        self._held = held
        future = asyncio.ensure_future(asyncio.to_thread(functools.partial(work, *args, **kwargs)))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await asyncio.wait([future])
            raise
        finally:
            self._held = None
            on_event = self.hooks.on_event
            if on_event is not None:
                for event in held:
                    on_event(event)

    # -- fixed parts: system prompt and tools --------------------------------------------------

    def _refresh_tools(self) -> None:
        key = self._tools_arg
        if key is self._tools_key:
            return
        if self._tools_key is not _UNSET and list(key or ()) == list(self._tools_key or ()):
            self._tools_key = key
            return
        self._tools_key = key
        self._tool_specs = tool_specs(key or ())
        self._sizer.tools_raw = estimate_tools_tokens(tool_definitions(key or ()))
        self._budget = None
        self._sizer.forget()

    def _refresh_fixed(self, tools: Sequence[Any] | None) -> None:
        if tools is not None:
            self._tools_arg = tools
        self._refresh_tools()
        history = self._tracked.history
        head_key = tuple(m.id for m in history[: head_length(history)])
        if head_key != self._head_key:
            self._head_key = head_key
            self._budget = None

    def _current_budget(self) -> Budget:
        if self._budget is None:
            history = self._tracked.history
            self._budget = calibrated_budget(
                self._window,
                self._max_output,
                self._budget_settings,
                counter=self.counter,
                system=history[: head_length(history)],
                tools_raw=self._sizer.tools_raw,
                hidden=self._sizer.hidden,
            )
        return self._budget

    # -- one call --------------------------------------------------------------------------------

    def _count(self, message: Message) -> int:
        """One message's calibrated estimate (the engine's counter)."""
        return self.counter.calibration.apply(self.counter.message_tokens(message))

    def _context_length(self) -> int:
        state, history = self._state, self._tracked.history
        if not state.compacted:
            return len(history)
        head = min(head_length(history), state.cut)
        summary = 1 if state.summary is not None else 0
        return head + summary + len(state.carried) + len(history) - state.cut

    def _begin(
        self, messages: Sequence[Any], system: Any, tools: Sequence[Any] | None, usage: Any
    ) -> CompactionPlan | None:
        if not self._begin_call(messages, system, tools, usage):
            return None
        return self._plan_call()

    def _begin_call(
        self, messages: Sequence[Any], system: Any, tools: Sequence[Any] | None, usage: Any
    ) -> bool:
        """Read the call's messages; whether the context may need compacting (then plan)."""
        if usage is not None:
            self.record_usage(usage)
        self._sync(messages, system)
        self._refresh_fixed(tools)
        budget = self._current_budget()
        self._state = replace(self._state, calls=self._state.calls + 1)
        self._states[-1] = self._state
        self._last_prepare = (len(self._tracked.history), self._state.epoch)
        limit = budget.trigger if budget.enabled else budget.input_budget + 1
        max_messages = self.settings.max_messages
        few = max_messages is None or self._context_length() <= max_messages
        # far enough below every threshold: nothing needs estimating
        return not few or self._sizer.upper(self._state, self._tracked.sums) >= limit

    def _engine_args(self, budget: Budget | None = None) -> dict[str, Any]:
        """What every plan of this conversation is made with (the engine's keyword arguments);
        ``budget`` defaults to the current one."""
        return {
            "budget": budget if budget is not None else self._current_budget(),
            "settings": self.settings,
            "state": self._state,
            "count_tokens": self._count,
            "tools": self._tool_specs,
            "pinned": self._pinned(),
        }

    def _pinned(self) -> set[int]:
        """The pinned history indexes; the provider's own compaction item is one (a later cut
        of abridged's carries it: only the provider can read what it stands for)."""
        boundary = self._tracked.provider_compaction
        if boundary is None:
            return self._pins
        return {i for i in self._pins if i >= boundary} | {boundary}

    def _few_unestimated(self) -> bool:
        """Whether few history messages are only bounded (a size estimates them first)."""
        sums = self._tracked.sums
        return sums.length - sums.estimated <= INLINE_ITEMS

    def _trigger_fires(self) -> bool:
        """Whether ``_plan_call`` would plan: a trigger fires for the context's size."""
        args = self._engine_args()
        trigger = call_trigger(
            self._tracked.history,
            budget=args["budget"],
            settings=args["settings"],
            state=args["state"],
            count_tokens=args["count_tokens"],
            context_tokens=self.context_tokens(),
        )
        return trigger is not None

    def _plan_call(self) -> CompactionPlan | None:
        return plan_compaction(
            self._tracked.history, **self._engine_args(), context_tokens=self.context_tokens()
        )

    # -- the store ------------------------------------------------------------------------------

    def _no_store(self, method: str) -> None:
        if self._persisted is not None:
            # the store's connections belong to the caller's event loop; the sync forms run
            # on another one
            raise SettingError(
                "store", "a Store", f"None for the sync {method}(): with a store, use a{method}()"
            )

    async def _persist_messages(
        self, stored: ConversationInfo | None = None, *, behind: bool = False
    ) -> bool:
        """Store the new messages; adopt the store's state when it differs (the first call of
        a stored conversation, another writer's compaction). Whether a state was adopted."""
        if self._persisted is None:
            return False
        edited, self._edited = self._edited, None
        adopted = await self._persisted.sync(
            self._tracked.history, self._state, edited=edited, known=stored, behind=behind
        )
        if adopted is None:
            return False
        self._set_state(adopted, push=True)
        return True

    def _set_state(self, state: CompactionState, *, push: bool = False) -> None:
        moved = state.epoch != self._state.epoch or state.cut != self._state.cut
        self._state = state
        if push:
            self._states.append(state)
        else:
            self._states[-1] = state
        if moved or push:
            tracked = self._tracked
            self._output.invalidate()
            self._sizer.rebase(state, tracked.history, tracked.sums)

    def _finish(
        self, messages: Sequence[Any] | None, *, changed: bool, sending: bool = True
    ) -> Prepared:
        tracked = self._tracked
        fmt = tracked.format or "openai"
        state = self._state
        if not state.compacted and not state.pruned:
            # The context is the caller's own list: hand it back as is, no copy.
            if messages is not None:
                out = messages if isinstance(messages, list) else list(messages)
            else:
                out = list(tracked.items)
            tracked.last_out = None
        else:
            out = self._output.get(tracked, state)
            tracked.last_out = out
        events = tuple(self._events)
        self._events.clear()
        if self._provider_moved and sending:
            changed, self._provider_moved = True, False
        length = len(tracked.history)
        if changed or tracked.sums.estimated == length:
            size = _Size(self.context_tokens())
        else:
            size = _Size(None, self._size_later(length, state.epoch))
        if sending:
            self._last_prepare = (length, state.epoch)
        return Prepared(
            messages=out,
            system=tracked.system if fmt == "anthropic" else None,
            events=events,
            changed=changed,
            budget=self._current_budget(),
            state=state,
            format=fmt,
            history_length=length,
            _size=size,
        )

    def _size_later(self, length: int, epoch: int) -> Callable[[], int]:
        upper = self._sizer.upper(self._state, self._tracked.sums)

        def compute() -> int:
            tracked = self._tracked
            if self._state.epoch != epoch or len(tracked.history) < length:
                return upper
            return self._sizer.exact(self._state, length, tracked.history, tracked.sums)

        return compute

    # -- hosting a Conversation --------------------------------------------------------------
    # ``abridged.runtime.conversation`` keeps its history in a manager of its own, so that a
    # conversation has one set of token sums, one sizer, one budget and one summarizer factory,
    # the ones every ContextManager has. Its messages come from its store (they are never
    # edited), so they are taken as they are, not tracked as a caller's list. What follows is
    # the whole surface a conversation uses (no private name crosses over):
    #
    # - made by ``for_conversation``, given its compaction task by ``attach`` (``background``);
    # - its history: ``load`` (from the store), ``append``, ``held`` (the live list), ``seqs``,
    #   ``adopt`` (a new state), ``configure`` (new limits or settings);
    # - sizes with its tools: ``tools_raw``, ``budget_for``, ``size_for``, ``count``,
    #   ``last_report``, ``take_report_for`` (a usage report or an exact count);
    # - compaction: ``call_step`` (what to do before a call), ``due`` (at a step boundary),
    #   ``planner_for``, ``afit`` and ``arecover`` (the fit driver, above),
    #   and for its task ``run_plan`` and ``commit`` (the one commit path, above).

    @classmethod
    def for_conversation(
        cls,
        limits: ModelLimits,
        *,
        budget: BudgetSettings,
        settings: CompactionSettings,
        counter: TokenCounter,
        summarizers: SummarizerFactory,
        store: Store,
        conversation_id: str,
        owner: str | None,
    ) -> ContextManager:
        """The manager of a ``Conversation`` (``summarizers``: the conversation's factory),
        committing to its stored conversation."""
        manager = cls(limits, format="abridged", budget=budget, settings=settings, counter=counter)
        manager._summarizer = summarizers
        manager._persisted = StoredConversation(store, conversation_id, owner=owner)
        return manager

    def attach(self, host: Host) -> BackgroundCompaction:
        """Give a conversation's manager its compaction task (``BackgroundCompaction``)."""
        self._background = BackgroundCompaction(self, host)
        return self._background

    @property
    def background(self) -> BackgroundCompaction | None:
        """A conversation's compaction task (``None`` until ``attach``)."""
        return self._background

    @property
    def held(self) -> list[Message]:
        """A conversation's history as held (the live list, appended to in place by
        ``append``: read it, never change it)."""
        return self._tracked.history

    @property
    def seqs(self) -> list[int | None]:
        """The stored sequence number of each ``held`` message (``None``: not stored)."""
        return self._seqs

    @property
    def last_report(self) -> Report | None:
        """The provider's last report taken (any epoch: compare ``epoch`` with the state's)."""
        return self._sizer.report

    def count(self, message: Message) -> int:
        """One message's calibrated estimate (what the engine plans with)."""
        return self._count(message)

    def configure(
        self,
        *,
        limits: ModelLimits | None = None,
        budget: BudgetSettings | None = None,
        settings: CompactionSettings | None = None,
    ) -> None:
        """New limits or settings of a conversation (effective at the next check)."""
        if limits is not None:
            self._window, self._max_output = limits.context_window, limits.max_output
        if budget is not None:
            self._budget_settings = budget
        if settings is not None:
            self.settings = settings
        self._budget = None

    def load(self, loaded: Loaded) -> None:
        """Hold a conversation's history as read from the store, in its state; the last report
        is forgotten, the calibration kept."""
        self._tracked.reset()
        self._tracked.append_messages(loaded.history)
        self._seqs = list(loaded.seqs)
        self._sizer.forget()
        self._state = loaded.state
        self._states = [loaded.state]
        self._sized_for = None
        assert self._persisted is not None
        self._persisted.attach(loaded.context.version, loaded.context.session.id)

    def append(self, message: Message, seq: int | None) -> None:
        """A message the conversation stored (``seq``) or holds unstored (``None``)."""
        self._tracked.append_messages((message,))
        self._seqs.append(seq)

    def adopt(self, state: CompactionState) -> None:
        """A conversation's new state (the next call's count, a commit, a reload)."""
        self._state = state
        self._states[-1] = state

    def tools_raw(self, tools: Sequence[ToolSpec]) -> int:
        """The uncalibrated estimate of a conversation's tool definitions, ``tools`` now."""
        self._tools_arg = tools
        self._refresh_tools()
        return self._sizer.tools_raw

    def budget_for(self, tools: Sequence[ToolSpec]) -> Budget:
        """The budget for ``tools``, with the calibration as it is now: a conversation learns
        its calibration at every call, and its budget follows it."""
        self.tools_raw(tools)
        self._budget = None
        return self._current_budget()

    def size_for(self, tools: Sequence[ToolSpec]) -> int:
        """A conversation's context size (``context_tokens``) with ``tools``."""
        self._rebase_for(tools)
        return self.context_tokens()

    def _rebase_for(self, tools: Sequence[ToolSpec]) -> None:
        """``_rebase_if_moved`` with ``tools``."""
        self.tools_raw(tools)
        self._rebase_if_moved()

    def _rebase_if_moved(self) -> None:
        """Recompute what a conversation sends before the tail when its state changed since
        the last time."""
        state, tracked = self._state, self._tracked
        key = (state.epoch, state.cut, state.summary, state.carried, len(state.pruned))
        if key != self._sized_for:
            self._sizer.rebase(state, tracked.history, tracked.sums)
            self._sized_for = key

    def take_report_for(
        self, tools: Sequence[ToolSpec], usage: Usage, length: int, epoch: int
    ) -> tuple[bool, HiddenPrefix | None]:
        """A conversation's report of the context of ``history[:length]`` sent in ``epoch``,
        learned as every manager learns (``_take_report``)."""
        self._rebase_for(tools)
        return self._take_report(usage, length, epoch)

    def due(self, tools: Sequence[ToolSpec], size: int) -> bool:
        """Whether a trigger fires for a conversation's context of ``size`` tokens (what
        ``plan_compaction`` checks first, O(1)): only then is there anything to plan."""
        state = self._state
        trigger = choose_trigger(
            size,
            context_length(self._tracked.history, state),
            self.budget_for(tools),
            self.settings,
            backoff=state.backoff,
            calls=state.calls,
        )
        return trigger is not None

    def call_step(
        self,
        size: int,
        budget: Budget,
        *,
        stage: Stage = "first",
        background: bool = True,
        count_margin: float | None = None,
    ) -> CallStep:
        """The next step of a conversation's check before a model call, for a context of
        ``size`` tokens under ``budget`` (``abridged.runtime.call_check.call_step``), with its
        compaction task as it is now: the conversation only does what it says."""
        return call_step(
            size,
            budget,
            stage=stage,
            running=self._background is not None and self._background.running,
            background=background,
            count_margin=count_margin,
        )

    def planner_for(
        self, tools: Sequence[ToolSpec], *, size: int | None = None, **options: Any
    ) -> Callable[[], CompactionPlan | None]:
        """A plan of a conversation's context of ``size`` tokens (default: ``size_for``) as it
        is now (``plan_compaction``; ``options`` are its own), to make in a worker thread: its
        arguments are read now, on a snapshot of the history."""
        budget = self.budget_for(tools)
        size = self.size_for(tools) if size is None else size
        return self._planner(budget, context_tokens=size, **options)

    async def run_plan(
        self, plan: CompactionPlan, summarizer: Summarizer, hooks: CompactionHooks
    ) -> CompactionResult:
        """Carry out a conversation's ``plan`` (the extractive fallback off the event loop)."""
        return await run_compaction(
            plan,
            summarizer,
            hooks=self._logged(hooks),
            clock=self._clock,
            count_tokens=self._count,
            fallback=OffLoopSummarizer(ExtractiveSummarizer()),
            gather=asyncio.gather,
        )
