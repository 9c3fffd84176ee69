"""``abridged replay``: a recorded session replayed call by call, shown in the terminal.

The replay itself is the runtime's (``abridged.runtime.replay``: every message stored, every
compaction and prune committed through the store's single writer, exactly as a live
conversation is). This module turns the command's options into ``ReplayOptions``, shows a
progress bar, and prints the ``ReplayReport``: ``--json`` as one object, else a timeline and the
totals; ``--report`` writes the HTML page (``abridged.runtime.replay.report``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from abridged.cli.common import (
    BAD_INPUT,
    CliError,
    Knobs,
    check_database,
    fail,
    join,
    load,
    make_summarizer,
    plural,
    setting_error,
    size,
    stderr,
    stdout,
)
from abridged.core.budget import format_token_size
from abridged.errors import AbridgedError, SettingError
from abridged.formats.transcripts import Transcript
from abridged.runtime.replay import ReplayOptions, count_calls, replay_transcripts
from abridged.runtime.replay.report import describe_stopped, summary_notes, write_report
from abridged.runtime.replay.schema import ReplayReport, SessionReport, StepReport

#: Colours of a context size against the trigger (the chat meter uses the same rule).
AMBER_SHARE = 0.75


def meter_colour(tokens: int, trigger: int) -> str:
    """``green`` below 75% of the trigger, ``yellow`` from 75%, ``red`` at the trigger."""
    if tokens >= trigger:
        return "red"
    return "yellow" if tokens >= AMBER_SHARE * trigger else "green"


async def run_replay_async(
    transcripts: list[Transcript],
    *,
    db: str | None,
    knobs: Knobs,
    summarizer: str = "extractive",
    base_url: str | None = None,
    window: str | None = None,
    max_output: str | None = None,
    model: str | None = None,
    progress: bool = False,
    lines: bool = False,
    path: str = "",
    summary_window: str | None = None,
    summary_temperature: float | None = None,
) -> ReplayReport:
    """Replay ``transcripts`` with the command's options into the store at ``db`` (a
    temporary SQLite file when ``None``). ``progress``: a bar on a terminal; ``lines``: a line
    per finished session on stderr when it is not one."""
    made, name = make_summarizer(summarizer, base_url)
    own_window = size(summary_window, "summary_window")
    options = ReplayOptions(
        budget=knobs.budget(),
        settings=knobs.compaction_settings(),
        summarizer=made,
        summarizer_name=name,
        window=size(window, "window"),
        max_output=size(max_output, "max_output"),
        model=model,
        summary_window=own_window,
        summary_options={} if summary_temperature is None else {"temperature": summary_temperature},
    )
    settings = {
        "summary_window": own_window,
        "summary_temperature": summary_temperature,
        "window": window,
        "max_output": max_output,
        "trigger": knobs.trigger,
        "target": knobs.target,
        "keep_recent": knobs.keep_recent,
        "summary_max": knobs.summary_max,
        "prune": knobs.prune,
        "compaction": knobs.compaction,
    }
    bar = _Bar(count_calls(transcripts), lines=lines) if progress or lines else None
    if bar is None:
        return await replay_transcripts(transcripts, options, db=db, path=path, settings=settings)
    bar.start()
    try:
        return await replay_transcripts(
            transcripts,
            options,
            db=db,
            path=path,
            settings=settings,
            on_step=lambda step: bar.advance(),
            on_session=lambda number, session: bar.finished(number, len(transcripts), session),
        )
    finally:
        bar.stop()


class _Bar:
    """The progress bar on stderr; when stderr is not a terminal, nothing, or with ``lines`` a
    line per finished session (``--progress``: a long replay piped to a file says how far it
    got)."""

    def __init__(self, total: int, *, lines: bool = False) -> None:
        from rich.progress import (  # noqa: PLC0415
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = stderr()
        self.progress = Progress(
            TextColumn("replaying [bold]{task.description}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("calls"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        self.task = self.progress.add_task("", total=total)
        self.console = console
        self.lines = lines and not console.is_terminal
        self.started = time.perf_counter()

    def start(self) -> None:
        self.progress.start()

    def stop(self) -> None:
        self.progress.stop()

    def describe(self, name: str) -> None:
        self.progress.update(self.task, description=name[:40])

    def advance(self) -> None:
        self.progress.advance(self.task)

    def finished(self, number: int, total: int, session: SessionReport) -> None:
        """``session 3/399 django-123: 27 calls, 13 compactions, 0 overflows (41 s so far)``."""
        if not self.lines:
            return
        t = session.totals
        status = " [stopped]" if session.stopped else ""
        self.console.print(
            f"session {number}/{total} {session.id}: {plural(t.calls, 'call')}, "
            f"{plural(t.compactions, 'compaction')}, {plural(t.overflows, 'overflow')}"
            f"{status} ({time.perf_counter() - self.started:.0f} s so far)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


# -- the terminal --------------------------------------------------------------------------------

BAR_WIDTH = 24
_ACTION_STYLE = {
    "prune": "cyan",
    "compact": "magenta",
    "recover": "bold red",
    "overflow": "bold red",
}


def _bar(tokens: int, window: int, trigger: int) -> Text:
    """A bar of ``tokens`` against the window, the trigger marked with ``┊``."""
    filled = min(BAR_WIDTH, round(BAR_WIDTH * tokens / window)) if window else 0
    mark = min(BAR_WIDTH - 1, int(BAR_WIDTH * trigger / window)) if window else BAR_WIDTH
    text = Text("█" * filled, style=meter_colour(tokens, trigger))
    rest = "".join("┊" if filled + k == mark else " " for k in range(BAR_WIDTH - filled))
    text.append(rest, style="dim")
    return text


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _action_text(step: StepReport) -> Text:
    k = format_token_size
    action = step.action
    if action == "send":
        return Text("")
    before, after = step.tokens_before, step.tokens_after
    word = {"prune": "pruned", "compact": "compacted", "recover": "recovered"}.get(action, action)
    sizes = f" {k(before)} → {k(after)}" if before is not None and after is not None else ""
    return Text(word + sizes, style=_ACTION_STYLE.get(action, ""))


def render_timeline(console: Console, session: SessionReport, steps: list[StepReport]) -> None:
    """One session's calls: context size against the window, what was done, cache and cost."""
    k = format_token_size
    window = session.limits.context_window
    trigger = session.budget.trigger if session.budget is not None else window
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("call", justify="right")
    table.add_column("context", justify="right")
    table.add_column(f"0 … {k(window)}  (┊ trigger)", no_wrap=True)
    table.add_column("action")
    table.add_column("cache", justify="right")
    priced = any(step.cost is not None for step in steps)
    if priced:
        table.add_column("cost", justify="right")
    for step in steps:
        tokens = step.context_tokens
        cache = step.cached_tokens / tokens if tokens else 0.0
        row: list[Any] = [
            str(step.call),
            k(tokens),
            _bar(tokens, window, trigger),
            _action_text(step),
            f"{cache:.0%}",
        ]
        if priced:
            row.append(_money(step.cost))
        table.add_row(*row)
    console.print(table)


