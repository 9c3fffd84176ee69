"""Tests of the benchmarks' shared output: each replaces only its own section of RESULTS.md, where
the output options say."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _results_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_results", ROOT / "bench" / "results.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_replaces_only_its_own_section(tmp_path: Path) -> None:
    results = _results_module()
    path = tmp_path / "RESULTS.md"
    results.write_section("## tokens\n\nfirst\n", path)
    assert path.read_text(encoding="utf-8").count("## tokens") == 1
    path.write_text(path.read_text(encoding="utf-8") + "\n## prune\n\nprune table\n", "utf-8")
    results.write_section("## tokens\n\nsecond\n", path)
    results.write_section("## store\n\nstore table\n", path)
    text = path.read_text(encoding="utf-8")
    assert "second" in text and "first" not in text
    assert "## prune\n\nprune table" in text
    assert text.index("## tokens") < text.index("## prune") < text.index("## store")
    assert text.startswith("# Benchmark results\n")


def test_a_section_needs_a_heading(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="## "):
        _results_module().write_section("no heading\n", tmp_path / "R.md")


def test_the_output_options_choose_where_the_section_goes(tmp_path: Path) -> None:
    import argparse

    results = _results_module()
    parser = argparse.ArgumentParser()
    results.add_output_options(parser)
    defaults = parser.parse_args([])
    assert not defaults.json and not defaults.no_results
    assert defaults.results == results.RESULTS
    path = tmp_path / "R.md"
    results.save_section(parser.parse_args(["--results", str(path)]), "## store\n\nrows\n")
    assert "## store\n\nrows" in path.read_text(encoding="utf-8")
    other = tmp_path / "other.md"
    results.save_section(
        parser.parse_args(["--results", str(other), "--no-results", "--json"]), "## x\n"
    )
    assert not other.exists()
