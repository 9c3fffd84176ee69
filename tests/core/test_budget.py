"""Tests of the budget arithmetic, its settings' validation and token-size parsing/formatting."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from abridged.core.budget import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    MIN_CONTEXT_WINDOW,
    MIN_INPUT_BUDGET,
    Budget,
    BudgetSettings,
    compute_budget,
    default_safety_margin,
    format_token_size,
    parse_token_size,
)
from abridged.errors import ContextOverflowError, SettingError

windows = st.integers(MIN_CONTEXT_WINDOW, 4_000_000)
outputs = st.none() | st.integers(1, 2_000_000)


@st.composite
def settings_(draw: st.DrawFn) -> BudgetSettings:
    trigger = draw(st.floats(0.02, 1.0))
    target = draw(st.floats(0.01, trigger, exclude_max=True) | st.just(trigger * 0.9999))
    return BudgetSettings(
        trigger_ratio=trigger,
        target_ratio=target,
        safety_margin=draw(st.none() | st.integers(0, 50_000)),
        keep_recent_tokens=draw(st.none() | st.integers(1, 100_000)),
        summary_max_tokens=draw(st.none() | st.integers(1, 20_000)),
        max_output_tokens=draw(outputs),
    )


@given(windows, outputs, settings_(), st.integers(0, 10_000), st.integers(0, 10_000))
def test_budget_arithmetic(
    window: int, max_output: int | None, settings: BudgetSettings, system: int, tools: int
) -> None:
    try:
        budget = compute_budget(
            window, max_output, settings, system_tokens=system, tools_tokens=tools
        )
    except SettingError as error:
        # Only the window-dependent ranges may fail here, and the error says which.
        assert error.name in {"safety_margin", "keep_recent_tokens", "summary_max_tokens"}
        return
    except ContextOverflowError as error:
        assert error.tokens == system + tools
        assert error.limit is not None and system + tools >= error.limit
        return
    assert budget == compute_budget(
        window, max_output, settings, system_tokens=system, tools_tokens=tools
    )
    assert budget.output_reserve <= window // 2
    known = [v for v in (max_output, settings.max_output_tokens) if v is not None]
    expected_output = min(known) if known else DEFAULT_MAX_OUTPUT_TOKENS
    assert budget.max_output_tokens == expected_output
    assert budget.output_reserve == min(expected_output, window // 2)
    assert budget.input_budget == window - budget.output_reserve - budget.safety_margin
    assert budget.input_budget >= MIN_INPUT_BUDGET > 0
    if settings.safety_margin is not None:
        assert budget.safety_margin == settings.safety_margin
    assert budget.input_budget >= budget.trigger > budget.target >= 1
    assert budget.trigger <= math.floor(settings.trigger_ratio * budget.input_budget) or (
        budget.trigger == 2
    )
    assert 1 <= budget.keep_recent <= budget.target
    assert 1 <= budget.summary_max <= budget.target
    if settings.keep_recent_tokens is None:
        assert budget.keep_recent <= min(0.25 * budget.input_budget, 20_000)
    else:
        assert budget.keep_recent == settings.keep_recent_tokens
    if settings.summary_max_tokens is None:
        assert budget.summary_max <= min(0.20 * budget.input_budget, 4_000)
    else:
        assert budget.summary_max == settings.summary_max_tokens
    assert budget.fixed_tokens == system + tools
    assert budget.available_for_messages == budget.input_budget - system - tools > 0


@given(windows, outputs)
def test_default_budget_always_computes(window: int, max_output: int | None) -> None:
    budget = compute_budget(window, max_output)
    assert budget.enabled and budget.overflow_recovery
    assert 0 < budget.safety_margin <= default_safety_margin(window)
    assert budget.input_budget > budget.trigger > budget.target > budget.keep_recent
    assert budget.target > budget.summary_max


def test_design_example_budget() -> None:
    budget = compute_budget(200_000, 32_000)
    assert budget == Budget(
        context_window=200_000,
        max_output_tokens=32_000,
        output_reserve=32_000,
        safety_margin=4_000,
        input_budget=164_000,
        trigger=139_400,
        target=73_800,
        keep_recent=20_000,
        summary_max=4_000,
        system_tokens=0,
        tools_tokens=0,
        enabled=True,
        overflow_recovery=True,
    )
    assert budget.should_compact(139_400) and not budget.should_compact(139_399)
    assert budget.exceeds_input_budget(164_001) and not budget.exceeds_input_budget(164_000)


def test_small_window_budget() -> None:
    budget = compute_budget(4_096, None)
    assert budget.output_reserve == 2_048  # the default 8k output capped at half the window
    assert budget.safety_margin == 256
    assert budget.input_budget == 1_792
    assert (budget.keep_recent, budget.summary_max) == (268, 358)


def test_system_prompt_and_tools_count_against_the_budget() -> None:
    budget = compute_budget(128_000, 16_000, system_tokens=1_800, tools_tokens=1_400)
    assert budget.available_for_messages == budget.input_budget - 3_200
    with pytest.raises(ContextOverflowError) as info:
        compute_budget(8_192, 1_000, system_tokens=5_000, tools_tokens=2_000)
    assert info.value.tokens == 7_000


def test_settings_max_output_and_model_max_output_take_the_smaller() -> None:
    assert (
        compute_budget(100_000, 4_000, BudgetSettings(max_output_tokens=8_000)).output_reserve
        == 4_000
    )
    assert compute_budget(
        100_000, None, BudgetSettings(max_output_tokens=3_000)
    ).output_reserve == (3_000)


def test_disabled_compaction_never_triggers_but_recovery_stays() -> None:
    budget = compute_budget(100_000, 4_000, BudgetSettings(enabled=False))
    assert not budget.should_compact(10**9)
    assert budget.overflow_recovery
    off = compute_budget(100_000, 4_000, BudgetSettings(overflow_recovery=False))
    assert off.enabled and not off.overflow_recovery


def test_default_keep_and_summary_are_capped_at_target() -> None:
    budget = compute_budget(100_000, 4_000, BudgetSettings(trigger_ratio=0.2, target_ratio=0.03))
    assert budget.keep_recent == budget.target
    assert budget.summary_max == budget.target


def test_target_stays_below_trigger_after_rounding() -> None:
    settings = BudgetSettings(trigger_ratio=0.8, target_ratio=0.7999)
    budget = compute_budget(1_024, None, settings)
    assert budget.input_budget == 448
    assert (budget.trigger, budget.target) == (358, 357)  # 0.7999 * 448 = 358.35, one below


def test_default_safety_margin() -> None:
    assert default_safety_margin(1_024) == 64
    assert default_safety_margin(16_384) == 1_024
    assert default_safety_margin(100_000) == 2_000
    assert default_safety_margin(1_000_000) == 20_000


# -- every SettingError --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "valid"),
    [
        ("enabled", "yes", "True or False"),
        ("overflow_recovery", 1, "True or False"),
        ("trigger_ratio", 0, "(0, 1]"),
        ("trigger_ratio", 1.5, "(0, 1]"),
        ("trigger_ratio", float("nan"), "(0, 1]"),
        ("trigger_ratio", "0.8", "(0, 1]"),
        ("trigger_ratio", True, "(0, 1]"),
        ("target_ratio", -0.1, "(0, 1]"),
        ("target_ratio", 0.85, "trigger_ratio=0.85"),
        ("target_ratio", 0.9, "trigger_ratio=0.85"),
        ("safety_margin", -1, ">= 0"),
        ("safety_margin", 1.5, ">= 0"),
        ("keep_recent_tokens", 0, ">= 1"),
        ("keep_recent_tokens", "20k", ">= 1"),
        ("summary_max_tokens", 0, ">= 1"),
        ("max_output_tokens", 0, ">= 1"),
        ("max_output_tokens", False, ">= 1"),
    ],
)
def test_budget_settings_errors(name: str, value: object, valid: str) -> None:
    with pytest.raises(SettingError) as info:
        BudgetSettings(**{name: value})  # type: ignore[arg-type]
    assert info.value.name == name
    assert info.value.value is value
    assert valid in info.value.valid
    assert name in str(info.value)


@pytest.mark.parametrize(
    ("args", "kwargs", "name", "valid"),
    [
        ((1_023, None), {}, "context_window", ">= 1024"),
        (("128k", None), {}, "context_window", ">= 1024"),
        ((True, None), {}, "context_window", ">= 1024"),
        ((8_192, 0), {}, "max_output_tokens", ">= 1"),
        ((8_192, None), {"system_tokens": -1}, "system_tokens", ">= 0"),
        ((8_192, None), {"tools_tokens": -5}, "tools_tokens", ">= 0"),
        (
            (8_192, 1_000),
            {"settings": BudgetSettings(safety_margin=7_000)},
            "safety_margin",
            "[0, 6936]",
        ),
        (
            (100_000, 4_000),
            {"settings": BudgetSettings(keep_recent_tokens=60_000)},
            "keep_recent_tokens",
            "target=42300",
        ),
        (
            (100_000, 4_000),
            {"settings": BudgetSettings(summary_max_tokens=42_301)},
            "summary_max_tokens",
            "target=42300",
        ),
    ],
)
def test_compute_budget_errors(
    args: tuple[object, object], kwargs: dict[str, object], name: str, valid: str
) -> None:
    with pytest.raises(SettingError) as info:
        compute_budget(*args, **kwargs)  # type: ignore[arg-type]
    assert info.value.name == name
    assert valid in info.value.valid


def test_keep_equal_to_target_is_valid() -> None:
    budget = compute_budget(100_000, 4_000, BudgetSettings(keep_recent_tokens=42_300))
    assert budget.keep_recent == budget.target == 42_300


# -- sizes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("16k", 16_384),
        ("16K", 16_384),
        (" 16k ", 16_384),
        ("16 k", 16_384),
        ("1.5k", 1_536),
        ("0.1k", 102),
        ("1m", 1_048_576),
        ("1.5M", 1_572_864),
        ("20000", 20_000),
        ("20_000", 20_000),
        ("20,000", 20_000),
        ("1,000,000", 1_000_000),
        ("0", 0),
        (4_096, 4_096),
    ],
)
def test_parse_token_size(text: str | int, tokens: int) -> None:
    assert parse_token_size(text) == tokens


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "k",
        "16kb",
        "16g",
        "-5",
        "1.5",
        "abc",
        "1,5k",
        "16__384",
        "_16",
        "16_",
        "1,0000",
        "1.k",
        "1e3",
        -1,
        1.5,
        None,
        True,
    ],
)
def test_parse_token_size_rejects_garbage(garbage: object) -> None:
    with pytest.raises(SettingError) as info:
        parse_token_size(garbage, name="keep_recent_tokens")  # type: ignore[arg-type]
    assert info.value.name == "keep_recent_tokens"
    assert info.value.value is garbage


@pytest.mark.parametrize(
    ("tokens", "text"),
    [
        (0, "0"),
        (950, "950"),
        (1_023, "1023"),
        (1_024, "1k"),
        (9_300, "9.1k"),
        (16_384, "16k"),
        (102_400, "100k"),
        (157_000, "153k"),
        (1_048_575, "1m"),
        (1_048_576, "1m"),
        (1_572_864, "1.5m"),
        (-9_300, "-9.1k"),
    ],
)
def test_format_token_size(tokens: int, text: str) -> None:
    assert format_token_size(tokens) == text


@given(st.integers(0, 10**10))
def test_size_round_trips(tokens: int) -> None:
    assert parse_token_size(str(tokens)) == tokens
    assert parse_token_size(f"{tokens:,}") == tokens
    assert parse_token_size(f"{tokens:_}") == tokens
    assert parse_token_size(f"{tokens}k") == tokens * 1_024
    shown = parse_token_size(format_token_size(tokens))
    assert abs(shown - tokens) <= 0.05 * tokens
    assume(tokens >= 1_024)
    assert format_token_size(tokens)[-1] in "km"