def _facts(console: Console, data: ReplayReport, report: Path | None = None) -> None:
    k = format_token_size
    totals = data.totals
    sessions = data.sessions
    first = sessions[0]
    limits, budget = first.limits, first.budget
    window = limits.context_window
    facts = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    facts.add_column(style="bold")
    facts.add_column()
    if len(sessions) > 1:
        facts.add_row("sessions", f"{totals.sessions:,}")
    facts.add_row(
        "calls",
        f"{totals.calls:,} ({plural(totals.prunes, 'prune')}, "
        f"{plural(totals.compactions, 'compaction')}"
        + (
            f", {totals.recoveries:,} overflow recover" + ("y" if totals.recoveries == 1 else "ies")
            if totals.recoveries
            else ""
        )
        + ")",
    )
    overflow = totals.overflows
    if totals.hidden_prefix:
        facts.add_row(
            "hidden prefix",
            f"{k(totals.hidden_prefix)} tokens the provider counted that the transcript does "
            "not hold (its system prompt and tool definitions): counted against the budget, "
            "never compacted",
        )
    facts.add_row(
        "largest context",
        f"{k(totals.max_context_tokens)} of the {k(window)} window "
        f"(input budget {k(budget.input_budget if budget else 0)}, "
        f"trigger {k(budget.trigger if budget else 0)}, "
        f"target {k(budget.target if budget else 0)})",
    )
    facts.add_row(
        "overflows",
        Text(
            f"{overflow} (contexts over the window)",
            style="bold red" if overflow else "green",
        ),
    )
    if totals.stopped:
        stopped = [(s.id, s.stopped) for s in sessions if s.stopped is not None]
        if len(sessions) == 1:
            what = describe_stopped(stopped[0][1])
        else:
            what = (
                f"{totals.stopped:,} of {plural(len(sessions), 'session')} stopped: "
                + ", ".join(
                    f"{name} at call {s.call} (needs {k(s.tokens)} of {k(s.limit)})"
                    for name, s in stopped[:3]
                )
            )
            if len(stopped) > 3:
                what += f" and {len(stopped) - 3:,} more"
            reasons = {s.reason for _, s in stopped}
            what += f"; {next(iter(reasons))}" if len(reasons) == 1 else "; see --json"
        facts.add_row("stopped", Text(what, style="bold red"))
    facts.add_row(
        "tokens sent",
        f"{k(totals.input_tokens)} input, {k(totals.cached_tokens)} of it from the cache "
        f"(estimate, {totals.cache_hit:.0%}); {k(totals.output_tokens)} output"
        + (
            f"; the recorded run sent {k(totals.recorded_input_tokens)} input"
            if totals.recorded_input_tokens
            else ""
        ),
    )
    unpriced = join(totals.unpriced)
    if totals.cost is not None:
        facts.add_row(
            "cost (estimate)",
            _money(totals.cost) + (f" (no prices known for {unpriced})" if unpriced else ""),
        )
    else:
        facts.add_row("cost (estimate)", f"n/a: no prices known for {unpriced} (pass --model)")
    stored = [s.stored for s in sessions]
    where = data.db or "a temporary SQLite store"
    consistent = totals.stored_consistent
    facts.add_row(
        "store",
        f"{sum(s.messages for s in stored):,} messages, "
        f"{plural(sum(s.sessions for s in stored), 'session')}, "
        f"{plural(sum(s.compactions for s in stored), 'compaction')} committed in {where}"
        + ("" if consistent else " [red](the store does not match the engine)[/]"),
    )
    if data.db and len(sessions) == 1:
        facts.add_row("conversation", first.conversation_id)
    seconds = totals.seconds
    facts.add_row(
        "time",
        f"{seconds:.2f} s ({totals.calls_per_second or 0:,.0f} calls/s, "
        f"{totals.turns_per_second or 0:,.1f} turns/s)",
    )
    if report is not None:
        facts.add_row("report", str(report))
    console.print(facts)


