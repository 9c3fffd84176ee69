"""``abridged replay``: a recorded session replayed call by call through the engine and the store.

Each model call of the transcript gets the context abridged would have sent
(``ContextManager.areplay``: pruning, compaction and the emergency path, with the provider's
recorded usage as long as the context is the recorded one), as if the model had produced the
recorded replies. Every message is written to the store as it arrives, and every compaction and
prune is committed through the store's single writer, exactly as a live conversation is. The
result is one plain-data object (``--json`` prints it; ``abridged.cli.report`` turns it into the
HTML page; the terminal gets a timeline and the totals).

Per call it records the context size, what was done (``send``, ``prune``, ``compact``,
``recover``), the tokens before and after, an estimate of the prompt-cache hit (the prefix
identical to the previous call's context is read from the cache) and, when the model's prices
are known, an estimate of the call's cost.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
    limits_for,
    load,
    make_summarizer,
    plural,
    setting_error,
    size,
    stderr,
    stdout,
    summary_notes,
)
from abridged.core.budget import Budget, format_token_size
from abridged.core.model import Message, usage_to_dict
from abridged.core.protocols import ChatModel, Summarizer
from abridged.core.turns import head_length, split_turns
from abridged.core.windows import ModelLimits, Pricing
from abridged.engine.compaction import CompactionHooks, CompactionResult
from abridged.engine.events import (
    CompactionEnded,
    CompactionStarted,
    Event,
    OverflowRecovered,
    Pruned,
)
from abridged.errors import AbridgedError, ContentionError, ContextOverflowError, SettingError
from abridged.formats.transcripts import Transcript
from abridged.runtime.context_manager import ContextManager
from abridged.runtime.history import compaction_record, seq_at
from abridged.store import NewMessage, Store

#: Colours of a context size against the trigger (the chat meter uses the same rule).
AMBER_SHARE = 0.75


def meter_colour(tokens: int, trigger: int) -> str:
    """``green`` below 75% of the trigger, ``yellow`` from 75%, ``red`` at the trigger."""
    if tokens >= trigger:
        return "red"
    return "yellow" if tokens >= AMBER_SHARE * trigger else "green"


@dataclass(slots=True)
class _Session:
    """What one transcript's replay produced (turned into plain data by ``to_dict``)."""

    transcript: Transcript
    limits: ModelLimits
    conversation_id: str
    budget: Budget | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    stored: dict[str, Any] = field(default_factory=dict)
    stopped: dict[str, Any] | None = None
    seconds: float = 0.0
    hidden_prefix: int = 0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:40] or "session"


def _cost(pricing: Pricing | None, uncached: int, cached: int, output: int) -> float | None:
    if pricing is None:
        return None
    return pricing.cost(input=uncached, output=output, cache_read=cached)


def _action(events: Sequence[Event]) -> tuple[str, int | None, int | None, bool]:
    """What a call's events did: action, tokens before and after, and whether it pruned."""
    action = "send"
    before: int | None = None
    after: int | None = None
    pruned = False
    for event in events:
        if isinstance(event, CompactionStarted) and before is None:
            before = event.tokens_before
        elif isinstance(event, Pruned):
            pruned = True
        elif isinstance(event, CompactionEnded):
            if before is None:
                before = event.tokens_before
            if event.status == "compacted":
                action, after = "compact", event.tokens_after
            elif event.status == "pruned":
                after = event.tokens_after
                if action == "send":
                    action = "prune"
        elif isinstance(event, OverflowRecovered):
            action, after = "recover", event.tokens_after
    return action, before, after, pruned


