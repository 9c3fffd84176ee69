"""``abridged compact``: compact a transcript once and write the compacted context.

The whole transcript is the history; one manual compaction (``ContextManager.acompact``, with the
same pruning, cut, summary and emergency path as a live conversation) gives the context abridged
would send next. It is written in the transcript's own format (``--format same``, the default,
where abridged can write that format) or as OpenAI Chat, Anthropic Messages or abridged JSON, and
the before/after breakdown is printed: tokens per kind of message, and the engine's notification.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from abridged.cli.common import (
    BAD_USAGE,
    OUTPUT_FORMAT_ALIASES,
    CliError,
    Knobs,
    fail,
    limits_for,
    load,
    make_summarizer,
    setting_error,
    stdout,
)
from abridged.core.budget import format_token_size
from abridged.core.model import Message, message_to_dict
from abridged.core.protocols import ChatModel, Summarizer
from abridged.errors import AbridgedError, SettingError
from abridged.events.engine import CompactionEnded
from abridged.formats.transcripts import (
    ABRIDGED_JSON,
    ABRIDGED_JSONL,
    ANTHROPIC_MESSAGES,
    CLAUDE_CODE,
    CODEX,
    MINI_SWE_AGENT_TRAJ,
    OPENAI_CHAT,
    OPENAI_CHAT_JSONL,
    SWEBENCH_JSONL,
    Transcript,
    messages_to_text_protocol,
    transcript_to_dict,
)
from abridged.runtime.context_manager import ContextManager

OUTPUT_FORMATS = ("same", "openai", "anthropic", "abridged")
KINDS = ("system", "summary", "user", "assistant", "tool results")


def _kind(message: Message) -> str:
    if message.is_summary:
        return "summary"
    if message.role == "tool" or message.tool_results:
        return "tool results"
    return message.role


def breakdown(messages: Sequence[Message], count: Any) -> dict[str, int]:
    """Tokens per kind of message (system, summary, user, assistant, tool results)."""
    out = dict.fromkeys(KINDS, 0)
    for message in messages:
        out[_kind(message)] += int(count(message))
    return out


# -- writing ----------------------------------------------------------------------------------


def _openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    from abridged.formats.openai_chat import messages_to_openai  # noqa: PLC0415

    return messages_to_openai(messages)


def _anthropic(messages: Sequence[Message]) -> dict[str, Any]:
    from abridged.formats.anthropic_messages import messages_to_anthropic  # noqa: PLC0415

    system, items = messages_to_anthropic(messages)
    return {"system": system, "messages": items} if system is not None else {"messages": items}


def _agent_wire(transcript: Transcript, messages: Sequence[Message]) -> list[dict[str, Any]]:
    if transcript.meta.get("tool_protocol") == "native":
        return _openai(messages)
    return messages_to_text_protocol(messages)


def _swebench_line(transcript: Transcript, messages: Sequence[Message]) -> dict[str, Any]:
    skip = ("path", "line", "tool_protocol", "messages")
    head = {k: v for k, v in transcript.meta.items() if k not in skip}
    return {**head, "messages": _agent_wire(transcript, messages)}


def _traj(transcript: Transcript, messages: Sequence[Message]) -> dict[str, Any]:
    keys = ("instance_id", "exit_status", "submission", "model_stats", "mini_version")
    info = {k: transcript.meta[k] for k in keys if k in transcript.meta}
    return {
        "info": info,
        "messages": _agent_wire(transcript, messages),
        "trajectory_format": transcript.meta.get("trajectory_format", "mini-swe-agent-1"),
    }


def _codex_lines(transcript: Transcript, messages: Sequence[Message]) -> list[dict[str, Any]]:
    from abridged.formats.openai_responses import messages_to_responses  # noqa: PLC0415

    meta = {k: transcript.meta[k] for k in ("cwd", "cli_version") if k in transcript.meta}
    lines: list[dict[str, Any]] = [
        {"type": "session_meta", "payload": {"id": transcript.id, **meta}}
    ]
    if transcript.meta.get("model"):
        lines.append({"type": "turn_context", "payload": {"model": transcript.meta["model"]}})
    lines += [
        {"type": "response_item", "payload": item} for item in messages_to_responses(messages)
    ]
    return lines


def _claude_lines(transcript: Transcript, messages: Sequence[Message]) -> list[dict[str, Any]]:
    items = _anthropic(messages)
    session = str(transcript.meta.get("session_id") or transcript.id)
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    model = transcript.meta.get("model")
    if items.get("system"):
        items["messages"].insert(0, {"role": "user", "content": items["system"]})
    for item in items["messages"]:
        entry_id = str(uuid.uuid4())
        message = dict(item)
        if item["role"] == "assistant" and model:
            message["model"] = model
        lines.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "sessionId": session,
                "type": item["role"],
                "message": message,
                "uuid": entry_id,
            }
        )
        parent = entry_id
    return lines


def _dumps_lines(lines: Sequence[Any]) -> str:
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


def _dumps(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def render_output(
    compacted: list[tuple[Transcript, list[Message]]], output_format: str
) -> tuple[str, str]:
    """The compacted contexts as file text, and the name of the format written."""
    first, messages = compacted[0]
    fmt = first.source_format if output_format == "same" else output_format
    if fmt == SWEBENCH_JSONL:
        return _dumps_lines([_swebench_line(t, m) for t, m in compacted]), fmt
    if len(compacted) > 1:
        raise CliError(
            f"the file holds {len(compacted)} sessions and {fmt} holds one: pass --session N",
            BAD_USAGE,
        )
    if fmt in ("openai", OPENAI_CHAT):
        return _dumps(_openai(messages)), OPENAI_CHAT
    if fmt == OPENAI_CHAT_JSONL:
        return _dumps_lines(_openai(messages)), fmt
    if fmt in ("anthropic", ANTHROPIC_MESSAGES):
        return _dumps(_anthropic(messages)), ANTHROPIC_MESSAGES
    if fmt == MINI_SWE_AGENT_TRAJ:
        return _dumps(_traj(first, messages)), fmt
    if fmt == ABRIDGED_JSONL:
        return _dumps_lines([message_to_dict(m) for m in messages]), fmt
    if fmt == CODEX:
        return _dumps_lines(_codex_lines(first, messages)), fmt
    if fmt == CLAUDE_CODE:
        return _dumps_lines(_claude_lines(first, messages)), fmt
    out = Transcript(first.id, tuple(messages), first.source_format, first.meta)
    return _dumps(transcript_to_dict(out)), ABRIDGED_JSON


# -- compacting -------------------------------------------------------------------------------


async def compact_transcript(
    transcript: Transcript,
    *,
    knobs: Knobs,
    summarizer: Summarizer | ChatModel | None,
    window: str | None,
    max_output: str | None,
    model: str | None,
    focus: str | None,
) -> tuple[list[Message], dict[str, Any]]:
    """Compact one transcript; returns the context and what was done (plain data)."""
    name = model or str(transcript.meta.get("model") or "unknown")
    limits = limits_for(name, window, max_output)
    try:
        manager = ContextManager(
            limits,
            model=name,
            budget=knobs.budget(),
            settings=knobs.compaction_settings(),
            summarizer=summarizer,
        )
    except SettingError as exc:
        raise setting_error(exc) from exc
    history = list(transcript.messages)
    counter = manager.counter

    def count(message: Message) -> int:
        return counter.calibration.apply(counter.message_tokens(message))

    before = breakdown(history, count)
    prepared = await manager.acompact(focus, messages=history)
    context = manager.context_messages()
    after = breakdown(context, count)
    budget = prepared.budget
    ended = [e for e in prepared.events if isinstance(e, CompactionEnded)]
    status = ended[-1].status if ended else "nothing"
    summary = manager.state.summary
    data: dict[str, Any] = {
        "id": transcript.id,
        "format": transcript.source_format,
        "model": transcript.meta.get("model"),
        "window": limits.context_window,
        "max_output": limits.max_output,
        "budget": {
            "input_budget": budget.input_budget,
            "trigger": budget.trigger,
            "target": budget.target,
            "keep_recent": budget.keep_recent,
        },
        "status": status,
        "messages_before": len(history),
        "messages_after": len(context),
        "tokens_before": ended[0].tokens_before if ended else sum(before.values()),
        "tokens_after": manager.context_tokens(),
        "before": before,
        "after": after,
        "events": [e.text for e in prepared.events if e.kind != "usage_updated"],
        "summary": summary,
    }
    return context, data


def _render(console: Console, data: dict[str, Any]) -> None:
    k = format_token_size
    console.print(
        f"[bold]{data['id']}[/] ({data['format']}): window {k(data['window'])}, input budget "
        f"{k(data['budget']['input_budget'])}, keep recent {k(data['budget']['keep_recent'])}",
        highlight=False,
    )
    table = Table("", "before", "after", show_edge=False, box=None, header_style="bold")
    table.columns[1].justify = table.columns[2].justify = "right"
    for kind in KINDS:
        before, after = data["before"][kind], data["after"][kind]
        if before or after:
            table.add_row(kind, k(before) if before else "-", k(after) if after else "-")
    table.add_row(
        "[bold]total[/]",
        f"[bold]{k(sum(data['before'].values()))}[/]",
        f"[bold]{k(sum(data['after'].values()))}[/]",
    )
    table.add_row("messages", f"{data['messages_before']:,}", f"{data['messages_after']:,}")
    console.print(table)
    for text in data["events"]:
        console.print(f"  {text}", highlight=False)


def run_compact(
    path: Path,
    *,
    input_format: str | None = None,
    session: int | None = None,
    output: Path | None = None,
    output_format: str = "same",
    knobs: Knobs | None = None,
    summarizer: str = "extractive",
    base_url: str | None = None,
    window: str | None = None,
    max_output: str | None = None,
    model: str | None = None,
    focus: str | None = None,
    as_json: bool = False,
) -> int:
    """Run the command; returns the exit code (0 ok, 1 unreadable input or failure, 2 usage)."""
    output_format = OUTPUT_FORMAT_ALIASES.get(output_format, output_format)
    try:
        if output_format not in OUTPUT_FORMATS:
            raise CliError(
                f"--format {output_format!r}: expected one of {', '.join(OUTPUT_FORMATS)}",
                BAD_USAGE,
            )
        transcripts = load(path, input_format, session)
        made, _name = make_summarizer(summarizer, base_url)

        async def run_all() -> list[tuple[list[Message], dict[str, Any]]]:
            return [
                await compact_transcript(
                    t,
                    knobs=knobs or Knobs(),
                    summarizer=made,
                    window=window,
                    max_output=max_output,
                    model=model,
                    focus=focus,
                )
                for t in transcripts
            ]

        done = asyncio.run(run_all())
        text, written = render_output(
            [(t, ctx) for t, (ctx, _) in zip(transcripts, done, strict=True)], output_format
        )
        if output is not None:
            try:
                output.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise CliError(f"cannot write {output}: {exc.strerror or exc}") from exc
    except CliError as exc:
        return fail(exc)
    except SettingError as exc:
        return fail(setting_error(exc))
    except AbridgedError as exc:
        return fail(CliError(str(exc)))
    reports = [data for _, data in done]
    for data in reports:
        data["output"] = str(output) if output is not None else None
        data["output_format"] = written
    if output is None:
        sys.stdout.write(text)
        console = Console(stderr=True)
    else:
        console = stdout()
    if as_json:
        payload: Any = reports[0] if len(reports) == 1 else {"sessions": reports}
        if output is None:
            console.print_json(json.dumps(payload))
        else:
            sys.stdout.write(json.dumps(payload) + "\n")
        return 0
    for data in reports:
        _render(console, data)
    if output is not None:
        console.print(f"wrote {output} ({written})", highlight=False)
    return 0
