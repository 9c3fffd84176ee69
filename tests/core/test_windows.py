"""Tests of abridged.core.windows: names, precedence of limits, override validation, TTL cache."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.windows import (
    DEFAULT_LIMITS,
    LimitsOverride,
    ModelLimits,
    Pricing,
    ProbedLimits,
    TTLCache,
    canonical_model_name,
    lookup_limits,
    model_name_candidates,
    normalize_model_name,
    resolve_limits,
)
from abridged.errors import SettingError

# --- names -------------------------------------------------------------------------------------

NORMALISATION = [
    ("gpt-4.1", "gpt-4.1"),
    ("  GPT-4.1  ", "gpt-4.1"),
    ("openai/gpt-4.1", "gpt-4.1"),
    ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
    ("claude-3-5-sonnet@20240620", "claude-3-5-sonnet"),
    ("claude-opus-4-6@default", "claude-opus-4-6"),
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ("google/gemini-3-pro-preview", "gemini-3-pro-preview"),
    ("models/gemini-2.5-pro", "gemini-2.5-pro"),
    ("gemini/gemini-2.5-flash", "gemini-2.5-flash"),
    ("openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4.5"),
    ("openrouter/openai/gpt-4o-2024-11-20", "gpt-4o"),
    ("OpenRouter/Google/Gemini-2.5-Pro", "gemini-2.5-pro"),
    ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-haiku-20240307-v1:0"),
    ("vertex_ai/gemini-2.0-flash", "gemini-2.0-flash"),
    ("meta-llama/Llama-3.3-70B-Instruct", "meta-llama/llama-3.3-70b-instruct"),
    ("hosted_vllm/Qwen/Qwen3-8B", "qwen/qwen3-8b"),
    ("gpt-4-0613", "gpt-4-0613"),  # a 4-digit suffix is only a fuzzy candidate
    ("llama3.1:8b", "llama3.1:8b"),
    ("o3-mini-2025-01-31", "o3-mini"),
    ("mistral/mistral-large-latest", "mistral-large"),
]


@pytest.mark.parametrize(("name", "expected"), NORMALISATION)
def test_normalize_model_name(name: str, expected: str) -> None:
    assert normalize_model_name(name) == expected


def test_canonical_name_writes_version_dots_as_dashes() -> None:
    assert canonical_model_name("anthropic/claude-sonnet-4.5") == "claude-sonnet-4-5"
    assert canonical_model_name("claude-3.5-sonnet-20241022") == "claude-3-5-sonnet"
    assert canonical_model_name("gpt-4o.mini") == "gpt-4o.mini"  # not a version dot


def test_a_bare_prefix_is_not_stripped_to_nothing() -> None:
    assert normalize_model_name("openai/") == "openai/"
    assert normalize_model_name("latest") == "latest"


def test_candidates_go_from_exact_to_loose() -> None:
    candidates = model_name_candidates("OpenRouter/Anthropic/Claude-Sonnet-4.5-20250929")
    assert candidates[:4] == (
        "OpenRouter/Anthropic/Claude-Sonnet-4.5-20250929",
        "openrouter/anthropic/claude-sonnet-4.5-20250929",
        "anthropic/claude-sonnet-4.5-20250929",
        "claude-sonnet-4.5-20250929",
    )
    assert candidates.index("claude-sonnet-4.5") < candidates.index("claude-sonnet-4-5")
    assert len(candidates) == len(set(candidates))


@pytest.mark.parametrize(
    ("name", "loose"),
    [
        ("gpt-4-0613", "gpt-4"),
        ("llama3.1:8b", "llama3.1"),
        ("qwen3-coder:free", "qwen3-coder"),
        ("meta-llama/llama-3.3-70b-instruct", "llama-3.3-70b-instruct"),
        ("claude-sonnet-4.5", "claude-sonnet-4-5"),
    ],
)
def test_fuzzy_candidates(name: str, loose: str) -> None:
    assert loose in model_name_candidates(name)
    assert loose not in model_name_candidates(name, fuzzy=False)


def test_strict_candidates_only_drop_case_and_prefixes() -> None:
    assert model_name_candidates("openai/GPT-4o-2024-08-06", fuzzy=False) == (
        "openai/GPT-4o-2024-08-06",
        "openai/gpt-4o-2024-08-06",
        "gpt-4o-2024-08-06",
    )


NAME_CHARS = st.text(alphabet="abcAB0123456789-./:@_ ", max_size=30)
NAMES = st.one_of(
    NAME_CHARS,
    st.builds(
        lambda prefix, body, suffix: prefix + body + suffix,
        st.sampled_from(["", "openai/", "openrouter/anthropic/", "models/", "Google/"]),
        NAME_CHARS,
        st.sampled_from(["", "-latest", "-20250929", "-2024-08-06", "@20240620", ":8b"]),
    ),
)


@given(NAMES)
def test_normalisation_is_idempotent(name: str) -> None:
    once = normalize_model_name(name)
    assert normalize_model_name(once) == once
    assert once == once.lower().strip()


@given(NAMES)
def test_candidates_start_exact_and_contain_the_normalised_name(name: str) -> None:
    candidates = model_name_candidates(name)
    if name.strip():
        assert candidates[0] == name.strip()
        assert normalize_model_name(name) in candidates
    assert len(candidates) == len(set(candidates))


# --- precedence --------------------------------------------------------------------------------

REGISTRY = {
    "gpt-4.1": ModelLimits(
        1_047_576,
        32_768,
        "registry",
        True,
        pricing=Pricing(input=2.0, output=8.0, cache_read=0.5),
        matched="openai/gpt-4.1",
    ),
    "gpt-5": ModelLimits(400_000, 128_000, "registry", True, max_input=272_000),
    "claude-sonnet-4-5": ModelLimits(200_000, 64_000, "registry", True),
}


def test_registry_lookup_tries_exact_then_normalised_forms() -> None:
    assert lookup_limits(REGISTRY, "gpt-4.1") == ("gpt-4.1", REGISTRY["gpt-4.1"])
    key, hit = lookup_limits(REGISTRY, "openai/gpt-4.1-2025-04-14") or ("", None)
    assert (key, hit) == ("gpt-4.1", REGISTRY["gpt-4.1"])
    key, _ = lookup_limits(REGISTRY, "openrouter/anthropic/claude-sonnet-4.5") or ("", None)
    assert key == "claude-sonnet-4-5"
    assert lookup_limits(REGISTRY, "unknown-model") is None


def test_registry_is_used_when_nothing_else_is_given() -> None:
    limits = resolve_limits("openai/gpt-4.1", registry=REGISTRY)
    assert (limits.context_window, limits.max_output) == (1_047_576, 32_768)
    assert limits.source == limits.output_source == "registry"
    assert limits.known
    assert limits.matched == "openai/gpt-4.1"
    assert limits.model == "openai/gpt-4.1"
    assert limits.pricing == Pricing(input=2.0, output=8.0, cache_read=0.5)


def test_probe_beats_registry_but_registry_prices_stay() -> None:
    probe = ProbedLimits(context_window=65_536, max_output=8_192, model_id="gpt-4.1")
    limits = resolve_limits("gpt-4.1", probe=probe, registry=REGISTRY)
    assert (limits.context_window, limits.max_output) == (65_536, 8_192)
    assert limits.source == "probe"
    assert limits.output_source == "probe"
    assert limits.matched == "gpt-4.1"
    assert limits.pricing is not None and limits.pricing.input == 2.0


def test_probe_without_output_takes_registry_output_capped_at_the_window() -> None:
    limits = resolve_limits("gpt-4.1", probe=ProbedLimits(context_window=16_384), registry=REGISTRY)
    assert limits.context_window == 16_384
    assert limits.max_output == 16_384  # registry's 32,768 capped at the probed window
    assert limits.output_source == "registry"
    assert any("capped" in note for note in limits.notes)


def test_override_beats_probe_and_registry() -> None:
    limits = resolve_limits(
        "gpt-4.1",
        override=LimitsOverride(context_window=100_000, max_output=10_000),
        probe=ProbedLimits(context_window=65_536, max_output=8_192),
        registry=REGISTRY,
    )
    assert (limits.context_window, limits.max_output) == (100_000, 10_000)
    assert limits.source == limits.output_source == "override"
    assert limits.known


def test_partial_override_keeps_other_fields_from_lower_sources() -> None:
    window_only = resolve_limits(
        "gpt-4.1", override=LimitsOverride(context_window=50_000), registry=REGISTRY
    )
    assert (window_only.source, window_only.output_source) == ("override", "registry")
    assert window_only.max_output == 32_768

    output_only = resolve_limits(
        "gpt-4.1", override=LimitsOverride(max_output=1_000), registry=REGISTRY
    )
    assert (output_only.source, output_only.output_source) == ("registry", "override")
    assert (output_only.context_window, output_only.max_output) == (1_047_576, 1_000)


def test_max_input_comes_only_from_the_source_of_the_window() -> None:
    assert resolve_limits("gpt-5", registry=REGISTRY).max_input == 272_000
    probed = resolve_limits("gpt-5", probe=ProbedLimits(context_window=128_000), registry=REGISTRY)
    assert probed.max_input is None
    overridden = resolve_limits(
        "gpt-5", override=LimitsOverride(context_window=300_000), registry=REGISTRY
    )
    assert overridden.max_input is None


def test_default_is_conservative_and_flagged_unknown() -> None:
    limits = resolve_limits("some-private-model", registry=REGISTRY)
    assert (limits.context_window, limits.max_output) == (8_192, 4_096)
    assert limits.source == limits.output_source == "default"
    assert limits.known is False
    assert limits.pricing is None
    assert any("context_window" in note for note in limits.notes)
    assert resolve_limits("x").context_window == DEFAULT_LIMITS.context_window


def test_custom_default() -> None:
    custom = ModelLimits(32_768, 2_048, "default", False)
    limits = resolve_limits("x", default=custom)
    assert (limits.context_window, limits.max_output, limits.known) == (32_768, 2_048, False)


def test_probe_gives_known_limits_without_registry() -> None:
    limits = resolve_limits("local", probe=ProbedLimits(context_window=32_768))
    assert limits.known and limits.source == "probe"
    assert limits.max_output == 4_096 and limits.output_source == "default"


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"context_window": 0}, "context_window"),
        ({"context_window": 1_023}, "context_window"),
        ({"context_window": 100_000_001}, "context_window"),
        ({"context_window": True}, "context_window"),
        ({"context_window": 8192.0}, "context_window"),
        ({"context_window": "8k"}, "context_window"),
        ({"max_output": 0}, "max_output"),
        ({"max_output": -5}, "max_output"),
        ({"max_output": 100_000_001}, "max_output"),
        ({"context_window": 8_192, "max_output": 8_193}, "max_output"),
    ],
)
def test_override_out_of_range_names_the_setting(kwargs: dict[str, object], setting: str) -> None:
    with pytest.raises(SettingError) as info:
        LimitsOverride(**kwargs)  # type: ignore[arg-type]
    error = info.value
    assert error.name == setting
    assert error.value == kwargs[setting]
    assert "integer" in error.valid
    assert setting in str(error)


def test_override_bounds_are_inclusive() -> None:
    assert LimitsOverride(context_window=1_024, max_output=1_024).max_output == 1_024
    assert LimitsOverride(context_window=100_000_000).context_window == 100_000_000
    assert LimitsOverride().is_empty
    assert not LimitsOverride(max_output=1).is_empty


def test_model_limits_validates_itself() -> None:
    with pytest.raises(SettingError, match="max_output"):
        ModelLimits(8_192, 9_000, "registry", True)
    with pytest.raises(SettingError, match="known"):
        ModelLimits(8_192, 4_096, "default", True)
    with pytest.raises(SettingError, match="known"):
        ModelLimits(8_192, 4_096, "probe", False)
    with pytest.raises(SettingError, match="source"):
        ModelLimits(8_192, 4_096, "guess", True)  # type: ignore[arg-type]
    with pytest.raises(SettingError, match="max_input"):
        ModelLimits(8_192, 4_096, "registry", True, max_input=9_000)
    with pytest.raises(SettingError, match="context_window"):
        ProbedLimits(context_window=0)


# --- TTL cache ---------------------------------------------------------------------------------


def test_ttl_cache_expires_exactly_at_ttl() -> None:
    cache: TTLCache[str, int] = TTLCache(10.0)
    cache.put("a", 1, now=100.0)
    assert cache.get("a", now=100.0) == 1
    assert cache.get("a", now=109.999) == 1
    assert cache.get("a", now=110.0) is None
    assert "a" not in cache  # dropped on the expired read


def test_ttl_cache_per_entry_ttl_and_refresh() -> None:
    cache: TTLCache[str, str] = TTLCache(100.0)
    cache.put("short", "x", now=0.0, ttl=1.0)
    cache.put("long", "y", now=0.0)
    assert cache.get("short", now=1.5) is None
    assert cache.get("long", now=1.5) == "y"
    cache.put("long", "z", now=90.0)  # storing again restarts the clock
    assert cache.get("long", now=150.0) == "z"
    assert cache.get("long", now=190.0) is None


def test_ttl_cache_evicts_expired_then_oldest() -> None:
    cache: TTLCache[str, int] = TTLCache(10.0, max_entries=3)
    cache.put("old", 1, now=0.0, ttl=1.0)
    cache.put("b", 2, now=0.0)
    cache.put("c", 3, now=0.0)
    cache.put("d", 4, now=5.0)  # full: the expired "old" goes first
    assert set(cache.keys()) == {"b", "c", "d"}
    cache.put("e", 5, now=6.0)  # full, none expired: the oldest ("b") goes
    assert list(cache.keys()) == ["c", "d", "e"]
    assert len(cache) == 3


def test_ttl_cache_purge_pop_clear() -> None:
    cache: TTLCache[int, str] = TTLCache(5.0)
    for key in range(4):
        cache.put(key, str(key), now=float(key))
    assert cache.purge(now=6.5) == 2  # stored at 0 and 1
    assert cache.pop(3) == "3"
    assert cache.pop(3) is None
    cache.clear()
    assert len(cache) == 0


@pytest.mark.parametrize("ttl", [0, -1.0, True, "60"])
def test_ttl_cache_rejects_bad_ttl(ttl: object) -> None:
    with pytest.raises(SettingError, match="ttl"):
        TTLCache(ttl)  # type: ignore[arg-type]
    cache: TTLCache[str, int] = TTLCache(1.0)
    with pytest.raises(SettingError, match="ttl"):
        cache.put("a", 1, now=0.0, ttl=ttl)  # type: ignore[arg-type]


def test_ttl_cache_rejects_none_and_bad_size() -> None:
    with pytest.raises(SettingError, match="max_entries"):
        TTLCache(1.0, max_entries=0)
    cache: TTLCache[str, object] = TTLCache(1.0)
    with pytest.raises(SettingError, match="value"):
        cache.put("a", None, now=0.0)
