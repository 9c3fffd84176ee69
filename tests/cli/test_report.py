"""The HTML report of ``abridged replay --report``: self-contained, the plot, the summaries."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any

from abridged.cli.report import render_report
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


def _data(summary: str, steps: int = 3) -> dict[str, Any]:
    return {
        "file": "x.jsonl",
        "format": "openai-chat",
        "summarizer": "extractive",
        "steps": [
            {
                "session": "s<1>",
                "call": n,
                "context_tokens": 1000 * n,
                "context_messages": 2 * n,
                "action": "compact" if n == steps else "send",
                "pruned": False,
                "tokens_before": 9000 if n == steps else None,
                "tokens_after": 1000 * n if n == steps else None,
                "cached_tokens": 0,
                "cost": None,
            }
            for n in range(1, steps + 1)
        ],
        "sessions": [
            {
                "id": "s<1>",
                "model": "m",
                "limits": {"context_window": 16_384, "max_output": 4_096},
                "budget": {
                    "input_budget": 11_264,
                    "trigger": 9_011,
                    "target": 5_632,
                    "keep_recent": 2_816,
                },
                "compactions": [
                    {
                        "call": steps,
                        "trigger": "tokens",
                        "tokens_before": 9000,
                        "tokens_after": 3000,
                        "summarizer": "extractive",
                        "truncated": False,
                        "summary": summary,
                    }
                ],
                "totals": {
                    "calls": steps,
                    "prunes": 0,
                    "compactions": 1,
                    "max_context_tokens": 3000,
                    "overflows": 0,
                },
            }
        ],
        "totals": {
            "calls": steps,
            "prunes": 0,
            "compactions": 1,
            "max_context_tokens": 3000,
            "overflows": 0,
            "cache_hit": 0.0,
            "cost": None,
        },
    }


def test_transcript_text_is_escaped() -> None:
    nasty = '<script>alert(1)</script> <img src="https://evil.example/x.png"> & </pre>'
    html = render_report(_data(nasty))
    assert "<script>" not in html and "<img" not in html
    assert escape(nasty) in html
    assert 'id="s&lt;1&gt;"' in html
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", html)
