"""Tests of ``abridged analyze``, run as a real process on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent-session.jsonl"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "abridged", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_analyze_json_on_the_example_session() -> None:
    out = _run("analyze", str(EXAMPLE), "--window", "16k", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["limits"] == {
        "context_window": 16_384,
        "max_output": 4_096,
        "source": "override",
        "known": True,
    }
    assert data["steps"] == data["calls"] == 58
    assert data["first_trigger_call"] is not None
    assert data["calls_over_budget"] > 0
    assert data["estimate_error"]["hybrid"]["median"] < 0.02
    assert data["tokens_by_category"]["tool_results"] > data["tokens_by_category"]["assistant"]


def test_analyze_table_output_names_the_figures() -> None:
    out = _run("analyze", str(EXAMPLE), "--window", "16k")
    assert out.returncode == 0, out.stderr
    for words in ("where the tokens go", "tool results", "first triggered at call", "bash"):
        assert words in out.stdout


def test_shared_sessions_pick_their_window_from_the_registry(swebench_path: Path) -> None:
    out = _run("analyze", str(swebench_path), "--session", "2", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["limits"]["source"] == "registry"
    assert data["limits"]["context_window"] >= 1_000_000
    assert data["model"] == "google/gemini-3-pro-preview"


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    missing = _run("analyze", str(tmp_path / "nope.json"))
    assert missing.returncode == 1
    assert "cannot read" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n{not json\n')
    out = _run("analyze", str(bad))
    assert out.returncode == 1
    assert "line=2" in out.stderr
    window = _run("analyze", str(EXAMPLE), "--window", "lots")
    assert window.returncode == 2
    assert "window" in window.stderr
    session = _run("analyze", str(EXAMPLE), "--session", "5")
    assert session.returncode == 2
