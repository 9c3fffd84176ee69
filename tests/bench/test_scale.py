"""Tests of ``bench/scale.py``: the synthetic conversations, and a run as a subprocess at tiny
sizes (a small window, so that they compact)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import BENCH, bench_main, bench_usage_error, load_bench

S = load_bench("scale")


def test_conversations_are_deterministic_and_shaped() -> None:
    for shape in S.SHAPES:
        first = S.conversation(shape, 300)
        again = S.conversation(shape, 300)
        assert len(first) == 300
        assert [m.fingerprint for m in first] == [m.fingerprint for m in again]
        assert first[0].role == "system"
    short = S.conversation("short", 300)
    users = [m for m in short if m.role == "user"]
    assert len(users) >= 140 and all(len(m.text) < 400 for m in short)
    long = S.conversation("long", 300)
    results = [r for m in long for r in m.tool_results]
    calls = {c.id for m in long for c in m.tool_calls}
    assert len(results) >= 120 and {r.call_id for r in results} <= calls
    assert all(500 <= len(r.text) <= 4_200 for r in results)
    assert any(r.is_error for r in results)
    assert 10 <= sum(1 for m in long if m.role == "user") <= 40
    # a different size is not a prefix of another: each is built from its own seed
    assert S.conversation("short", 200)[1].text != short[1].text


def _run(*extra: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(BENCH / "scale.py"), "--json", "--repeats", "1", *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,  # a guard against hanging: a busy machine took over 600 s
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_benchmark_runs_and_reports(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    out = _run("--sizes", "120,240", "--window", "4096", "--results", str(results))
    assert set(out["shapes"]) == {"short", "long"}
    for figures in out["shapes"].values():
        assert set(figures["sizes"]) == {"120", "240"}
        assert figures["growth_summarize"] is None  # 10k and 100k were not run
        for row in figures["sizes"].values():
            assert row["summarize_s"] > 0 and row["compact_s"] > 0 and row["aprepare_s"] > 0
            assert row["loop_block_ms"] >= 0 and row["loop_cpu_ms"] >= 0
            assert row["gc_pause_ms"] >= 0
            assert row["peak_mb"] is not None and row["peak_mb"] > 0
    assert out["growth_10k_to_100k"] is None
    assert out["max_loop_block_ms"] == max(
        row["loop_block_ms"] for f in out["shapes"].values() for row in f["sizes"].values()
    )
    section = results.read_text(encoding="utf-8")
    assert section.count("## scale") == 1 and "| short | 240 |" in section
    assert "--sizes 120,240" in section and "--window 4096" in section


def test_options(capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = bench_main(
        "scale",
        ["--json", "--repeats", "1", "--sizes", "120", "--shapes", "short", "--window", "4096",
         "--no-memory", "--no-results"],
        capsys,
    )  # fmt: skip
    assert set(out["shapes"]) == {"short"}
    assert out["shapes"]["short"]["sizes"]["120"]["peak_mb"] is None
    assert "--shapes" in bench_usage_error("scale", ["--shapes", "tiny", "--no-results"], capsys)


def test_growth_is_the_largest_ratio() -> None:
    rows = {
        10_000: {"summarize_s": 1.0, "compact_s": 2.0},
        100_000: {"summarize_s": 9.0, "compact_s": 30.0},
    }
    assert S._growth(rows, "summarize_s") == 9.0
    assert S._growth(rows, "compact_s") == 15.0
    assert S._growth({10_000: rows[10_000]}, "compact_s") is None


def test_run_all_knows_it() -> None:
    spec = importlib.util.spec_from_file_location("bench_run_all", BENCH / "run_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "scale" in module.BENCHMARKS
