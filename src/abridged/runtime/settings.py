"""The settings of a ``Conversation`` (budget, compaction, queue, tools, retries, timeouts) and
of a ``ContextManager`` (``Settings``, flat; its window resolved from the model's name)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Annotated, Any

from annotated_types import Ge, Gt

from abridged.core.budget import (
    DEFAULT_TARGET_RATIO,
    DEFAULT_TRIGGER_RATIO,
    BudgetSettings,
    check_target,
    compute_budget,
)
from abridged.core.fields import (
    Flag,
    NonNegative,
    Positive,
    Ratio,
    Share,
    check_fields,
    check_value,
)
from abridged.core.turns import DEFAULT_MIN_SPLIT_TURN_MESSAGES
from abridged.core.windows import ModelLimits
from abridged.engine.compaction_settings import CompactionSettings
from abridged.engine.prune import PruneMode, PruneSettings, ToolPolicy
from abridged.errors import SettingError

__all__ = ["ConversationSettings", "Settings", "check_budget", "resolve_settings", "resolve_window"]


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


# -- the flat settings of a ContextManager ----------------------------------------------------

_BUDGET_NAMES = {
    "enabled": "enabled",
    "overflow_recovery": "overflow_recovery",
    "trigger": "trigger_ratio",
    "target": "target_ratio",
    "keep_recent": "keep_recent_tokens",
    "summary_max": "summary_max_tokens",
    "safety_margin": "safety_margin",
}
# CompactionSettings' own knobs keep their names in the flat form (its ``prune`` is flattened)
_COMPACTION_NAMES = {f.name: f.name for f in fields(CompactionSettings) if f.name != "prune"}
_PRUNE_NAMES = {
    "prune": "tool_policy",
    "prune_mode": "mode",
    "default_policy": "default_policy",
    "protect_recent_tokens": "protect_recent_tokens",
    "protect_recent_steps": "protect_recent_steps",
    "min_savings_tokens": "min_savings_tokens",
    "min_result_tokens": "min_result_tokens",
    "hard_limit_tokens": "hard_limit_tokens",
}


@dataclass(frozen=True, slots=True)
class Settings:
    """The compaction settings of a ``ContextManager``, flat: each knob by its own name, and
    each one left out sized to the model's window (the README's settings table lists them).

    ``ContextManager("openai/gpt-4.1", trigger=0.85, keep_recent=20_000, prune={"read_file":
    "keep"})`` passes them as keywords; ``Settings(...)`` makes them once for many managers.
    Giving one knob never changes another's default: ``prune={"read_file": "keep"}`` keeps the
    window-sized ``protect_recent_tokens``. Every value is checked (``SettingError`` naming the
    setting, the value and its range). The engine's own form is ``BudgetSettings`` +
    ``CompactionSettings`` (+ ``PruneSettings``): ``nested()``.

    >>> Settings(trigger=0.8, target=0.9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    abridged.errors.SettingError: setting target=0.9 is invalid: expected a number in (0, ...)
    """

    # the budget (abridged.core.budget.BudgetSettings)
    enabled: Flag = True
    overflow_recovery: Flag = True
    trigger: Ratio = DEFAULT_TRIGGER_RATIO
    target: Ratio = DEFAULT_TARGET_RATIO
    keep_recent: Positive | None = None
    summary_max: Positive | None = None
    safety_margin: NonNegative | None = None
    # pruning (abridged.engine.prune.PruneSettings)
    prune: Mapping[str, ToolPolicy] = field(default_factory=dict)
    prune_enabled: Flag = True
    prune_mode: PruneMode = "auto"
    default_policy: ToolPolicy = "prune"
    protect_recent_tokens: NonNegative | None = None
    protect_recent_steps: NonNegative = 3
    min_savings_tokens: NonNegative | None = None
    min_result_tokens: NonNegative | None = None
    hard_limit_tokens: Positive | None = None
    # compaction (abridged.engine.compaction_settings.CompactionSettings)
    max_messages: Annotated[int, Ge(4)] | None = None
    pin_first_task: Flag = True
    pin_first_task_max_tokens: NonNegative = 4_096
    min_split_turn_messages: Positive = DEFAULT_MIN_SPLIT_TURN_MESSAGES
    backoff_max_calls: Positive = 64
    emergency_keep_share: Ratio = 0.25
    headroom_steps: NonNegative = 8

    def __post_init__(self) -> None:
        check_fields(self)
        check_target(self.target, self.trigger, names=("target", "trigger"))

    @classmethod
    def of(cls, budget: BudgetSettings, compaction: CompactionSettings) -> Settings:
        """The flat form of the engine's settings."""
        prune = compaction.prune if compaction.prune is not None else PruneSettings()
        values: dict[str, Any] = {flat: getattr(budget, n) for flat, n in _BUDGET_NAMES.items()}
        values |= {flat: getattr(compaction, n) for flat, n in _COMPACTION_NAMES.items()}
        values |= {flat: getattr(prune, n) for flat, n in _PRUNE_NAMES.items()}
        return cls(**values)

    def nested(
        self,
        budget: BudgetSettings | None = None,
        compaction: CompactionSettings | None = None,
        *,
        only: Iterable[str] | None = None,
    ) -> tuple[BudgetSettings, CompactionSettings]:
        """The engine's settings: ``budget`` and ``compaction`` (default: the defaults) with the
        knobs named in ``only`` (default: all of them) set from these."""
        names = set(self.names() if only is None else only)
        budget = budget if budget is not None else BudgetSettings()
        compaction = compaction if compaction is not None else CompactionSettings()
        prune = compaction.prune if compaction.prune is not None else PruneSettings()

        def pick(table: Mapping[str, str]) -> dict[str, Any]:
            return {n: getattr(self, flat) for flat, n in table.items() if flat in names}

        budget = replace(budget, **pick(_BUDGET_NAMES))
        prune = replace(prune, **pick(_PRUNE_NAMES))
        compaction = replace(compaction, prune=prune, **pick(_COMPACTION_NAMES))
        return budget, compaction

    @staticmethod
    def names() -> tuple[str, ...]:
        """Every knob's name."""
        return tuple(f.name for f in fields(Settings))


def resolve_settings(
    settings: Settings | CompactionSettings | None,
    budget: BudgetSettings | None,
    knobs: Mapping[str, Any],
) -> tuple[BudgetSettings, CompactionSettings]:
    """The engine's settings of a ``ContextManager`` given ``settings`` (a flat ``Settings`` or
    the engine's ``CompactionSettings``), ``budget`` and keyword ``knobs``: the knobs given win,
    and nothing not given is changed (each threshold left out stays sized to the window)."""
    check_value("budget", budget, BudgetSettings | None)
    check_value("settings", settings, Settings | CompactionSettings | None)
    unknown = sorted(set(knobs) - set(Settings.names()))
    if unknown:
        near = difflib.get_close_matches(unknown[0], Settings.names(), n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise SettingError(
            unknown[0], knobs[unknown[0]], f"a setting of abridged.runtime.Settings{hint}"
        )
    if isinstance(settings, Settings):
        if budget is not None:
            raise SettingError("budget", budget, "None when settings is a Settings (it holds both)")
        flat = replace(settings, **knobs)
        return flat.nested()
    compaction = settings if settings is not None else CompactionSettings()
    base_budget = budget if budget is not None else BudgetSettings()
    if not knobs:
        return base_budget, compaction  # the engine's own settings, as given
    flat = replace(Settings.of(base_budget, compaction), **knobs)
    return flat.nested(base_budget, compaction, only=knobs)


def resolve_window(
    spec: str | ModelLimits | None,
    *,
    limits: ModelLimits | None,
    model: str | None,
    context_window: int | None,
    max_output_tokens: int | None,
) -> tuple[int, int | None, ModelLimits | None, str | None]:
    """The window, maximum output, limits and model name of a ``ContextManager``.

    ``spec`` (the first positional argument) is a model name or a ``ModelLimits``. The window
    and output given win; then ``limits``; with neither, the bundled registry's entry for the
    model (``abridged.providers.registry``). ``SettingError`` when no window can be found."""
    if isinstance(spec, str):
        if model is not None and model != spec:
            raise SettingError("model", model, f"None or {spec!r} (the model named first)")
        model = spec
    elif spec is not None:
        if limits is not None:
            raise SettingError("limits", limits, "None when a ModelLimits is passed first")
        limits = spec
    check_value("limits", limits, ModelLimits | None)
    check_value("model", model, str | None)
    if limits is None and context_window is None and model is not None:
        from abridged.providers.registry import lookup_model  # noqa: PLC0415  (package data)

        limits = lookup_model(model)
        if limits is None:
            raise SettingError(
                "context_window",
                None,
                f"an integer >= 1024: model {model!r} is not in the bundled registry "
                "(pass context_window= or limits=ModelLimits(...))",
            )
    window = context_window if context_window is not None else None
    if window is None and limits is not None:
        window = limits.context_window
    if window is None:
        raise SettingError(
            "context_window", None, "an integer >= 1024 (or name a model, or pass limits=)"
        )
    output = max_output_tokens
    if output is None and limits is not None:
        output = limits.max_output
    return window, output, limits, model


def check_budget(
    window: int, output: int | None, budget: BudgetSettings, knobs: Mapping[str, Any]
) -> None:
    """Check the window-dependent ranges now (``compute_budget``), naming a knob as it was
    given (``keep_recent``, not the engine's ``keep_recent_tokens``)."""
    try:
        compute_budget(window, output, budget)
    except SettingError as exc:
        flat = {n: f for f, n in _BUDGET_NAMES.items()}.get(exc.name)
        if flat is None or flat not in knobs:
            raise
        raise SettingError(flat, exc.value, exc.valid) from None
