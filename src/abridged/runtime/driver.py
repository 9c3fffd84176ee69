"""What both runtimes (ContextManager and Conversation) drive the engine with: the calibrated
budget, the summarizer, and the loop that makes a context fit.

- ``calibrated_budget``: the budget for a window once the system prompt and the tool
  definitions are counted (calibrated estimates).
- ``SummarizerFactory``: the summarizer a compaction uses under a budget (the caller's, an
  ``LLMSummarizer`` sized to the budget with the extractive fallback, or the extractive one),
  and ``off_loop`` / ``OffLoopSummarizer``: the extractive summary in a worker thread.
- ``fit_context``: carry a plan out, then the emergency path while the context does not fit the
  input budget; never more than ``MAX_FIT_COMPACTIONS`` compactions for one call (``Fitted``:
  what it did). The one fit loop of both runtimes: ``ContextManager._drive`` calls it, for a
  caller's list and for a ``Conversation`` alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from abridged.core.budget import MIN_CONTEXT_WINDOW, Budget, BudgetSettings, compute_budget
from abridged.core.model import Message
from abridged.core.protocols import ChatModel, Summarizer, Summary, SummaryRequest
from abridged.core.tokens import TokenCounter
from abridged.engine.compaction import CompactionResult
from abridged.engine.plan import CompactionPlan
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.engine.summarize.llm import LLMSummarizer
from abridged.errors import ContextOverflowError, SettingError
from abridged.runtime.recovery import RetryingModel

__all__ = [
    "MAX_FIT_COMPACTIONS",
    "Fitted",
    "OffLoopSummarizer",
    "Runner",
    "SummarizerFactory",
    "calibrated_budget",
    "fit_context",
    "off_loop",
    "off_loop_fallback",
]

#: At most this many compactions to make one call fit: the planned one, then emergency stages.
MAX_FIT_COMPACTIONS = 4


def calibrated_budget(
    context_window: int,
    max_output_tokens: int | None,
    settings: BudgetSettings,
    *,
    counter: TokenCounter,
    system: Iterable[Message],
    tools_raw: int,
    hidden: int = 0,
) -> Budget:
    """The budget of a window once the ``system`` messages and the tool definitions
    (``tools_raw``: their uncalibrated estimate) are counted with ``counter``'s calibration;
    ``hidden``: a prefix the provider counts that the messages do not hold (counted with the
    tool definitions, the fixed part every plan adds to the messages' size; see
    ``abridged.runtime.sizing``)."""
    cal = counter.calibration
    return compute_budget(
        context_window,
        max_output_tokens,
        settings,
        system_tokens=cal.apply(sum(counter.message_tokens(m) for m in system)),
        tools_tokens=cal.apply(tools_raw) + hidden,
    )


class OffLoopSummarizer:
    """An ``ExtractiveSummarizer`` run in a worker thread: its ``build`` is CPU work only (no
    I/O), and on a long history it takes long enough to hold an event loop. Same name, same
    summaries."""

    def __init__(self, inner: ExtractiveSummarizer) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    async def summarize(self, request: SummaryRequest) -> Summary:
        return await asyncio.to_thread(self.inner.build, request)


def off_loop(summarizer: Summarizer) -> Summarizer:
    """``summarizer``, made to run in a worker thread when it is an ``ExtractiveSummarizer``
    whose ``summarize`` is its own (CPU work only); any other as it is."""
    if (
        isinstance(summarizer, ExtractiveSummarizer)
        and type(summarizer).summarize is ExtractiveSummarizer.summarize
    ):
        return OffLoopSummarizer(summarizer)
    return summarizer


def off_loop_fallback(summarizer: Summarizer) -> Summarizer | None:
    """The ``fallback`` to pass to ``run_compaction`` with ``off_loop(summarizer)``: what its
    default gives (an extractive summary, none behind an extractive summarizer), in a worker
    thread."""
    if isinstance(summarizer, ExtractiveSummarizer | OffLoopSummarizer):
        return None
    return OffLoopSummarizer(ExtractiveSummarizer())


def summary_output_tokens(budget: Budget) -> int:
    """The most a model summary may hold: the summary ceiling, within the model's output."""
    return max(64, min(budget.summary_max, budget.max_output_tokens))


