"""``abridged analyze``: where a transcript's tokens go, printed as tables or one JSON object."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from abridged.cli.common import CliError, fail, limits_for, load, setting_error, stdout
from abridged.core.budget import Budget, compute_budget, format_token_size
from abridged.core.tokens import TokenCounter
from abridged.core.windows import ModelLimits
from abridged.engine.analysis import TranscriptAnalysis, analyze_messages
from abridged.engine.prune import PruneSettings
from abridged.errors import SettingError
from abridged.formats.transcripts import Transcript


def _quantiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"median": None, "p90": None}
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 4),
        "p90": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 4),
    }


def analysis_to_dict(
    transcript: Transcript, analysis: TranscriptAnalysis, limits: ModelLimits
) -> dict[str, Any]:
    """One transcript's analysis as plain JSON-able data."""
    budget = analysis.budget
    return {
        "id": transcript.id,
        "format": transcript.source_format,
        "model": transcript.meta.get("model"),
        "messages": analysis.messages,
        "turns": analysis.turns,
        "steps": analysis.steps,
        "tokens_by_category": analysis.categories,
        "estimated_total_tokens": analysis.total_tokens,
        "calls": len(analysis.calls),
        "peak_context_tokens": analysis.peak_context,
        "estimate_error": {
            "cold": _quantiles(analysis.errors("cold")),
            "hybrid": _quantiles(analysis.errors("hybrid")),
        },
        "counter": analysis.counter_source,
        "limits": {
            "context_window": limits.context_window,
            "max_output": limits.max_output,
            "source": limits.source,
            "known": limits.known,
        },
        "budget": None
        if budget is None
        else {
            "input_budget": budget.input_budget,
            "trigger": budget.trigger,
            "target": budget.target,
            "keep_recent": budget.keep_recent,
        },
        "first_trigger_call": analysis.first_trigger_call,
        "calls_over_trigger": analysis.calls_over_trigger,
        "calls_over_budget": analysis.calls_over_budget,
        "prunable_tokens": analysis.prunable_tokens,
        "tools": [
            {"name": t.name, "calls": t.calls, "result_tokens": t.result_tokens}
            for t in analysis.tools
        ],
    }


def _render(console: Console, data: dict[str, Any]) -> None:
    k = format_token_size
    limits = data["limits"]
    window = f"{k(limits['context_window'])} ({limits['source']})"
    if not limits["known"]:
        window += " [yellow]unknown model: pass --window[/]"
    console.print(
        f"[bold]{data['id']}[/] ({data['format']}, model {data['model'] or '?'}): "
        f"{data['messages']} messages, {data['turns']} turns, {data['steps']} steps; "
        f"window {window}"
    )
    total = max(1, data["estimated_total_tokens"])
    table = Table("where the tokens go", "tokens", "share", title=None, show_edge=False)
    for name, tokens in data["tokens_by_category"].items():
        table.add_row(name.replace("_", " "), k(tokens), f"{100 * tokens / total:.0f}%")
    table.add_row("[bold]total[/]", f"[bold]{k(total)}[/]", "100%")
    console.print(table)

    err = data["estimate_error"]
    budget = data["budget"]
    facts = Table(show_header=False, show_edge=False, box=None)
    facts.add_row("model calls", str(data["calls"]))
    facts.add_row("peak context", k(data["peak_context_tokens"]))
    if err["cold"]["median"] is not None:
        facts.add_row(
            f"estimate error vs reports ({data['counter']})",
            f"cold median {err['cold']['median']:.1%}, hybrid median "
            f"{err['hybrid']['median']:.1%} (p90 {err['hybrid']['p90']:.1%})",
        )
    if budget is not None:
        facts.add_row(
            "budget",
            f"input {k(budget['input_budget'])}, trigger {k(budget['trigger'])}, "
            f"target {k(budget['target'])}, keep recent {k(budget['keep_recent'])}",
        )
        first = data["first_trigger_call"]
        facts.add_row(
            "compaction",
            "never triggered"
            if first is None
            else f"first triggered at call {first}; {data['calls_over_trigger']} calls over the "
            f"trigger, {data['calls_over_budget']} over the input budget without abridged",
        )
        facts.add_row("old tool output prunable at the end", k(data["prunable_tokens"]))
    console.print(facts)
    if data["tools"]:
        tools = Table("tool", "calls", "result tokens", show_edge=False)
        for tool in data["tools"][:8]:
            tools.add_row(tool["name"], str(tool["calls"]), k(tool["result_tokens"]))
        console.print(tools)


def run_analyze(
    path: Path,
    *,
    format: str | None = None,
    window: str | None = None,
    max_output: str | None = None,
    model: str | None = None,
    session: int | None = None,
    as_json: bool = False,
) -> int:
    """Run the command; returns the exit code (0 ok, 1 bad input, 2 bad usage)."""
    results = []
    try:
        transcripts = load(path, format, session)
        for transcript in transcripts:
            name = model or str(transcript.meta.get("model") or "unknown")
            limits = limits_for(name, window, max_output)
            counter = TokenCounter(model=name)
            budget: Budget = compute_budget(limits.context_window, limits.max_output)
            # Protect what a cut would keep: pruning only what compaction would otherwise drop.
            prune = PruneSettings(protect_recent_tokens=budget.keep_recent)
            analysis = analyze_messages(
                transcript.messages, counter=counter, budget=budget, prune_settings=prune
            )
            results.append(analysis_to_dict(transcript, analysis, limits))
    except CliError as exc:
        return fail(exc)
    except SettingError as exc:
        return fail(setting_error(exc))
    if as_json:
        payload: Any = results[0] if len(results) == 1 else {"transcripts": results}
        sys.stdout.write(json.dumps(payload) + "\n")
        return 0
    console = stdout()
    for data in results:
        _render(console, data)
        console.print()
    return 0