class Replayer:
    """Replays transcripts into one store; one ``Replayer`` per command run."""

    def __init__(
        self,
        store: Store,
        *,
        knobs: Knobs,
        summarizer: Summarizer | ChatModel | None,
        summarizer_name: str,
        window: str | None,
        max_output: str | None,
        model: str | None,
        on_step: Callable[[], None] | None = None,
        summary_window: int | None = None,
        summary_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.summary_window = summary_window
        self.summary_options = dict(summary_options or {})
        self.store = store
        self.knobs = knobs
        self.budget_settings = knobs.budget()
        self.compaction_settings = knobs.compaction_settings()
        self.summarizer = summarizer
        self.summarizer_name = summarizer_name
        self.window = window
        self.max_output = max_output
        self.model = model
        self.on_step = on_step

    def limits(self, transcript: Transcript) -> ModelLimits:
        """The limits for ``transcript``: its model's, with the options overriding them."""
        name = self.model or str(transcript.meta.get("model") or "unknown")
        return limits_for(name, self.window, self.max_output)

    async def replay(self, transcript: Transcript) -> _Session:
        """Replay one transcript (see the module docstring)."""
        started = time.perf_counter()
        limits = self.limits(transcript)
        messages = transcript.messages
        model = self.model or transcript.meta.get("model")
        results: list[CompactionResult] = []
        try:
            manager = ContextManager(
                limits,
                model=str(model) if model else None,
                budget=self.budget_settings,
                settings=self.compaction_settings,
                summarizer=self.summarizer,
                summary_window=self.summary_window,
                summary_options=self.summary_options,
                hooks=CompactionHooks(after_compact=results.append),
            )
        except SettingError as exc:
            raise setting_error(exc) from exc
        head = head_length(messages)
        system = "\n\n".join(m.text for m in messages[:head])
        info = await self.store.create_conversation(
            f"{_slug(transcript.id)}-{uuid.uuid4().hex[:6]}",
            model=str(model) if model else None,
            settings={
                **({"system": system} if system else {}),
                "replay": {
                    "source": str(transcript.meta.get("path") or ""),
                    "transcript": transcript.id,
                    "format": transcript.source_format,
                    "window": limits.context_window,
                    "summarizer": self.summarizer_name,
                },
            },
        )
        session = _Session(transcript, limits, info.id)
        seqs: list[int | None] = [None if i < head else i - head + 1 for i in range(len(messages))]
        stored = head  # messages[:stored] are in the store
        counter = manager.counter
        previous: list[Message] = []
        previous_tokens = 0
        previous_epoch = 0
        call = 0
        committed = 0
        prune_seq = 0
        # what this replay's compactions are planned on (the single writer's compare-and-swap)
        version = info.version
        session_id = info.current_session_id or ""
        name = str(model) if model else None

        def count(message: Message) -> int:
            return counter.calibration.apply(counter.message_tokens(message))

        async def store_until(end: int) -> None:
            nonlocal stored
            if end > stored:
                await self.store.append_many(
                    info.id,
                    [
                        NewMessage(m, model=name if m.role == "assistant" else None)
                        for m in messages[stored:end]
                    ],
                )
                stored = end

        try:
            async for step in manager.areplay(messages):
                call += 1
                budget = step.budget
                session.budget = budget
                await store_until(step.index)
                # commit what the call's compactions and prunes did, through the single writer
                for result in results[committed:]:
                    if result.status == "compacted" and result.state.summary is not None:
                        record = compaction_record(
                            result, seqs, duration_ms=round(result.duration * 1000, 3)
                        )
                        outcome = await self.store.commit_planned(
                            info.id, record, version=version, session_id=session_id
                        )
                        if outcome.status != "committed":
                            raise ContentionError(
                                "another writer changed the conversation during the replay; "
                                "its compaction was not stored",
                                conversation_id=info.id,
                            )
                        assert outcome.version is not None and outcome.session is not None
                        version, session_id = outcome.version, outcome.session.id
                        session.compactions.append(
                            {
                                "call": call,
                                "trigger": result.plan.trigger,
                                "emergency": result.plan.emergency,
                                "tokens_before": result.tokens_before,
                                "tokens_after": result.tokens_after,
                                "messages_before": result.messages_before,
                                "messages_after": result.messages_after,
                                "first_kept": result.first_kept,
                                "summarizer": result.summarizer,
                                "truncated": result.truncated,
                                "fallback_reason": result.fallback_reason,
                                "summary_usage": usage_to_dict(result.summary_usage),
                                "seconds": round(result.duration, 3),
                                "summary": result.summary_text or "",
                            }
                        )
                    if result.status in ("compacted", "pruned", "failed"):
                        boundary = seq_at(seqs, result.state.prune_boundary)
                        if result.state.prune_boundary > head and boundary > prune_seq:
                            moved = await self.store.set_prune_boundary(info.id, boundary)
                            version, prune_seq = moved.version, boundary
                committed = len(results)
                context = step.context
                tokens = step.tokens
                if step.state.epoch == previous_epoch and call > 1:
                    cached = min(previous_tokens, tokens)
                else:
                    cached = 0
                    for old, new in zip(previous, context, strict=False):
                        if old is not new and old != new:
                            break
                        cached += count(new)
                    cached = min(cached, tokens)
                reply = messages[step.index] if step.index < len(messages) else None
                output = 0
                recorded: int | None = None
                if reply is not None:
                    if reply.usage is not None:
                        output = reply.usage.output
                        recorded = reply.usage.context_tokens or None
                    else:
                        output = counter.message_tokens(reply)
                action, before, after, pruned = _action(step.events)
                session.steps.append(
                    {
                        "session": transcript.id,
                        "call": call,
                        "index": step.index,
                        "context_tokens": tokens,
                        "context_messages": len(context),
                        "action": action,
                        "pruned": pruned,
                        "tokens_before": before,
                        "tokens_after": after,
                        "cached_tokens": cached,
                        "output_tokens": output,
                        "cost": _cost(limits.pricing, tokens - cached, cached, output),
                        "recorded_context_tokens": recorded,
                        "over_budget": tokens > budget.input_budget,
                        "over_window": tokens > limits.context_window,
                        "events": [e.text for e in step.events if e.kind != "usage_updated"],
                    }
                )
                previous, previous_tokens, previous_epoch = context, tokens, step.state.epoch
                if self.on_step is not None:
                    self.on_step()
        except ContextOverflowError as exc:
            call += 1
            tokens = int(exc.tokens or 0)
            # the budget the call was planned against (none recorded when call 1 stops)
            session.budget = manager.budget
            limit = exc.limit if exc.limit is not None else session.budget.input_budget
            session.stopped = {
                "call": call,
                "reason": exc.message,
                "tokens": tokens,
                "limit": int(limit),
                "window": limits.context_window,
                "stage": exc.context.get("stage"),
            }
            session.steps.append(
                {
                    "session": transcript.id,
                    "call": call,
                    "index": None,
                    "context_tokens": tokens,
                    "context_messages": None,
                    "action": "overflow",
                    "pruned": False,
                    "tokens_before": tokens,
                    "tokens_after": None,
                    "cached_tokens": 0,
                    "output_tokens": 0,
                    "cost": _cost(limits.pricing, 0, 0, 0),  # nothing was sent
                    "recorded_context_tokens": None,
                    "over_budget": True,
                    "over_window": tokens > limits.context_window,
                    "events": [exc.message],
                }
            )
        await store_until(len(messages))
        session.stored = await self._stored(info.id, manager, seqs)
        session.hidden_prefix = manager.hidden_prefix
        session.seconds = time.perf_counter() - started
        return session

    async def _stored(
        self, conversation_id: str, manager: ContextManager, seqs: list[int | None]
    ) -> dict[str, Any]:
        """What the store holds after the replay, checked against the engine's state."""
        sessions = await self.store.list_sessions(conversation_id)
        commits = await self.store.compactions(conversation_id)
        context = await self.store.load_context(conversation_id)
        state = manager.state
        expected = seq_at(seqs, state.cut) if state.compacted else 1
        stored_messages = sum(s.totals.messages for s in sessions if s.totals is not None)
        return {
            "conversation_id": conversation_id,
            "messages": stored_messages,
            "sessions": len(sessions),
            "compactions": len(commits),
            "context_messages": len(context.messages),
            "carry_from": context.session.carry_from,
            "consistent": context.session.carry_from == expected
            and len(commits) == state.compactions,
        }


def _session_dict(session: _Session) -> dict[str, Any]:
    steps = session.steps
    transcript = session.transcript
    limits = session.limits
    budget = session.budget
    window = limits.context_window
    # a call that could not be made (``overflow``: the replay stopped there) sent nothing
    input_tokens = sum(s["context_tokens"] for s in steps if s["action"] != "overflow")
    cached = sum(s["cached_tokens"] for s in steps)
    costs = [s["cost"] for s in steps]
    recorded = [s["recorded_context_tokens"] for s in steps if s["recorded_context_tokens"]]
    totals = {
        "calls": len(steps),
        "turns": len(split_turns(transcript.messages)),
        "messages": len(transcript.messages),
        "prunes": sum(1 for s in steps if s["pruned"]),
        "compactions": len(session.compactions),
        "recoveries": sum(1 for s in steps if s["action"] == "recover"),
        "max_context_tokens": max((s["context_tokens"] for s in steps), default=0),
        "overflows": sum(1 for s in steps if s["context_tokens"] > window),
        "over_budget": sum(1 for s in steps if s["over_budget"]),
        "input_tokens": input_tokens,
        "cached_tokens": cached,
        "cache_hit": round(cached / input_tokens, 4) if input_tokens else 0.0,
        "output_tokens": sum(s["output_tokens"] for s in steps),
        "cost": round(sum(c for c in costs if c is not None), 6)
        if costs and all(c is not None for c in costs)
        else None,
        "recorded_input_tokens": sum(recorded) if recorded else None,
        "seconds": round(session.seconds, 3),
        "stopped": 1 if session.stopped else 0,
        "hidden_prefix": session.hidden_prefix,
    }
    return {
        "id": transcript.id,
        "format": transcript.source_format,
        "model": transcript.meta.get("model"),
        "limits": {
            "context_window": window,
            "max_output": limits.max_output,
            "source": limits.source,
            "known": limits.known,
            "pricing": None
            if limits.pricing is None
            else {
                "input": limits.pricing.input,
                "output": limits.pricing.output,
                "cache_read": limits.pricing.cache_read,
            },
        },
        "budget": None
        if budget is None
        else {
            "input_budget": budget.input_budget,
            "trigger": budget.trigger,
            "target": budget.target,
            "keep_recent": budget.keep_recent,
            "summary_max": budget.summary_max,
            "output_reserve": budget.output_reserve,
        },
        "conversation_id": session.conversation_id,
        "stored": session.stored,
        "stopped": session.stopped,
        "compactions": session.compactions,
        "totals": totals,
    }


def _sum_totals(sessions: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    keys = (
        "calls",
        "turns",
        "messages",
        "prunes",
        "compactions",
        "recoveries",
        "overflows",
        "over_budget",
        "input_tokens",
        "cached_tokens",
        "output_tokens",
        "stopped",
    )
    totals: dict[str, Any] = {k: sum(s["totals"][k] for s in sessions) for k in keys}
    totals["sessions"] = len(sessions)
    totals["hidden_prefix"] = max((s["totals"]["hidden_prefix"] for s in sessions), default=0)
    totals["max_context_tokens"] = max(
        (s["totals"]["max_context_tokens"] for s in sessions), default=0
    )
    totals["cache_hit"] = (
        round(totals["cached_tokens"] / totals["input_tokens"], 4)
        if totals["input_tokens"]
        else 0.0
    )
    # priced sessions are summed; the models without prices are named (``unpriced``)
    costs = [s["totals"]["cost"] for s in sessions if s["totals"]["cost"] is not None]
    totals["cost"] = round(sum(costs), 6) if costs else None
    totals["unpriced"] = sorted(
        {str(s["model"] or "unknown") for s in sessions if s["totals"]["cost"] is None}
    )
    recorded = [s["totals"]["recorded_input_tokens"] for s in sessions]
    totals["recorded_input_tokens"] = sum(r for r in recorded if r) if any(recorded) else None
    totals["seconds"] = round(seconds, 3)
    totals["calls_per_second"] = round(totals["calls"] / seconds, 1) if seconds > 0 else None
    totals["turns_per_second"] = round(totals["turns"] / seconds, 2) if seconds > 0 else None
    totals["stored_consistent"] = all(s["stored"].get("consistent", False) for s in sessions)
    return totals


def _count_calls(messages: Sequence[Message]) -> int:
    calls = sum(
        1
        for i, m in enumerate(messages)
        if m.role == "assistant" and (i == 0 or messages[i - 1].role != "assistant")
    )
    return calls + (1 if messages and messages[-1].role != "assistant" else 0)


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
) -> dict[str, Any]:
    """Replay ``transcripts`` into the store at ``db`` (a temporary SQLite file when ``None``)
    and return the plain-data result (see the module docstring). ``progress``: a bar on a
    terminal; ``lines``: a line per finished session on stderr when it is not one."""
    made, name = make_summarizer(summarizer, base_url)
    options = {} if summary_temperature is None else {"temperature": summary_temperature}
    own_window = size(summary_window, "summary_window")
    started = time.perf_counter()
    temporary: tempfile.TemporaryDirectory[str] | None = None
    if db is None:
        temporary = tempfile.TemporaryDirectory(prefix="abridged-replay-")
        url = str(Path(temporary.name) / "replay.db")
    else:
        url = db
    total = sum(_count_calls(t.messages) for t in transcripts)
    bar = _Bar(total, lines=lines) if progress or lines else None
    sessions: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    store = Store(url)
    try:
        replayer = Replayer(
            store,
            knobs=knobs,
            summarizer=made,
            summarizer_name=name,
            window=window,
            max_output=max_output,
            model=model,
            on_step=bar.advance if bar is not None else None,
            summary_window=own_window,
            summary_options=options,
        )
        if bar is not None:
            bar.start()
        for number, transcript in enumerate(transcripts, 1):
            if bar is not None:
                bar.describe(transcript.id)
            replayed = await replayer.replay(transcript)
            sessions.append(_session_dict(replayed))
            steps.extend(replayed.steps)
            if bar is not None:
                bar.finished(number, len(transcripts), sessions[-1])
    finally:
        if bar is not None:
            bar.stop()
        await store.close()
        if temporary is not None:
            temporary.cleanup()
    seconds = time.perf_counter() - started
    return {
        "file": path,
        "format": transcripts[0].source_format if transcripts else None,
        "summarizer": name,
        "db": None if db is None else store.url,
        "settings": {
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
        },
        "steps": steps,
        "sessions": sessions,
        "totals": _sum_totals(sessions, seconds),
    }


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

    def finished(self, number: int, total: int, session: dict[str, Any]) -> None:
        """``session 3/399 django-123: 27 calls, 13 compactions, 0 overflows (41 s so far)``."""
        if not self.lines:
            return
        t = session["totals"]
        status = " [stopped]" if session["stopped"] else ""
        self.console.print(
            f"session {number}/{total} {session['id']}: {plural(t['calls'], 'call')}, "
            f"{plural(t['compactions'], 'compaction')}, {plural(t['overflows'], 'overflow')}"
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


def describe_stopped(stopped: dict[str, Any]) -> str:
    """``call 1: <reason> (needs 2.1k tokens; input budget 1.8k, window 4k)``."""
    k = format_token_size
    return (
        f"call {stopped['call']}: {stopped['reason']} (needs {k(stopped['tokens'])} tokens; "
        f"input budget {k(stopped['limit'])}, window {k(stopped['window'])})"
    )


def _money(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def _action_text(step: dict[str, Any]) -> Text:
    k = format_token_size
    action = step["action"]
    if action == "send":
        return Text("")
    before, after = step["tokens_before"], step["tokens_after"]
    word = {"prune": "pruned", "compact": "compacted", "recover": "recovered"}.get(action, action)
    sizes = f" {k(before)} → {k(after)}" if before is not None and after is not None else ""
    return Text(word + sizes, style=_ACTION_STYLE.get(action, ""))


def render_timeline(console: Console, session: dict[str, Any], steps: list[dict[str, Any]]) -> None:
    """One session's calls: context size against the window, what was done, cache and cost."""
    k = format_token_size
    window = session["limits"]["context_window"]
    budget = session["budget"] or {}
    trigger = budget.get("trigger", window)
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    table.add_column("call", justify="right")
    table.add_column("context", justify="right")
    table.add_column(f"0 … {k(window)}  (┊ trigger)", no_wrap=True)
    table.add_column("action")
    table.add_column("cache", justify="right")
    priced = any(step["cost"] is not None for step in steps)
    if priced:
        table.add_column("cost", justify="right")
    for step in steps:
        tokens = step["context_tokens"]
        cache = step["cached_tokens"] / tokens if tokens else 0.0
        row: list[Any] = [
            str(step["call"]),
            k(tokens),
            _bar(tokens, window, trigger),
            _action_text(step),
            f"{cache:.0%}",
        ]
        if priced:
            row.append(_money(step["cost"]))
        table.add_row(*row)
    console.print(table)


def _facts(console: Console, data: dict[str, Any], report: Path | None = None) -> None:
    k = format_token_size
    totals = data["totals"]
    sessions = data["sessions"]
    first = sessions[0]
    limits, budget = first["limits"], first["budget"] or {}
    window = limits["context_window"]
    facts = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    facts.add_column(style="bold")
    facts.add_column()
    if len(sessions) > 1:
        facts.add_row("sessions", f"{totals['sessions']:,}")
    facts.add_row(
        "calls",
        f"{totals['calls']:,} ({plural(totals['prunes'], 'prune')}, "
        f"{plural(totals['compactions'], 'compaction')}"
        + (
            f", {totals['recoveries']:,} overflow recover"
            + ("y" if totals["recoveries"] == 1 else "ies")
            if totals["recoveries"]
            else ""
        )
        + ")",
    )
    overflow = totals["overflows"]
    if totals["hidden_prefix"]:
        facts.add_row(
            "hidden prefix",
            f"{k(totals['hidden_prefix'])} tokens the provider counted that the transcript does "
            "not hold (its system prompt and tool definitions): counted against the budget, "
            "never compacted",
        )
    facts.add_row(
        "largest context",
        f"{k(totals['max_context_tokens'])} of the {k(window)} window "
        f"(input budget {k(budget.get('input_budget', 0))}, trigger {k(budget.get('trigger', 0))},"
        f" target {k(budget.get('target', 0))})",
    )
    facts.add_row(
        "overflows",
        Text(
            f"{overflow} (contexts over the window)",
            style="bold red" if overflow else "green",
        ),
    )
    if totals["stopped"]:
        stopped = [s["stopped"] | {"id": s["id"]} for s in sessions if s["stopped"]]
        if len(sessions) == 1:
            what = describe_stopped(stopped[0])
        else:
            what = (
                f"{totals['stopped']:,} of {plural(len(sessions), 'session')} stopped: "
                + ", ".join(
                    f"{s['id']} at call {s['call']} (needs {k(s['tokens'])} of {k(s['limit'])})"
                    for s in stopped[:3]
                )
            )
            if len(stopped) > 3:
                what += f" and {len(stopped) - 3:,} more"
            reasons = {s["reason"] for s in stopped}
            what += f"; {next(iter(reasons))}" if len(reasons) == 1 else "; see --json"
        facts.add_row("stopped", Text(what, style="bold red"))
    facts.add_row(
        "tokens sent",
        f"{k(totals['input_tokens'])} input, {k(totals['cached_tokens'])} of it from the cache "
        f"(estimate, {totals['cache_hit']:.0%}); {k(totals['output_tokens'])} output"
        + (
            f"; the recorded run sent {k(totals['recorded_input_tokens'])} input"
            if totals["recorded_input_tokens"]
            else ""
        ),
    )
    unpriced = join(totals["unpriced"])
    if totals["cost"] is not None:
        facts.add_row(
            "cost (estimate)",
            _money(totals["cost"]) + (f" (no prices known for {unpriced})" if unpriced else ""),
        )
    else:
        facts.add_row("cost (estimate)", f"n/a: no prices known for {unpriced} (pass --model)")
    stored = [s["stored"] for s in sessions]
    where = data["db"] or "a temporary SQLite store"
    consistent = totals["stored_consistent"]
    facts.add_row(
        "store",
        f"{sum(s['messages'] for s in stored):,} messages, "
        f"{plural(sum(s['sessions'] for s in stored), 'session')}, "
        f"{plural(sum(s['compactions'] for s in stored), 'compaction')} committed in {where}"
        + ("" if consistent else " [red](the store does not match the engine)[/]"),
    )
    if data["db"] and len(sessions) == 1:
        facts.add_row("conversation", first["conversation_id"])
    seconds = totals["seconds"]
    facts.add_row(
        "time",
        f"{seconds:.2f} s ({totals['calls_per_second'] or 0:,.0f} calls/s, "
        f"{totals['turns_per_second'] or 0:,.1f} turns/s)",
    )
    if report is not None:
        facts.add_row("report", str(report))
    console.print(facts)


def render(
    console: Console,
    data: dict[str, Any],
    *,
    timeline: bool | None,
    report: Path | None = None,
) -> None:
    """The replay for people: the timeline (one session, or ``--timeline``), then the totals."""
    k = format_token_size
    sessions = data["sessions"]
    show = timeline if timeline is not None else len(sessions) == 1
    by_session: dict[str, list[dict[str, Any]]] = {}
    for step in data["steps"]:
        by_session.setdefault(step["session"], []).append(step)
    first = sessions[0]
    limits = first["limits"]
    reserve = (first["budget"] or {}).get("output_reserve")
    output = k(limits["max_output"])
    if reserve is not None and reserve != limits["max_output"]:
        output += f" (reserving {k(reserve)})"
    console.print(
        f"[bold]replay[/] {data['file']} ({data['format']}): window "
        f"{k(limits['context_window'])}, max output {output}, "
        f"summarizer {data['summarizer']}",
        highlight=False,
        soft_wrap=True,
    )
    if show:
        for session in sessions:
            if len(sessions) > 1:
                console.print(f"\n[bold]{session['id']}[/]", highlight=False)
            render_timeline(console, session, by_session.get(session["id"], []))
            for c in session["compactions"]:
                sections = sum(1 for line in c["summary"].splitlines() if line.startswith("## "))
                console.print(
                    f"  compaction at call {c['call']}: {k(c['tokens_before'])} → "
                    f"{k(c['tokens_after'])}, summary by {c['summarizer']} "
                    f"({sections} sections{', truncated' if c['truncated'] else ''})"
                    + escape(summary_notes(c, data["summarizer"])),
                    highlight=False,
                )
            if session["stopped"]:
                console.print(
                    f"  [red]stopped:[/] {escape(describe_stopped(session['stopped']))}",
                    highlight=False,
                )
    else:
        table = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
        table.add_column("session", overflow="fold")
        for name in ("calls", "prunes", "compactions", "largest", "overflows", "cache", "cost"):
            table.add_column(name, justify="right", no_wrap=True)
        for session in sessions:
            t = session["totals"]
            table.add_row(
                Text(
                    session["id"] + (" (stopped)" if session["stopped"] else ""),
                    style="red" if session["stopped"] else "",
                ),
                str(t["calls"]),
                str(t["prunes"]),
                str(t["compactions"]),
                k(t["max_context_tokens"]),
                Text(str(t["overflows"]), style="bold red" if t["overflows"] else ""),
                f"{t['cache_hit']:.0%}",
                _money(t["cost"]),
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
            from abridged.cli.report import write_report  # noqa: PLC0415

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
        sys.stdout.write(json.dumps(data) + "\n")
    else:
        render(stdout(), data, timeline=timeline, report=report)
    if report is not None and as_json:
        stderr().print(f"report written to {report}", highlight=False)
    return _outcome(data)


def _outcome(data: dict[str, Any]) -> int:
    """0 when every session replayed within its window; else 1, with what went wrong on stderr."""
    totals = data["totals"]
    problems = []
    if totals["stopped"]:
        first = next(s for s in data["sessions"] if s["stopped"])
        where = f"{first['id']} at " if len(data["sessions"]) > 1 else ""
        problems.append(
            f"the replay stopped in {totals['stopped']:,} of "
            f"{plural(len(data['sessions']), 'session')} "
            f"({where}{describe_stopped(first['stopped'])})"
        )
    if totals["overflows"]:
        problems.append(f"{plural(totals['overflows'], 'context')} over the window")
    if not problems:
        return 0
    return fail(CliError("; ".join(problems)))
