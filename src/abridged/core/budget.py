"""The token budget of a context: window, output reserve, input budget, trigger and target.

```
window         the model's context window                       (>= MIN_CONTEXT_WINDOW)
output_reserve min(max_output_tokens, window // 2)
input_budget   window - output_reserve - safety_margin          (>= MIN_INPUT_BUDGET)
trigger        trigger_ratio * input_budget                     (default 0.85)
target         target_ratio  * input_budget                     (default 0.45, < trigger)
keep_recent    min(0.15 * input_budget, 20,000)                 (default; never above target)
summary_max    min(0.20 * input_budget, 4,000)                  (default; never above target)
```

The defaults were chosen by ``bench/policies.py`` (the billed input of 101 real agent sessions
at 16k and 32k against the peers' policies, none over the limit): every compaction resets the
provider's prompt cache for what follows the pinned task, so a wide gap between trigger and
target (fewer compactions, each buying more room) and a short verbatim tail (less to re-read
uncached) cost least; ``bench/retention.py`` checks that the facts still survive.

The budget covers the whole input of a call: the system prompt and the tool definitions count
against it (``available_for_messages`` is what is left for the messages, summary included), and
``trigger`` and ``target`` compare with the whole context size, as the provider reports it.

Sizes written with ``k`` mean multiples of 1,024 everywhere (``16k`` = 16,384):
``parse_token_size`` reads them and ``format_token_size`` writes them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, TypeAlias, TypeGuard

from annotated_types import Ge

from abridged.core.fields import (
    Flag,
    NonNegative,
    Positive,
    Ratio,
    ValueCheck,
    check_fields,
)
from abridged.errors import ContextOverflowError, SettingError

MIN_CONTEXT_WINDOW = 1_024
"""The smallest context window accepted."""

Window: TypeAlias = Annotated[int, Ge(MIN_CONTEXT_WINDOW)]
"""A context window: an integer >= ``MIN_CONTEXT_WINDOW``."""

MIN_INPUT_BUDGET = 256
"""The smallest input budget accepted (window minus output reserve and safety margin)."""

DEFAULT_MAX_OUTPUT_TOKENS = 8_192
"""Output reserved when neither the settings nor the model say how long a reply may be."""

DEFAULT_TRIGGER_RATIO = 0.85
DEFAULT_TARGET_RATIO = 0.45
KEEP_RECENT_SHARE = 0.15
KEEP_RECENT_CAP = 20_000
SUMMARY_SHARE = 0.20
SUMMARY_CAP = 4_000
SAFETY_SHARE = 0.02
SAFETY_FLOOR = 1_024

_KIB = 1_024
_MIB = 1_024 * 1_024


def default_safety_margin(context_window: int) -> int:
    """The default safety margin: 2% of the window, at least 1,024 tokens (window/16 if smaller).

    It absorbs the estimator's error between two provider reports. The floor keeps a margin
    worth having on mid-size windows; on windows under 16k it shrinks to a sixteenth of the
    window so that small local models keep a usable input budget.

    >>> default_safety_margin(200_000), default_safety_margin(32_768), default_safety_margin(4_096)
    (4000, 1024, 256)
    """
    return max(math.ceil(SAFETY_SHARE * context_window), min(SAFETY_FLOOR, context_window // 16))


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


TARGET_NAMES = ("target_ratio", "trigger_ratio")
_check_window = ValueCheck(Window)
_check_output = ValueCheck(Positive | None)
_check_count = ValueCheck(NonNegative)


@dataclass(frozen=True, slots=True)
class BudgetSettings:
    """The budget knobs of a conversation, each validated when the settings are made.

    - ``enabled`` (default ``True``): automatic compaction. Off, nothing is pruned or summarized
      unless asked for.
    - ``overflow_recovery`` (default ``True``): the emergency path on a provider's "too long"
      error; switched off separately from ``enabled``.
    - ``trigger_ratio`` (default 0.85, in (0, 1]): compact when the context reaches this share of
      the input budget.
    - ``target_ratio`` (default 0.45, in (0, 1] and < ``trigger_ratio``): compact down to this
      share.
    - ``safety_margin`` (default ``None`` = ``default_safety_margin(window)``: 2% of the window,
      at least 1,024 tokens or window/16; an integer >= 0 otherwise, leaving an input budget of
      at least ``MIN_INPUT_BUDGET``): tokens held back for estimation error.
    - ``keep_recent_tokens`` (default ``None`` = min(15% of the input budget, 20,000), capped at
      the target; an integer in [1, target] otherwise): tokens kept verbatim after a cut.
    - ``summary_max_tokens`` (default ``None`` = min(20% of the input budget, 4,000), capped at
      the target; an integer in [1, target] otherwise): ceiling on a summary.
    - ``max_output_tokens`` (default ``None`` = the model's maximum output, else 8,192; an
      integer >= 1 otherwise): the reply length requested, reserved out of the window (at most
      half of it). When both this and the model's maximum are known, the smaller one counts.

    The window-dependent ranges (safety margin, keep, summary) are checked by ``compute_budget``.
    """

    enabled: Flag = True
    overflow_recovery: Flag = True
    trigger_ratio: Ratio = DEFAULT_TRIGGER_RATIO
    target_ratio: Ratio = DEFAULT_TARGET_RATIO
    safety_margin: NonNegative | None = None
    keep_recent_tokens: Positive | None = None
    summary_max_tokens: Positive | None = None
    max_output_tokens: Positive | None = None

    def __post_init__(self) -> None:
        check_fields(self)
        check_target(self.target_ratio, self.trigger_ratio)


def check_target(target: float, trigger: float, *, names: tuple[str, str] = TARGET_NAMES) -> None:
    """The target must be below the trigger (a compaction must end below where it started)."""
    if target >= trigger:
        raise SettingError(names[0], target, f"a number in (0, {names[1]}={trigger})")


@dataclass(frozen=True, slots=True)
class Budget:
    """A computed budget, in tokens (see the module docstring for the arithmetic).

    ``fixed_tokens`` is what the system prompt and the tool definitions take out of the input
    budget; ``available_for_messages`` is what is left for the messages (summary included).
    ``trigger`` and ``target`` are compared with the whole context (fixed part included).
    """

    context_window: int
    max_output_tokens: int
    output_reserve: int
    safety_margin: int
    input_budget: int
    trigger: int
    target: int
    keep_recent: int
    summary_max: int
    system_tokens: int
    tools_tokens: int
    enabled: bool
    overflow_recovery: bool

    @property
    def fixed_tokens(self) -> int:
        """Tokens of the system prompt and tool definitions."""
        return self.system_tokens + self.tools_tokens

    @property
    def available_for_messages(self) -> int:
        """Input budget left for the messages once the system prompt and tools are counted."""
        return self.input_budget - self.fixed_tokens

    def should_compact(self, context_tokens: int) -> bool:
        """Whether automatic compaction should run for a context of ``context_tokens``."""
        return self.enabled and context_tokens >= self.trigger

    def exceeds_input_budget(self, context_tokens: int) -> bool:
        """Whether a context of ``context_tokens`` is too large to send."""
        return context_tokens > self.input_budget


def compute_budget(
    context_window: int,
    max_output_tokens: int | None,
    settings: BudgetSettings | None = None,
    *,
    system_tokens: int = 0,
    tools_tokens: int = 0,
) -> Budget:
    """The budget of a model with ``context_window`` and ``max_output_tokens`` under ``settings``.

    Raises ``SettingError`` for a window under ``MIN_CONTEXT_WINDOW``, a maximum output < 1,
    negative ``system_tokens``/``tools_tokens``, a safety margin leaving less than
    ``MIN_INPUT_BUDGET``, or a keep/summary above the target; ``ContextOverflowError`` when the
    system prompt and tool definitions alone do not fit in the input budget.

    >>> b = compute_budget(128_000, 16_384)
    >>> b.output_reserve, b.safety_margin, b.input_budget, b.trigger, b.target
    (16384, 2560, 109056, 92697, 49075)
    >>> b.keep_recent, b.summary_max
    (16358, 4000)
    """
    settings = settings if settings is not None else BudgetSettings()
    _check_window("context_window", context_window)
    _check_output("max_output_tokens", max_output_tokens)
    _check_count("system_tokens", system_tokens)
    _check_count("tools_tokens", tools_tokens)

    known = [v for v in (settings.max_output_tokens, max_output_tokens) if v is not None]
    max_output = min(known) if known else DEFAULT_MAX_OUTPUT_TOKENS
    output_reserve = min(max_output, context_window // 2)

    room = context_window - output_reserve
    if settings.safety_margin is None:
        safety_margin = min(default_safety_margin(context_window), room - MIN_INPUT_BUDGET)
    else:
        safety_margin = settings.safety_margin
        if safety_margin > room - MIN_INPUT_BUDGET:
            raise SettingError(
                "safety_margin",
                safety_margin,
                f"an integer in [0, {room - MIN_INPUT_BUDGET}] for a window of {context_window} "
                f"with an output reserve of {output_reserve}",
            )
    input_budget = room - safety_margin

    trigger = max(2, math.floor(settings.trigger_ratio * input_budget))
    target = max(1, min(math.floor(settings.target_ratio * input_budget), trigger - 1))

    keep_recent = _resolve_share(
        "keep_recent_tokens",
        settings.keep_recent_tokens,
        min(math.floor(KEEP_RECENT_SHARE * input_budget), KEEP_RECENT_CAP),
        target,
    )
    summary_max = _resolve_share(
        "summary_max_tokens",
        settings.summary_max_tokens,
        min(math.floor(SUMMARY_SHARE * input_budget), SUMMARY_CAP),
        target,
    )
    fixed = system_tokens + tools_tokens
    if fixed >= input_budget:
        raise ContextOverflowError(
            "the system prompt and tool definitions alone fill the input budget",
            tokens=fixed,
            limit=input_budget,
            system_tokens=system_tokens,
            tools_tokens=tools_tokens,
        )
    return Budget(
        context_window=context_window,
        max_output_tokens=max_output,
        output_reserve=output_reserve,
        safety_margin=safety_margin,
        input_budget=input_budget,
        trigger=trigger,
        target=target,
        keep_recent=keep_recent,
        summary_max=summary_max,
        system_tokens=system_tokens,
        tools_tokens=tools_tokens,
        enabled=settings.enabled,
        overflow_recovery=settings.overflow_recovery,
    )


def _resolve_share(name: str, explicit: int | None, default: int, target: int) -> int:
    if explicit is None:
        return max(1, min(default, target))
    if explicit > target:
        raise SettingError(name, explicit, f"an integer in [1, target={target}]")
    return explicit


# -- sizes -----------------------------------------------------------------------------------------

_SIZE = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[km]?)$")


def parse_token_size(value: str | int, *, name: str = "size") -> int:
    """A token size from text: ``"16k"`` = 16,384, ``"1.5m"`` = 1,572,864, ``"20,000"``.

    ``k`` means 1,024 and ``m`` 1,048,576 (case-insensitive); underscores and commas between
    digits are ignored; a fraction is allowed before a unit and rounded down to a whole token.
    Raises ``SettingError`` (naming ``name``) for anything else, negative numbers included.

    >>> parse_token_size("16k"), parse_token_size("1M"), parse_token_size("20_000")
    (16384, 1048576, 20000)
    """
    if _is_int(value):
        if value < 0:
            raise SettingError(name, value, "a size >= 0")
        return int(value)
    valid = "a token size such as 20000, 20_000, 20,000, 16k or 1.5m (k = 1,024)"
    if not isinstance(value, str):
        raise SettingError(name, value, valid)
    text = value.strip().lower()
    if re.search(r"(?<!\d)[_,]|_(?!\d)|,(?!\d{3}(?!\d))", text):
        raise SettingError(name, value, valid)
    text = text.replace("_", "").replace(",", "")
    match = _SIZE.match(text)
    if match is None:
        raise SettingError(name, value, valid)
    number, unit = str(match["number"]), str(match["unit"])
    if "." in number and not unit:
        raise SettingError(name, value, valid)
    scale = {"": 1, "k": _KIB, "m": _MIB}[unit]
    if "." in number:
        whole, fraction = number.split(".")
        return (int(whole + fraction) * scale) // int("1" + "0" * len(fraction))
    return int(number) * scale


def format_token_size(tokens: int) -> str:
    """A token count for people: ``9300`` -> ``"9.1k"`` (k = 1,024), ``157_000`` -> ``"153k"``.

    Under 1,024 the plain number; then ``k`` with one decimal below 100k and none above
    (a trailing ``.0`` dropped), then ``m`` the same way.

    >>> [format_token_size(n) for n in (950, 9300, 16384, 157_000, 1_572_864)]
    ['950', '9.1k', '16k', '153k', '1.5m']
    """
    if tokens < 0:
        return "-" + format_token_size(-tokens)
    if tokens < _KIB:
        return str(tokens)
    for unit, scale in (("k", _KIB), ("m", _MIB)):
        value = tokens / scale
        text = f"{value:.0f}" if value >= 100 else f"{value:.1f}".removesuffix(".0")
        if float(text) < 1_024 or unit == "m":
            return text + unit
    raise AssertionError("unreachable")  # pragma: no cover