def summary_input_tokens(budget: Budget) -> int:
    """The most a summary request may send: the window less the summary's own output and the
    safety margin. A summary's output is smaller than a reply's, so a cache-reusing request (the
    context, plus the step that filled it, plus the instruction) fits where a call would not.

    >>> from abridged.core.budget import compute_budget
    >>> b = compute_budget(16_384, 4_096)
    >>> b.input_budget, summary_input_tokens(b)
    (11264, 13108)
    """
    room = budget.context_window - budget.safety_margin - summary_output_tokens(budget)
    return max(budget.input_budget, room)


#: The share of a summarizer model's own window kept free for the estimator's error: requests
#: are sized with abridged's estimate, which can count less than the model's own tokenizer.
SUMMARY_ESTIMATE_MARGIN = 0.25


def summarizer_limits(budget: Budget, window: int) -> tuple[int, int]:
    """The output ceiling and the input budget of a summarizer model whose own context window is
    ``window``: at most a quarter of that window for the summary, and of the rest
    ``1 - SUMMARY_ESTIMATE_MARGIN`` for what is sent, never more than the conversation's own
    sizing allows.

    >>> from abridged.core.budget import compute_budget
    >>> summarizer_limits(compute_budget(128_000, 16_384), 8_192)
    (2048, 4608)
    """
    output = min(summary_output_tokens(budget), max(64, window // 4))
    room = int((window - output) * (1 - SUMMARY_ESTIMATE_MARGIN))
    return output, min(summary_input_tokens(budget), room)


class SummarizerFactory:
    """The summarizer compactions use under a budget, made once per budget.

    ``given``: a ``Summarizer`` (used as it is), a ``ChatModel`` (an ``LLMSummarizer`` of that
    model), ``"extractive"``, or ``None``: the ``LLMSummarizer`` of ``own_model`` (the
    conversation's own model) when there is one, else the extractive summarizer. An
    ``LLMSummarizer`` is sized to the budget (its output to the summary ceiling, its input to the
    input budget) and falls back to the extractive summary in a worker thread; a window too small
    for the model's prompts gets the extractive summarizer.

    The summary request reuses the conversation's prompt cache (``cache_reuse``: its own prefix
    plus an instruction) whenever the summarizing model *is* the conversation's model: ``own_model``
    itself, or a ``given`` model named ``own_name`` (the ``ContextManager``'s ``model=``). A
    different, cheaper model gets a transcript instead: it could not read the other model's cache.
    ``counter``: the conversation's token counter, which the ``LLMSummarizer`` sizes its requests
    with (its per-message cache). ``window``: the summarizing model's own context window when it
    is not the conversation's (a smaller model): its requests are sized to it
    (``summarizer_limits``). ``options``: passed to every summary call (``temperature``, ...).
    ``retries`` and ``retry_delay``: the runtime's ordinary retries of each summary call
    (``RetryingModel``; the SDKs' own are off), as a turn's call gets them.
    """

    def __init__(
        self,
        given: Summarizer | ChatModel | str | None = None,
        *,
        own_model: ChatModel | None = None,
        own_name: str | None = None,
        counter: TokenCounter | None = None,
        window: int | None = None,
        options: Mapping[str, Any] | None = None,
        retries: int = 2,
        retry_delay: float = 1.0,
    ) -> None:
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int) or window < MIN_CONTEXT_WINDOW
        ):
            raise SettingError(
                "summary_window", window, f"None or an integer >= {MIN_CONTEXT_WINDOW}"
            )
        self.window = window
        self.options: Mapping[str, Any] = dict(options or {})
        if isinstance(given, str) and given != "extractive":
            raise SettingError(
                "summarizer", given, 'a Summarizer, a ChatModel, "extractive" or None'
            )
        self.given = given
        self.own_model = own_model
        self.counter = counter
        self.retries = retries
        self.retry_delay = retry_delay
        names = {own_name, own_model.name if own_model is not None else None} - {None}
        self.cache_reuse = given is None or (
            isinstance(given, ChatModel) and (given is own_model or given.name in names)
        )
        self._made: dict[tuple[int, int, int], Summarizer] = {}

    def set_retries(self, retries: int, delay: float) -> None:
        """Retry later summary calls ``retries`` times from ``delay`` seconds (a conversation's
        settings changed)."""
        if (retries, delay) != (self.retries, self.retry_delay):
            self.retries, self.retry_delay = retries, delay
            self._made.clear()

    def __call__(self, budget: Budget) -> Summarizer:
        given = self.given
        if isinstance(given, Summarizer):
            return given
        model = given if isinstance(given, ChatModel) else self.own_model
        if given == "extractive" or model is None:
            key = (0, 0, 0)
        else:
            key = (budget.input_budget, budget.summary_max, budget.max_output_tokens)
        made = self._made.get(key)
        if made is None:
            made = ExtractiveSummarizer()
            if key != (0, 0, 0) and model is not None:
                output, room = summary_output_tokens(budget), summary_input_tokens(budget)
                if self.window is not None:
                    output, room = summarizer_limits(budget, self.window)
                extractive = OffLoopSummarizer(ExtractiveSummarizer())
                try:
                    made = LLMSummarizer(
                        RetryingModel(model, retries=self.retries, delay=self.retry_delay),
                        max_output_tokens=output,
                        input_budget_tokens=room,
                        # a smaller model's window is not the conversation's: its own prompt
                        cache_reuse=self.cache_reuse and self.window is None,
                        counter=self.counter,
                        fallback=extractive,
                        safety_net=extractive,
                        options=self.options,
                    )
                except SettingError:  # a window too small for the model's prompts
                    made = ExtractiveSummarizer()
            self._made[key] = made
        return made


