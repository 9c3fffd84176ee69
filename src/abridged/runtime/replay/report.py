"""The HTML report of a replay: one self-contained page, plots as inline SVG, no external assets.

``render_report(report)`` takes a ``ReplayReport`` (what ``--json`` prints) and returns the
page: the settings and totals, then per session a plot of the context size at each model call
against the window, the input budget, the trigger and the target (prunes and compactions marked,
a compaction drawn from its size before to its size after), the timeline as a table, and the
text of every compaction summary. Everything is inline (CSS, SVG); every value from the
transcript is escaped. ``describe_stopped`` and ``summary_notes`` are the words the terminal
view shares with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from abridged.core.budget import format_token_size
from abridged.runtime.replay.schema import (
    CompactionReport,
    ReplayReport,
    SessionReport,
    StepReport,
    StoppedReport,
    Totals,
)

__all__ = ["describe_stopped", "render_report", "summary_notes", "write_report"]

WIDTH, HEIGHT = 960, 320
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 16, 40

COLOURS = {
    "context": "#2563eb",
    "window": "#dc2626",
    "budget": "#ea580c",
    "trigger": "#d97706",
    "target": "#16a34a",
    "prune": "#0891b2",
    "compact": "#9333ea",
    "recover": "#dc2626",
}

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0;
       color: #1f2937; background: #f8fafc; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; }
.sub { color: #6b7280; margin: 0 0 16px; }
.tiles { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.tile { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 14px;
        min-width: 120px; }
.tile b { display: block; font-size: 20px; } .tile span { color: #6b7280; font-size: 12px; }
.bad b { color: #dc2626; } .good b { color: #16a34a; }
svg { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; max-width: 100%;
      height: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #4b5563; }
table { border-collapse: collapse; background: #fff; font-size: 13px; margin: 8px 0; }
th, td { padding: 3px 10px; border-bottom: 1px solid #f1f5f9; text-align: right; }
th { background: #f1f5f9; } td.l, th.l { text-align: left; }
tr.prune td { background: #ecfeff; } tr.compact td { background: #faf5ff; }
tr.recover td, tr.overflow td { background: #fef2f2; }
details { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; margin: 8px 0;
          padding: 8px 12px; }
summary { cursor: pointer; font-weight: 600; }
pre { white-space: pre-wrap; word-break: break-word; font-size: 12.5px; background: #f8fafc;
      padding: 10px; border-radius: 6px; }
"""


def _k(tokens: int | None) -> str:
    return "" if tokens is None else format_token_size(int(tokens))


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def describe_stopped(stopped: StoppedReport) -> str:
    """``call 1: <reason> (needs 2.1k tokens; input budget 1.8k, window 4k)``."""
    k = format_token_size
    return (
        f"call {stopped.call}: {stopped.reason} (needs {k(stopped.tokens)} tokens; "
        f"input budget {k(stopped.limit)}, window {k(stopped.window)})"
    )


def summary_notes(compaction: CompactionReport, summarizer: str) -> str:
    """What a compaction's summary line adds to "summary by X" in the views: the fallback and
    its reason when the model's summary was replaced, and, for a model summary, the time it took
    and its usage, or that the provider reported none (llama.cpp streams send none)."""
    notes = []
    reason = compaction.fallback_reason
    if reason and compaction.summarizer == summarizer:  # the model's, a part lost
        notes.append(f"partly: {reason}")
    elif reason:
        notes.append(f"fallback from {summarizer}: {reason}")
    if summarizer != "extractive":
        notes.append(f"{compaction.seconds:.1f} s")
        usage = compaction.summary_usage
        if usage:
            notes.append(f"usage {usage['input']:,} in, {usage['output']:,} out")
        else:
            notes.append("usage not reported")
    return f"; {'; '.join(notes)}" if notes else ""


