"""The settings of a ``Conversation``: budget, compaction, queue, tools, retries, timeouts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from annotated_types import Ge, Gt

from abridged.core.budget import BudgetSettings
from abridged.core.fields import Flag, NonNegative, Positive, Ratio, Share, check_fields
from abridged.engine.triggers import CompactionSettings

__all__ = ["ConversationSettings"]


@dataclass(frozen=True, slots=True)
class ConversationSettings:
    """How a conversation runs; every field is validated.

    - ``budget`` (``BudgetSettings``): window shares, ``enabled`` (automatic compaction) and
      ``overflow_recovery`` (the emergency path on a provider's "too long", on separately).
    - ``compaction`` (``CompactionSettings``): pruning, pins, backoff.
    - ``debounce`` (default 0.05 s, >= 0): user messages arriving within this of each other are
      answered in one turn.
    - ``max_steps`` (default 100, >= 1): model calls in one turn before the loop stops.
    - ``tool_result_max_tokens`` (default ``None`` = a quarter of the input budget; >= 64): a
      bigger tool result is stored whole and sent clipped.
    - ``tool_timeout`` (default ``None``; seconds > 0): bounds each tool call.
    - ``exact_count_margin`` (default 0.10, in [0, 1]): when the estimate is within this share of
      the input budget and the model can count exactly, count before sending.
    - ``background_compaction`` (default ``True``): compact off the reply path when the context
      still fits; ``False`` compacts before the next call.
    - ``summary_timeout`` (default 120 s; ``None`` for none): a summarizer slower than this is
      cancelled and the extractive summary used.
    - ``max_retries`` (default 2) and ``retry_delay`` (default 1 s): ordinary retries of a
      retryable provider error (rate limit, 5xx), with exponential backoff; the one retry after
      an overflow is not one of them.
    - ``resume_ratio`` (default 0.7, in (0, 1]): ``/resume`` makes a session current again when
      its context fits this share of the input budget (else it starts from its summary).
    - ``model_options``: options passed to every model call (``temperature``...).
    """

    budget: BudgetSettings = field(default_factory=BudgetSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    debounce: Annotated[float, Ge(0)] = 0.05
    max_steps: Positive = 100
    tool_result_max_tokens: Annotated[int, Ge(64)] | None = None
    tool_timeout: Annotated[float, Gt(0)] | None = None
    exact_count_margin: Share = 0.10
    background_compaction: Flag = True
    summary_timeout: Annotated[float, Gt(0)] | None = 120.0
    max_retries: NonNegative = 2
    retry_delay: Annotated[float, Ge(0)] = 1.0
    resume_ratio: Ratio = 0.7
    model_options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_fields(self)
