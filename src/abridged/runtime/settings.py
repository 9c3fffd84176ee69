"""The settings of a ``Conversation``: budget, compaction, queue, tools, retries, timeouts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from abridged.core.budget import BudgetSettings
from abridged.engine.triggers import CompactionSettings
from abridged.errors import SettingError

__all__ = ["ConversationSettings"]


def _check_number(name: str, value: object, minimum: float, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise SettingError(name, value, f"{'None or ' if allow_none else ''}a number >= {minimum}")


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
    debounce: float = 0.05
    max_steps: int = 100
    tool_result_max_tokens: int | None = None
    tool_timeout: float | None = None
    exact_count_margin: float = 0.10
    background_compaction: bool = True
    summary_timeout: float | None = 120.0
    max_retries: int = 2
    retry_delay: float = 1.0
    resume_ratio: float = 0.7
    model_options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.budget, BudgetSettings):
            raise SettingError("budget", self.budget, "a BudgetSettings")
        if not isinstance(self.compaction, CompactionSettings):
            raise SettingError("compaction", self.compaction, "a CompactionSettings")
        _check_number("debounce", self.debounce, 0)
        if isinstance(self.max_steps, bool) or not isinstance(self.max_steps, int):
            raise SettingError("max_steps", self.max_steps, "an integer >= 1")
        _check_number("max_steps", self.max_steps, 1)
        if self.tool_result_max_tokens is not None and (
            isinstance(self.tool_result_max_tokens, bool)
            or not isinstance(self.tool_result_max_tokens, int)
            or self.tool_result_max_tokens < 64
        ):
            raise SettingError(
                "tool_result_max_tokens", self.tool_result_max_tokens, "None or an integer >= 64"
            )
        if self.tool_timeout is not None and (
            isinstance(self.tool_timeout, bool)
            or not isinstance(self.tool_timeout, int | float)
            or self.tool_timeout <= 0
        ):
            raise SettingError("tool_timeout", self.tool_timeout, "None or a number > 0")
        _check_number("exact_count_margin", self.exact_count_margin, 0)
        if self.exact_count_margin > 1:
            raise SettingError("exact_count_margin", self.exact_count_margin, "a number in [0, 1]")
        if not isinstance(self.background_compaction, bool):
            raise SettingError("background_compaction", self.background_compaction, "a bool")
        if self.summary_timeout is not None and (
            isinstance(self.summary_timeout, bool)
            or not isinstance(self.summary_timeout, int | float)
            or self.summary_timeout <= 0
        ):
            raise SettingError("summary_timeout", self.summary_timeout, "None or a number > 0")
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int):
            raise SettingError("max_retries", self.max_retries, "an integer >= 0")
        _check_number("max_retries", self.max_retries, 0)
        _check_number("retry_delay", self.retry_delay, 0)
        if (
            isinstance(self.resume_ratio, bool)
            or not isinstance(self.resume_ratio, int | float)
            or not 0 < self.resume_ratio <= 1
        ):
            raise SettingError("resume_ratio", self.resume_ratio, "a number in (0, 1]")
        if not isinstance(self.model_options, Mapping):
            raise SettingError("model_options", self.model_options, "a mapping")