def render(
    console: Console,
    data: ReplayReport,
    *,
    timeline: bool | None,
    report: Path | None = None,
) -> None:
    """The replay for people: the timeline (one session, or ``--timeline``), then the totals."""
    k = format_token_size
    sessions = data.sessions
    show = timeline if timeline is not None else len(sessions) == 1
    by_session: dict[str, list[StepReport]] = {}
    for step in data.steps:
        by_session.setdefault(step.session, []).append(step)
    first = sessions[0]
    limits = first.limits
    reserve = first.budget.output_reserve if first.budget is not None else None
    output = k(limits.max_output)
    if reserve is not None and reserve != limits.max_output:
        output += f" (reserving {k(reserve)})"
    console.print(
        f"[bold]replay[/] {data.file} ({data.format}): window "
        f"{k(limits.context_window)}, max output {output}, "
        f"summarizer {data.summarizer}",
        highlight=False,
        soft_wrap=True,
    )
    if show:
        for session in sessions:
            if len(sessions) > 1:
                console.print(f"\n[bold]{session.id}[/]", highlight=False)
            render_timeline(console, session, by_session.get(session.id, []))
            for c in session.compactions:
                sections = sum(1 for line in c.summary.splitlines() if line.startswith("## "))
                console.print(
                    f"  compaction at call {c.call}: {k(c.tokens_before)} → "
                    f"{k(c.tokens_after)}, summary by {c.summarizer} "
                    f"({sections} sections{', truncated' if c.truncated else ''})"
                    + escape(summary_notes(c, data.summarizer)),
                    highlight=False,
                )
            if session.stopped:
                console.print(
                    f"  [red]stopped:[/] {escape(describe_stopped(session.stopped))}",
                    highlight=False,
                )
    else:
        table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
        table.add_column("session", overflow="fold")
        for name in ("calls", "prunes", "compactions", "largest", "overflows", "cache", "cost"):
            table.add_column(name, justify="right", no_wrap=True)
        for session in sessions:
            t = session.totals
            table.add_row(
                Text(
                    session.id + (" (stopped)" if session.stopped else ""),
                    style="red" if session.stopped else "",
                ),
                str(t.calls),
                str(t.prunes),
                str(t.compactions),
                k(t.max_context_tokens),
                Text(str(t.overflows), style="bold red" if t.overflows else ""),
                f"{t.cache_hit:.0%}",
                _money(t.cost),
            )
        console.print(table)
    console.print()
    _facts(console, data, report)


