"""Tests of ``bench/calls.py``: a tiny run as a subprocess whose JSON line says every call was
kept and reads back whole, the references far smaller than copies of what the calls sent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "calls.py"


def test_a_tiny_run_reports_its_figures() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--turns", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["calls"] == figures["provider_requests"] >= 8
    assert figures["placeholders"] == 0
    assert 0 < 5 * figures["sent_bytes"] < figures["copy_bytes"]
