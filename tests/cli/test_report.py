"""The HTML report of ``abridged replay --report``: self-contained, the plot, the summaries."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

from abridged.runtime.replay.report import render_report
from abridged.runtime.replay.schema import ReplayReport
from tests.cli.conftest import EXAMPLE, Run


def test_the_report_is_self_contained_with_plot_and_summaries(cli: Run, tmp_path: Path) -> None:
    page = tmp_path / "build" / "replay-report.html"  # its folder is created, as for make run
    out = cli("replay", EXAMPLE, "--window", "16k", "--report", page, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    # nothing is fetched: no external scripts, styles, images or fonts
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, flags=re.I)
    assert "<link" not in html and "<script" not in html and "@import" not in html
    assert "url(" not in html
    # the plot: one <svg> with the window, input budget, trigger and target lines
    assert html.count("<svg") == 1
    svg = html[html.index("<svg") : html.index("</svg>")]
    budget = data["sessions"][0]["budget"]
    for key, label in (
        ("window", "window 16k"),
        ("budget", "input budget"),
        ("trigger", "trigger"),
        ("target", "target"),
    ):
        assert f'class="{key}-line"' in svg
        assert label in svg
    assert 'class="context-line"' in svg
    # one point per model call, compactions and prunes marked
    assert svg.count("<circle") == data["totals"]["calls"]
    assert svg.count('class="compact"') == data["totals"]["compactions"]
    # the lines sit where the budget says: trigger above target, both below the window
    ys = {
        key: float(re.search(rf'class="{key}-line"[^>]*y1="([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
        for key in ("window", "trigger", "target")
    }
    assert ys["window"] < ys["trigger"] < ys["target"]
    assert budget["trigger"] > budget["target"]
    # the compaction summaries, escaped, in full
    summaries = [c["summary"] for c in data["sessions"][0]["compactions"]]
    assert summaries
    for summary in summaries:
        assert escape(summary) in html
    assert "report written to" in out.stderr


def _data(summary: str, steps: int = 3) -> ReplayReport:
    totals = {
        "calls": steps,
        "turns": 1,
        "messages": 2 * steps,
        "prunes": 0,
        "compactions": 1,
        "recoveries": 0,
        "max_context_tokens": 3000,
        "overflows": 0,
        "over_budget": 0,
        "input_tokens": 6000,
        "cached_tokens": 0,
        "cache_hit": 0.0,
        "output_tokens": 0,
        "cost": None,
        "recorded_input_tokens": None,
        "seconds": 0.1,
        "stopped": 0,
        "hidden_prefix": 0,
    }
    return ReplayReport.model_validate(
        {
            "file": "x.jsonl",
            "format": "openai-chat",
            "summarizer": "extractive",
            "db": None,
            "settings": {},
            "steps": [
                {
                    "session": "s<1>",
                    "call": n,
                    "index": 2 * n,
                    "context_tokens": 1000 * n,
                    "context_messages": 2 * n,
                    "action": "compact" if n == steps else "send",
                    "pruned": False,
                    "tokens_before": 9000 if n == steps else None,
                    "tokens_after": 1000 * n if n == steps else None,
                    "cached_tokens": 0,
                    "output_tokens": 0,
                    "cost": None,
                    "recorded_context_tokens": None,
                    "over_budget": False,
                    "over_window": False,
                    "events": [],
                }
                for n in range(1, steps + 1)
            ],
            "sessions": [
                {
                    "id": "s<1>",
                    "format": "openai-chat",
                    "model": "m",
                    "limits": {
                        "context_window": 16_384,
                        "max_output": 4_096,
                        "source": "override",
                        "known": False,
                        "pricing": None,
                    },
                    "budget": {
                        "input_budget": 11_264,
                        "trigger": 9_011,
                        "target": 5_632,
                        "keep_recent": 2_816,
                        "summary_max": 2_252,
                        "output_reserve": 4_096,
                    },
                    "conversation_id": "c",
                    "stored": {
                        "conversation_id": "c",
                        "messages": 2 * steps,
                        "sessions": 2,
                        "compactions": 1,
                        "context_messages": 2,
                        "carry_from": 3,
                        "consistent": True,
                    },
                    "stopped": None,
                    "compactions": [
                        {
                            "call": steps,
                            "trigger": "tokens",
                            "emergency": None,
                            "tokens_before": 9000,
                            "tokens_after": 3000,
                            "messages_before": 6,
                            "messages_after": 3,
                            "first_kept": 4,
                            "summarizer": "extractive",
                            "truncated": False,
                            "fallback_reason": None,
                            "summary_usage": None,
                            "seconds": 0.01,
                            "summary": summary,
                        }
                    ],
                    "totals": totals,
                }
            ],
            "totals": {
                **totals,
                "sessions": 1,
                "unpriced": ["m"],
                "calls_per_second": None,
                "turns_per_second": None,
                "stored_consistent": True,
            },
        }
    )


def test_transcript_text_is_escaped() -> None:
    nasty = '<script>alert(1)</script> <img src="https://evil.example/x.png"> & </pre>'
    html = render_report(_data(nasty))
    assert "<script>" not in html and "<img" not in html
    assert escape(nasty) in html
    assert 'id="s&lt;1&gt;"' in html
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", html)
