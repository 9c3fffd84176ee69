"""Tests of ``abridged analyze``, run as a real process on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent-session.jsonl"
CLAUDE_CODE = Path(__file__).resolve().parents[1] / "formats" / "data" / "claude_code.jsonl"


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
    assert "line 2" in out.stderr and "bad.jsonl" in out.stderr
    window = _run("analyze", str(EXAMPLE), "--window", "lots")
    assert window.returncode == 2
    assert "window" in window.stderr
    session = _run("analyze", str(EXAMPLE), "--session", "5")
    assert session.returncode == 2


def test_analyze_shares_the_other_commands_options_and_errors(tmp_path: Path) -> None:
    empty = _run("analyze", str(EXAMPLE), "--window", "")
    assert empty.returncode == 2 and "--window ''" in empty.stderr
    small = _run("analyze", str(EXAMPLE), "--window", "100")
    assert small.returncode == 2 and "--window 100" in small.stderr
    assert "context_window" not in small.stderr  # the option's name, not the setting's
    unknown = _run("analyze", str(EXAMPLE), "--input-format", "yaml")
    assert unknown.returncode == 2 and "--input-format 'yaml'" in unknown.stderr
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    for name in ("openai", "openai-chat"):  # one set of names, input or output
        out = _run("analyze", str(chat), "--input-format", name, "--window", "16k", "--json")
        assert out.returncode == 0, out.stderr


def test_piped_output_does_not_wrap_long_paths(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "session-with-a-long-name.jsonl"
    deep.parent.mkdir(parents=True)
    deep.write_text(CLAUDE_CODE.read_text(encoding="utf-8"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["ABRIDGED_DB"] = str(tmp_path / "replay.db")
    out = subprocess.run(
        [sys.executable, "-m", "abridged", "replay", str(deep), "--window", "16k"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert str(deep) in out.stdout  # on one line, whole
