"""Tests of ``bench/frameworks.py``: a session split into agent runs, the scoring of what was
sent, and a tiny run of every framework as a subprocess."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from abridged.core.model import Message, ToolCall, ToolResult

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _bench() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    loaded = sys.modules.get("bench_frameworks")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("bench_frameworks", BENCH / "frameworks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


F = _bench()


def _step(k: int) -> list[Message]:
    call = ToolCall(f"c{k}", "bash", json.dumps({"command": f"ls {k}"}))
    return [
        Message("assistant", (call,)),
        Message("tool", (ToolResult(f"c{k}", "bash", f"out {k}"),)),
    ]


def test_a_session_becomes_runs_started_by_user_messages_and_ended_by_plain_replies() -> None:
    messages = [
        Message.system("s"),
        Message.user("task"),
        *_step(0),
        *_step(1),
        Message.user("a planted canary"),
        *_step(2),
        Message.assistant("done, no call"),
        *_step(3),
    ]
    runs = F.runs_of(messages)
    assert [r.user for r in runs] == ["task", "a planted canary", "Continue."]
    assert [len(r.steps) for r in runs] == [2, 2, 1]
    assert runs[0].steps[1].outputs == ["out 1"] and runs[1].steps[1].calls == []
    player = F.Player(runs)
    player.start(0)
    first = player.reply(None)
    assert first.tool_calls and player.bash("ls 0") == "out 0"
    player.reply(None)
    assert player.bash("x") == "out 1"
    assert player.reply(None).text == "OK."  # the run's steps are over


def test_a_tiny_run_of_every_framework_reports_its_figures(
    swebench_path: Path, canaries_path: Path, tmp_path: Path
) -> None:
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "frameworks.py"),
            "--data",
            str(swebench_path),
            "--canaries",
            str(canaries_path),
            "--limit",
            "1",
            "--placements",
            "tool",
            "--json",
            "--results",
            str(results),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])["frameworks"]
    assert set(figures) == {"langchain", "pydantic_ai", "openai_agents"}
    for variants in figures.values():
        assert set(variants) == {"builtin", "abridged"}
        abridged = variants["abridged"]
        assert abridged["requests"] > 0
        assert abridged["pairing_errors"] == 0 and abridged["over_budget"] == 0
        for key in ("cache_read_share", "survival_after_5"):
            assert key in abridged
    assert "## frameworks" in results.read_text(encoding="utf-8")
