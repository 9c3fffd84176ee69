"""Tests of ``bench/service.py``: a tiny run as a subprocess (3 turns, levels 5 and 10) whose
JSON line carries the headline figures, sane, and whose table went to the results file given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "service.py"


def test_a_tiny_run_reports_its_figures(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--turns",
            "3",
            "--levels",
            "5,10",
            "--latency-ms",
            "5",
            "--stream-latency-ms",
            "50",
            "--stream-turns",
            "2",
            "--json",
            "--results",
            str(results),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # 1: a target missed (a tiny run on a small machine may); anything else is a crash
    assert done.returncode in (0, 1), done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("added_latency_p50_ms", "added_latency_p99_ms", "concurrent_streams"):
        assert key in figures, key
    assert figures["turns"] == 3
    # HTTP is not free and not absurd: each turn is three model calls of 5 ms
    assert figures["added_latency_p50_ms"] <= figures["added_latency_p99_ms"]
    assert -50 < figures["added_latency_p50_ms"] < 500
    assert figures["direct_p50_ms"] >= 15 and figures["http_p50_ms"] >= 15
    assert figures["concurrent_streams"] in (0, 5, 10)
    levels = figures["levels"]
    assert levels and levels[0]["streams"] == 5
    for level in levels:
        assert level["failures"] == 0, level["first_failure"]
        assert level["turns"] == level["streams"] * 2
        assert level["peak_open"] <= level["streams"]
        # the worker did the turns: some CPU, at most the machine's cores (its threads too)
        assert level["worker_cpu_ms_per_turn"] > 0
        assert 0 < level["worker_busy"] <= (os.cpu_count() or 1)
    assert figures["provider_rejected"] == 0
    # 3 turns direct + 3 over HTTP + warm-ups, three calls each, at least
    assert figures["provider_requests"] >= 3 * 6
    assert figures["targets_met"] == (
        figures["added_latency_p50_ms"] <= 5 and figures["concurrent_streams"] >= 200
    )
    assert done.returncode == (0 if figures["targets_met"] else 1)
    text = results.read_text(encoding="utf-8")
    assert text.startswith("# Benchmark results") and "## service" in text
    assert "| streams | peak open |" in text
    assert done.stdout.strip().splitlines()[-2].startswith("Targets:")