#: Carries one plan out and commits it: the result, or ``None`` when it could not run.
Runner = Callable[[CompactionPlan], Awaitable[CompactionResult | None]]


@dataclass(frozen=True, slots=True)
class Fitted:
    """What making a context fit did: every compaction carried out, in order (``None``: one
    that could not run or was dropped)."""

    results: tuple[CompactionResult | None, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the context changed (the provider's cache starts over)."""
        return any(r is not None and r.changed for r in self.results)

    @property
    def first(self) -> CompactionResult | None:
        """The first compaction's result (``None`` when none ran or it could not)."""
        return self.results[0] if self.results else None


async def fit_context(
    plan: CompactionPlan | None,
    *,
    run: Runner,
    size: Callable[[], Awaitable[int]],
    emergency: Callable[[Budget, int], Awaitable[CompactionPlan]],
    budget: Budget,
    conversation_id: str | None = None,
    strict: bool = False,
) -> Fitted:
    """Carry ``plan`` out (``run``: compact and commit; ``None`` when it could not), then the
    emergency path (``emergency(budget, size)``, given the size that found the context too big)
    while the context (``await size()``) does not fit the input budget. A missing plan, or one
    with nothing to do, goes to the emergency path only when the context does not fit: a plan
    with nothing to do for a context that fits (a trigger below the input budget) is carried
    out as it is, which records it for the backoff. With compaction and overflow recovery both
    switched off, one plan is run and nothing more.

    ``strict``: ``plan`` is the compaction a provider's rejection asked for; when it does not
    compact, the loop stops there (the caller says why: the rejected context must not be sent
    again), whatever the estimate says.

    ``ContextOverflowError`` (with both sizes) when no summary could be made while the context
    does not fit, or when it still does not fit after ``MAX_FIT_COMPACTIONS`` compactions.
    """
    results: list[CompactionResult | None] = []
    now: int | None = None
    recover = budget.overflow_recovery or budget.enabled
    for _ in range(MAX_FIT_COMPACTIONS):
        if plan is None or plan.action == "nothing":
            now = await size() if now is None else now
            if now <= budget.input_budget or not recover:
                if plan is not None:
                    results.append(await run(plan))
                return Fitted(tuple(results))
            plan = await emergency(budget, now)
        result = await run(plan)
        results.append(result)
        if strict and len(results) == 1 and (result is None or result.status != "compacted"):
            return Fitted(tuple(results))
        now = await size()
        if now <= budget.input_budget or not recover:
            return Fitted(tuple(results))
        if result is None or result.status in ("failed", "cancelled"):
            raise ContextOverflowError(
                "the context does not fit the input budget and no summary could be made",
                tokens=now,
                limit=budget.input_budget,
                conversation_id=conversation_id,
                reason=result.error if result is not None else None,
            )
        plan = None
    raise ContextOverflowError(
        "the context still does not fit the input budget after the emergency path",
        tokens=now,
        limit=budget.input_budget,
        conversation_id=conversation_id,
    )