def plot(session: SessionReport, steps: Sequence[StepReport]) -> str:
    """The SVG plot of one session: context per call against window, budget, trigger, target."""
    window = session.limits.context_window
    budget = session.budget
    peak = max([s.context_tokens for s in steps] + [0])
    befores = [s.tokens_before or 0 for s in steps]
    top = max(window, peak, *befores) if befores else max(window, peak)
    calls = max(1, len(steps))
    inner_w = WIDTH - LEFT - RIGHT
    inner_h = HEIGHT - TOP - BOTTOM

    def x(call: float) -> float:
        return LEFT + (inner_w * (call - 1) / (calls - 1) if calls > 1 else inner_w / 2)

    def y(tokens: float) -> float:
        return TOP + inner_h * (1 - tokens / top) if top else TOP + inner_h

    out = [
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="context size per model call">'
    ]
    # grid and y axis: ticks at multiples of a power-of-two number of k (4k, 8k, 12k, 16k)
    step = 1_024
    while top / step > 6:
        step *= 2
    tokens = 0
    while tokens <= top:
        yy = y(tokens)
        out.append(
            f'<line x1="{LEFT}" x2="{LEFT + inner_w}" y1="{yy:.1f}" y2="{yy:.1f}" '
            'stroke="#f1f5f9"/>'
            f'<text x="{LEFT - 8}" y="{yy + 4:.1f}" text-anchor="end">{_k(tokens)}</text>'
        )
        tokens += step
    ticks = sorted({1, calls, *range(1, calls + 1, max(1, calls // 10))})
    for call in ticks:
        out.append(
            f'<text x="{x(call):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{call}</text>'
        )
    out.append(
        f'<text x="{LEFT + inner_w / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle">'
        "model call</text>"
    )
    lines: list[tuple[str, int, str, str]] = [("window", window, "window", "6 3")]
    if budget is not None:
        lines += [
            ("budget", budget.input_budget, "input budget", "2 3"),
            ("trigger", budget.trigger, "trigger", "6 3"),
            ("target", budget.target, "target", "6 3"),
        ]
    for key, value, label, dash in lines:
        yy = y(value)
        out.append(
            f'<line class="{key}-line" x1="{LEFT}" x2="{LEFT + inner_w}" y1="{yy:.1f}" '
            f'y2="{yy:.1f}" stroke="{COLOURS[key]}" stroke-width="1.5" stroke-dasharray="{dash}"/>'
            f'<text x="{LEFT + inner_w + 6}" y="{yy + 4:.1f}" style="fill:{COLOURS[key]}">'
            f"{label} {_k(value)}</text>"
        )
    # the context size, with each compaction drawn from its size before to its size after
    points: list[str] = []
    for s in steps:
        call, tokens = s.call, s.context_tokens
        if s.tokens_before is not None and s.action != "send":
            points.append(f"{x(call):.1f},{y(s.tokens_before):.1f}")
        points.append(f"{x(call):.1f},{y(tokens):.1f}")
    if points:
        out.append(
            f'<polyline class="context-line" points="{" ".join(points)}" fill="none" '
            f'stroke="{COLOURS["context"]}" stroke-width="2"/>'
        )
    for s in steps:
        call, tokens, action = s.call, s.context_tokens, s.action
        colour = COLOURS.get(action, COLOURS["context"])
        radius = 2.5 if action == "send" else 5
        title = f"call {call}: {_k(tokens)}"
        if action != "send" and s.tokens_before is not None:
            title += f" ({action}: {_k(s.tokens_before)} → {_k(s.tokens_after)})"
        out.append(
            f'<circle class="{escape(action)}" cx="{x(call):.1f}" cy="{y(tokens):.1f}" '
            f'r="{radius}" fill="{colour}"><title>{escape(title)}</title></circle>'
        )
    legend = [("prune", "prune"), ("compact", "compaction")]
    if any(s.action in ("recover", "overflow") for s in steps):
        legend.append(("recover", "overflow recovery"))
    for n, (key, label) in enumerate(reversed(legend)):
        out.append(
            f'<text x="{LEFT + inner_w + 6}" y="{TOP + inner_h - 8 - 16 * n}" '
            f'style="fill:{COLOURS[key]}">● {label}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _tile(value: str, label: str, css: str = "") -> str:
    return f'<div class="tile {css}"><b>{escape(value)}</b><span>{escape(label)}</span></div>'


def _totals(totals: Totals) -> str:
    tiles = [
        _tile(f"{totals.calls:,}", "model calls"),
        _tile(f"{totals.prunes:,}", "prunes"),
        _tile(f"{totals.compactions:,}", "compactions"),
        _tile(_k(totals.max_context_tokens), "largest context"),
        _tile(
            str(totals.overflows),
            "contexts over the window",
            "bad" if totals.overflows else "good",
        ),
        _tile(f"{totals.cache_hit:.0%}", "cache hit (estimate)"),
        _tile(_money(totals.cost), "cost (estimate)"),
    ]
    if totals.hidden_prefix:
        tiles.append(_tile(_k(totals.hidden_prefix), "hidden prefix (system, tools)"))
    if totals.recorded_input_tokens:
        tiles.append(_tile(_k(totals.input_tokens), "input tokens sent"))
        tiles.append(_tile(_k(totals.recorded_input_tokens), "input tokens, recorded run"))
    return '<div class="tiles">' + "".join(tiles) + "</div>"


def _timeline(steps: Sequence[StepReport]) -> str:
    rows = [
        '<table><tr><th>call</th><th>context</th><th>messages</th><th class="l">action</th>'
        "<th>before</th><th>after</th><th>cache</th><th>cost</th></tr>"
    ]
    for s in steps:
        tokens = s.context_tokens
        cache = s.cached_tokens / tokens if tokens else 0.0
        action = s.action + (" (+ prune)" if s.action == "compact" and s.pruned else "")
        messages = s.context_messages if s.context_messages is not None else ""
        rows.append(
            f'<tr class="{escape(s.action)}"><td>{s.call}</td><td>{_k(tokens)}</td>'
            f"<td>{messages}</td>"
            f'<td class="l">{escape(action if s.action != "send" else "")}</td>'
            f"<td>{_k(s.tokens_before)}</td><td>{_k(s.tokens_after)}</td>"
            f"<td>{cache:.0%}</td><td>{_money(s.cost)}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _summaries(session: SessionReport, open_them: bool, summarizer: str) -> str:
    if not session.compactions:
        return "<p class=sub>No compaction: pruning kept this session under the trigger.</p>"
    out = []
    for n, c in enumerate(session.compactions, 1):
        flags = ", truncated" if c.truncated else ""
        if c.emergency:
            flags += f", emergency ({c.emergency})"
        head = (
            f"Compaction {n} at call {c.call}: {_k(c.tokens_before)} → "
            f"{_k(c.tokens_after)} ({c.trigger}; summary by {c.summarizer}{flags}"
            f"{summary_notes(c, summarizer)})"
        )
        out.append(
            f'<details class="compaction-summary"{" open" if open_them else ""}>'
            f"<summary>{escape(head)}</summary><pre>{escape(c.summary)}</pre></details>"
        )
    return "".join(out)


def render_report(report: ReplayReport) -> str:
    """The whole page (see the module docstring)."""
    sessions = report.sessions
    by_session: dict[str, list[StepReport]] = {}
    for step in report.steps:
        by_session.setdefault(step.session, []).append(step)
    limits = sessions[0].limits if sessions else None
    budget = sessions[0].budget if sessions else None
    settings = [
        f"window {_k(limits.context_window if limits is not None else None)}",
        f"max output {_k(limits.max_output if limits is not None else None)}",
        f"input budget {_k(budget.input_budget if budget is not None else None)}",
        f"trigger {_k(budget.trigger if budget is not None else None)}",
        f"target {_k(budget.target if budget is not None else None)}",
        f"keep recent {_k(budget.keep_recent if budget is not None else None)}",
        f"summarizer {report.summarizer}",
    ]
    title = f"abridged replay: {Path(report.file).name}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="sub">{escape(report.file)} ({escape(str(report.format))}); '
        f"{escape(', '.join(settings))}</p>",
        _totals(report.totals),
    ]
    many = len(sessions) > 1
    for session in sessions:
        parts.append(_session(session, by_session.get(session.id, []), many, report.summarizer))
    parts.append(
        '<p class="sub">Made by <code>abridged replay</code>. Cache hits are estimated: the '
        "prefix identical to the previous call's context is read from the cache. Costs use the "
        "model's list prices when they are known.</p></main></body></html>"
    )
    return "\n".join(parts) + "\n"


def _session(session: SessionReport, steps: list[StepReport], many: bool, summarizer: str) -> str:
    t = session.totals
    parts = [
        f'<section class="session" id="{escape(session.id, quote=True)}">',
        f"<h2>{escape(session.id)}</h2>"
        f'<p class="sub">model {escape(str(session.model or "?"))}; '
        f"{_n(t.calls, 'call')}, {_n(t.prunes, 'prune')}, "
        f"{_n(t.compactions, 'compaction')}, largest context "
        f"{_k(t.max_context_tokens)}, {t.overflows} over the window</p>",
        plot(session, steps),
        "<h3>Compaction summaries</h3>",
        _summaries(session, open_them=not many, summarizer=summarizer),
        f"<details{'' if many else ' open'}><summary>Timeline ({len(steps)} calls)</summary>"
        f"{_timeline(steps)}</details>",
    ]
    if session.stopped is not None:
        parts.append(f"<p><b>Stopped:</b> {escape(describe_stopped(session.stopped))}</p>")
    parts.append("</section>")
    return "\n".join(parts)


def write_report(report: ReplayReport, path: Path) -> None:
    """Write the page to ``path``, creating its folder (``build/`` for ``make run``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(report), encoding="utf-8")