def run_replay(
    path: Path,
    *,
    format: str | None = None,
    session: int | None = None,
    db: str | None = None,
    knobs: Knobs | None = None,
    summarizer: str = "extractive",
    base_url: str | None = None,
    window: str | None = None,
    max_output: str | None = None,
    model: str | None = None,
    report: Path | None = None,
    as_json: bool = False,
    timeline: bool | None = None,
    progress_lines: bool = False,
    summary_window: str | None = None,
    summary_temperature: float | None = None,
) -> int:
    """Run the command; returns the exit code (0 ok, 1 unreadable input or failure, 2 usage).
    ``progress_lines``: a line per session on stderr when it is not a terminal."""
    try:
        check_database(db)
        transcripts = load(path, format, session)
        data = asyncio.run(
            run_replay_async(
                transcripts,
                db=db,
                knobs=knobs or Knobs(),
                summarizer=summarizer,
                base_url=base_url,
                window=window,
                max_output=max_output,
                model=model,
                progress=True,
                lines=progress_lines,
                path=str(path),
                summary_window=summary_window,
                summary_temperature=summary_temperature,
            )
        )
        if report is not None:
            try:
                write_report(data, report)
            except OSError as exc:
                raise CliError(f"cannot write {report}: {exc.strerror or exc}") from exc
    except CliError as exc:
        return fail(exc)
    except SettingError as exc:
        return fail(setting_error(exc))
    except AbridgedError as exc:
        return fail(CliError(str(exc), BAD_INPUT))
    if as_json:
        sys.stdout.write(data.model_dump_json() + "\n")
    else:
        render(stdout(), data, timeline=timeline, report=report)
    if report is not None and as_json:
        stderr().print(f"report written to {report}", highlight=False)
    return _outcome(data)


def _outcome(data: ReplayReport) -> int:
    """0 when every session replayed within its window; else 1, with what went wrong on stderr."""
    totals = data.totals
    problems = []
    if totals.stopped:
        first = next(s for s in data.sessions if s.stopped is not None)
        assert first.stopped is not None
        where = f"{first.id} at " if len(data.sessions) > 1 else ""
        problems.append(
            f"the replay stopped in {totals.stopped:,} of "
            f"{plural(len(data.sessions), 'session')} "
            f"({where}{describe_stopped(first.stopped)})"
        )
    if totals.overflows:
        problems.append(f"{plural(totals.overflows, 'context')} over the window")
    if not problems:
        return 0
    return fail(CliError("; ".join(problems)))
