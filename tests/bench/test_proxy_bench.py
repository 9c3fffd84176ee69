"""Tests of ``bench/proxy.py``: a tiny run as a subprocess (a few request pairs, two shared
sessions) whose JSON line carries the headline figures, sane, and whose table went to the
results file given."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "proxy.py"


def test_a_tiny_run_reports_its_figures(tmp_path: Path, swebench_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--requests", "10", "--streams", "3", "--limit", "2",
         "--data", str(swebench_path), "--json", "--results", str(results)],
        capture_output=True,
        text=True,
        timeout=1800,  # a guard against hanging: a busy machine took over 180 s
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["added_latency_p99_ms"] >= figures["added_latency_p50_ms"]
    assert figures["sessions"] == 2 and figures["failed"] == 0
    assert isinstance(figures["first_chunk_added_p50_ms"], float)
    for key in ("cache_read_share_proxy", "cache_read_share_library"):
        assert 0.0 < figures[key] < 1.0
    # the same sessions, the same window and rules: the two shares are close
    assert abs(figures["cache_read_share_proxy"] - figures["cache_read_share_library"]) < 0.05
    assert "## proxy" in results.read_text(encoding="utf-8")
