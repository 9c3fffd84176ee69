"""Overflow recovery: emergency compaction, then exactly one retry; ordinary retries apart.

The provider adapters turn a provider's "too long" error into ``ContextOverflowError`` (see
``abridged.providers.overflow``). ``call_with_recovery`` runs one model call::

    attempt()                         -> the reply, or ContextOverflowError
      on overflow: recover(error)     -> the engine's emergency path, committed
      attempt() once more             -> the reply, or a typed ContextOverflowError with the sizes

- Exactly **one** retry after an overflow, and it is not counted among the ordinary retries of
  retryable provider errors (``with_retries``, which wraps each attempt on its own).
- Recovery has its own switch (``BudgetSettings.overflow_recovery``): it stays on when automatic
  compaction is switched off. Switched off, the provider's error surfaces as it came.
- **Silent truncation** (``check_truncation``): a provider that read far less than was sent cut
  the prompt without saying so (Ollama, LM Studio); that reply is dropped and handled as an
  overflow (``SilentTruncationError``), the retry aimed at what the provider really read.
- A second overflow raises ``ContextOverflowError`` naming both sizes (``tokens``, ``limit``,
  ``first_tokens``, ``retry_tokens``, ``input_budget``). Recovery never touches stored
  messages: the emergency path commits a compaction (a new session over the same messages).
- **Ordinary retries happen here and nowhere else**: ``with_retries`` retries a retryable
  ``ProviderError`` (429, 408, 409, 5xx, a timeout, a refused connection) ``max_retries`` times
  with exponential backoff, and says so (``Retrying``); ``RetryingModel`` does the same for the
  summarizer's calls. The adapters leave the SDKs' own retries off (``max_retries=0``), so a
  persistent 429 reaches the provider ``max_retries + 1`` times, not ``(max_retries + 1)`` times
  the SDK's attempts. The runtime's layer is the one kept because it works for every
  ``ChatModel`` (the SDKs', LiteLLM's, a caller's own) and reports each retry as an event.
- ``exact_tokens``: when a model can count a request exactly (Anthropic's count endpoint,
  ``count_tokens``), the runtime asks before sending a context whose estimate is close to the
  limit.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

from abridged.core.budget import format_token_size
from abridged.core.model import Message, Usage
from abridged.core.protocols import ChatModel, Completion, StreamEvent, ToolSpec
from abridged.errors import ContextOverflowError, ProviderError, SilentTruncationError
from abridged.events.runtime import Retrying
from abridged.providers.overflow import detect_silent_truncation

__all__ = [
    "RetryingModel",
    "SilentTruncationError",
    "call_with_recovery",
    "check_truncation",
    "exact_tokens",
    "overflow_after_retry",
    "with_retries",
]

T = TypeVar("T")


def check_truncation(usage: Usage | None, sent_estimate: int, window: int) -> str | None:
    """Raise ``SilentTruncationError`` when ``usage`` says the provider read far less than the
    ``sent_estimate``; return a warning when it read more than ``window`` (the window assumed is
    wrong); ``None`` when nothing looks wrong."""
    if usage is None:
        return None
    found = detect_silent_truncation(usage.context_tokens, sent_estimate, window)
    if found is None:
        return None
    if found.reason == "far_below_sent":
        raise SilentTruncationError(
            f"the provider read {format_token_size(found.reported)} tokens of a context of about "
            f"{format_token_size(sent_estimate)}: it cut the prompt without saying so",
            tokens=sent_estimate,
            reported=found.reported,
            limit=window,
        )
    return (
        f"The provider reported {format_token_size(found.reported)} input tokens, more than the "
        f"{format_token_size(window)} window assumed: set the model's context window."
    )


def overflow_after_retry(
    first: ContextOverflowError,
    second: ContextOverflowError,
    *,
    retry_estimate: int,
    input_budget: int,
    conversation_id: str | None = None,
) -> ContextOverflowError:
    """The typed error of a second overflow, with the sizes involved."""
    limit = second.limit if second.limit is not None else input_budget
    tokens = second.tokens if second.tokens is not None else retry_estimate
    what = (
        "cut the prompt again" if isinstance(second, SilentTruncationError) else "rejected it again"
    )
    return ContextOverflowError(
        f"the context is still too long after emergency compaction: the provider {what} "
        f"({format_token_size(tokens)} > {format_token_size(limit)}; the first attempt was "
        f"{format_token_size(first.tokens or 0)}, the retry about "
        f"{format_token_size(retry_estimate)} for an input budget of "
        f"{format_token_size(input_budget)}); nothing stored was changed",
        tokens=tokens,
        limit=limit,
        conversation_id=conversation_id,
        first_tokens=first.tokens,
        first_limit=first.limit,
        retry_tokens=retry_estimate,
        input_budget=input_budget,
        provider=first.context.get("provider"),
    )


async def call_with_recovery(
    attempt: Callable[[], Awaitable[T]],
    recover: Callable[[ContextOverflowError], Awaitable[int]],
    *,
    enabled: bool,
    input_budget: int | Callable[[], int],
    on_retry: Callable[[Retrying], None] | None = None,
    conversation_id: str | None = None,
) -> T:
    """Run ``attempt``; on ``ContextOverflowError`` (when ``enabled``), ``recover`` (the
    emergency path; it returns the estimated size of the context the retry will send) and retry
    exactly once. A second overflow raises ``overflow_after_retry``'s error, naming
    ``input_budget`` (or what it returns after the recovery: the budget may have changed, when
    the provider named a smaller window). ``recover`` may raise ``ContextOverflowError`` itself
    (even the minimal context does not fit): that surfaces as it is."""
    try:
        return await attempt()
    except ContextOverflowError as first:
        if not enabled:
            raise
        retry_estimate = await recover(first)
        if on_retry is not None:
            reason: Literal["truncation", "overflow"] = (
                "truncation" if isinstance(first, SilentTruncationError) else "overflow"
            )
            on_retry(
                Retrying(
                    reason,
                    f"{first.message}; retrying once with a context of about "
                    f"{format_token_size(retry_estimate)}",
                )
            )
        try:
            return await attempt()
        except ContextOverflowError as second:
            raise overflow_after_retry(
                first,
                second,
                retry_estimate=retry_estimate,
                input_budget=input_budget() if callable(input_budget) else input_budget,
                conversation_id=conversation_id,
            ) from None


#: The longest wait a provider's ``Retry-After`` gets (seconds); beyond it, the ordinary backoff
#: (as the OpenAI and Anthropic SDKs do).
MAX_RETRY_AFTER = 60.0


def retry_wait(error: ProviderError, number: int, delay: float) -> float:
    """The wait before retry ``number + 1`` of ``error``: what the provider asked for
    (``retry_after``, up to ``MAX_RETRY_AFTER``), else ``delay * 2**number``.

    >>> retry_wait(ProviderError("429", retry_after=7.0), 0, 1.0)
    7.0
    >>> retry_wait(ProviderError("429", retry_after=None), 2, 1.0)
    4.0
    """
    asked = error.context.get("retry_after")
    if isinstance(asked, int | float) and 0 <= asked <= MAX_RETRY_AFTER:
        return float(asked)
    return float(delay * (2**number))


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    retries: int,
    delay: float,
    on_retry: Callable[[Retrying], None] | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> T:
    """Run ``attempt``, retrying a retryable ``ProviderError`` (rate limit, 5xx, timeout) up to
    ``retries`` times, waiting what the provider's ``Retry-After`` asked for, else with
    exponential backoff from ``delay`` seconds (``retry_wait``). Overflows are not retried here
    (``call_with_recovery`` does that, once). ``sleep``: how to wait."""
    for number in range(retries + 1):
        try:
            return await attempt()
        except ProviderError as error:
            if number >= retries or not error.context.get("retryable"):
                raise
            if on_retry is not None:
                on_retry(Retrying("error", f"{error.message} (retry {number + 1} of {retries})"))
            await sleep(retry_wait(error, number, delay))
    raise AssertionError("unreachable")  # pragma: no cover


class RetryingModel:
    """``model`` whose ``complete`` is retried like a turn's call (``with_retries``): what the
    summarizer calls, so that its retries are the runtime's too. ``stream`` is passed through
    (a stream's deltas cannot be taken back); every other attribute is ``model``'s."""

    def __init__(self, model: ChatModel, *, retries: int, delay: float) -> None:
        self.model = model
        self.retries = retries
        self.delay = delay

    @property
    def name(self) -> str:
        return self.model.name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.model, attribute)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        return await with_retries(
            lambda: self.model.complete(
                messages, tools=tools, max_output_tokens=max_output_tokens, **options
            ),
            retries=self.retries,
            delay=self.delay,
        )

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        return self.model.stream(
            messages, tools=tools, max_output_tokens=max_output_tokens, **options
        )


async def exact_tokens(
    model: ChatModel, messages: Sequence[Message], tools: Sequence[ToolSpec]
) -> int | None:
    """The exact input size of a request, when the model can count it (``count_tokens``);
    ``None`` when it cannot or the count failed (the estimate is used then)."""
    count: Any = getattr(model, "count_tokens", None)
    if not callable(count):
        return None
    try:
        value = count(list(messages), list(tools) or None)
        if inspect.isawaitable(value):
            value = await value
    except (ProviderError, ContextOverflowError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
