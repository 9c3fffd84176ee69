"""Tests of ``bench/cache.py``: the billing arithmetic, and a run as a subprocess on two real
sessions that compact under the 16k window (then again in this process, in one worker)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench.support import BENCH, bench_main, compacting_sessions, load_bench

C = load_bench("cache")


def test_billing_and_shares() -> None:
    calls = [
        C.Call(prompt=2_000, cached=0, written=0, after_change=False),
        C.Call(prompt=2_100, cached=1_920, written=0, after_change=False),
        C.Call(prompt=1_500, cached=1_024, written=200, after_change=True),
    ]
    recorded, write_all = C._cost(calls)
    # uncached 1x, reads 0.1x, writes 1.25x
    assert recorded == pytest.approx(2_000 + (180 + 192.0) + (276 + 102.4 + 250))
    # every uncached token billed as a write
    assert write_all == pytest.approx(1.25 * 2_000 + (1.25 * 180 + 192.0) + (1.25 * 476 + 102.4))
    assert C._share(calls) == pytest.approx((1_920 + 1_024) / 5_600)
    assert C._share([]) is None
    runs = [C.Run("abridged", "s", calls), C.Run("upper", "s", calls[:2]), C.Run("naive", "s")]
    figures = C.summarize(runs)
    ours = figures["abridged"]
    assert ours["steady_calls"] == 2 and ours["changed_calls"] == 1
    assert ours["steady_share"] == pytest.approx(1_920 / 4_100)
    assert ours["changed_share"] == pytest.approx(1_024 / 1_500)
    assert figures["naive"]["calls"] == 0 and figures["naive"]["share"] is None


def _run(data: Path, *extra: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(BENCH / "cache.py"), "--data", str(data), "--json", *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_benchmark_runs_and_reports(
    swebench_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "two.jsonl"
    compacting_sessions(swebench_path, data, 2)
    results = tmp_path / "RESULTS.md"
    out: dict[str, Any] = _run(data, "--workers", "2", "--results", str(results))
    for key in (
        "cache_read_share",
        "upper_bound_share",
        "naive_share",
        "cache_read_share_all_calls",
    ):
        assert 0.0 <= out[key] <= 1.0, key
    assert out["sessions"] == 2
    v = out["variants"]
    assert set(v) == {"abridged", "upper", "naive"}
    # the same calls in every variant; the window bites: abridged compacts, nothing overflows
    assert v["abridged"]["calls"] == v["upper"]["calls"] == v["naive"]["calls"] == out["calls"]
    assert v["abridged"]["compactions"] >= 1 and v["upper"]["compactions"] == 0
    assert out["overflows"] == 0 and out["over_budget"] == 0 and out["max_prompt_ratio"] <= 1
    assert v["upper"]["max_prompt_ratio"] > 1  # the upper bound really is unlimited
    assert v["upper"]["changed_calls"] == 0
    # the naive compactor rebuilds every call after its first compaction
    assert v["naive"]["compactions"] > v["abridged"]["compactions"]
    assert v["naive"]["changed_calls"] > v["abridged"]["changed_calls"]
    assert out["naive_share"] < out["cache_read_share_all_calls"]
    # a smaller context read mostly from the cache costs less than the whole history
    assert out["cost"] < out["upper_bound_cost"]
    section = results.read_text(encoding="utf-8")
    assert section.count("## cache") == 1 and "upper bound" in section
    # the figures do not depend on how the sessions were spread over processes
    alone, _ = bench_main(
        "cache", ["--data", str(data), "--json", "--workers", "1", "--no-results"], capsys
    )
    for key in ("cache_read_share", "upper_bound_share", "naive_share", "cost"):
        assert alone[key] == out[key], key
