"""Tests of ``bench/policies.py``: the simulated provider (limit, cache, bills), the variant
syntax, and a run as a subprocess on real sessions that compact under the 16k window."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from abridged.core.model import Message
from tests.bench.support import (
    BENCH,
    bench_main,
    bench_usage_error,
    compacting_sessions,
    load_bench,
)

P = load_bench("policies")


def test_bills_count_cache_reads_at_a_tenth_and_summary_requests_apart() -> None:
    tally = P.Tally(prompt=10_000, cached=8_000, summary_prompt=3_000, summary_cached=2_000)
    assert tally.billed(cache_aware=False) == pytest.approx(2_000 + 800 + 3_000)
    assert tally.billed(cache_aware=True) == pytest.approx(2_000 + 800 + 1_000 + 200)
    total = P.Tally(calls=1, prompt=1)
    total.add(P.Tally(calls=2, prompt=5, still_over=1))
    assert (total.calls, total.prompt, total.still_over) == (3, 6, 1)
    figures = P.figures(tally, P.Tally(prompt=20_000, cached=0))
    assert figures["billed_vs_none"] == pytest.approx(5_800 / 20_000)
    assert figures["billed_cache_aware_vs_none"] == pytest.approx(4_000 / 20_000)


def test_the_provider_rejects_over_the_limit_and_reads_a_repeated_prefix_from_cache() -> None:
    ruler = P.Ruler()
    tally = P.Tally()
    provider = P.Provider(ruler, 3_000, tally)
    task = Message.user(" ".join(f"word{i}" for i in range(1_500)))  # about 3k tokens
    context = [Message.system("be brief"), task]
    tokens = ruler.total(ruler.segments(context))
    assert tokens > 3_000
    with pytest.raises(P.Rejected) as rejected:
        provider.send(context)
    assert rejected.value.tokens == tokens and tally.calls == 0  # a rejected call is not billed
    provider.limit = 1 << 30
    first = provider.send(context)
    second = provider.send([*context, Message.assistant("done")])
    assert first == (tokens, 0)
    # OpenAI's rule: the common prefix, in steps of 128 tokens
    assert second[1] == tokens // 128 * 128 and second[0] > tokens
    provider.bill_summary([*context, Message.user("Summarize.")])
    assert tally.summary_requests == 1 and tally.summary_cached == tokens // 128 * 128
    assert tally.calls == 2 and tally.prompt == first[0] + second[0]


def test_variants_name_budget_and_compaction_settings() -> None:
    budget, settings = P.variant_settings("trigger_ratio=0.9,target_ratio=0.3,prune_enabled=false")
    assert (budget.trigger_ratio, budget.target_ratio) == (0.9, 0.3)
    assert settings.prune_enabled is False
    budget, _ = P.variant_settings("keep_recent_tokens=1500")
    assert budget.keep_recent_tokens == 1_500 and isinstance(budget.keep_recent_tokens, int)
    parse = P._names(P.POLICIES)
    assert parse("abridged,codex") == parse("abridged;codex") == ["abridged", "codex"]
    assert parse("abridged:trigger_ratio=0.9,target_ratio=0.3;pi") == [
        "abridged:trigger_ratio=0.9,target_ratio=0.3",
        "pi",
    ]
    for bad in ("trigger_ratio=0.3,target_ratio=0.5", "no_such=1", "trigger_ratio=high"):
        with pytest.raises(argparse.ArgumentTypeError):
            P.variant_settings(bad)


def _run(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(BENCH / "policies.py"), "--json", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_benchmark_runs_every_policy_and_reports(
    swebench_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "three.jsonl"
    compacting_sessions(swebench_path, data, 3)
    results = tmp_path / "RESULTS.md"
    out = _run("--data", str(data), "--windows", "16k", "--results", str(results))
    policies = out["windows"]["16k"]["policies"]
    assert set(policies) == {
        "none",
        "abridged",
        "abridged-replay",
        "codex",
        "pi",
        "opencode",
        "langchain",
    }
    none, ours = policies["none"], policies["abridged"]
    assert none["billed_vs_none"] == 1.0 and none["compactions"] == 0 and none["rejected"] == 0
    # the window bites: abridged compacts and never sends a context over the limit
    assert ours["compactions"] >= 1 and ours["rejected"] == 0 and ours["still_over"] == 0
    # its summary requests are the cached context plus an instruction
    assert ours["summary_requests"] >= 1 and ours["summary_cached"] > 0
    assert ours["billed_cache_aware_vs_none"] < ours["billed_vs_none"] < 1.5
    for name, f in policies.items():
        assert f["failed_sessions"] == 0, name
        assert f["calls"] + f["still_over"] == none["calls"], name  # every call sent or counted
        assert 0 < f["cache_read_share"] <= 1, name
    assert results.read_text(encoding="utf-8").count("## policies") == 1
    # the same figures whatever the spread over processes
    alone, _ = bench_main(
        "policies",
        ["--json", "--data", str(data), "--windows", "16k", "--policies", "abridged",
         "--workers", "1", "--no-results"],
        capsys,
    )  # fmt: skip
    again = alone["windows"]["16k"]["policies"]["abridged"]
    for key in ("billed_vs_none", "billed_cache_aware_vs_none", "compactions", "still_over"):
        assert again[key] == ours[key], key


def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (
        ["--windows", "2k"],
        ["--policies", "nobody"],
        ["--limit", "0"],
        # a variant's sizes are checked against every window of the run
        ["--windows", "16k,32k", "--policies", "abridged:keep_recent_tokens=9000"],
    ):
        assert "error" in bench_usage_error("policies", ["--no-results", *args], capsys), args


def test_run_all_knows_it() -> None:
    spec = importlib.util.spec_from_file_location("bench_run_all_policies", BENCH / "run_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "policies" in module.BENCHMARKS and "policies" in module.TAKES_DATA
