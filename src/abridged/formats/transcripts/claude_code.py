"""Claude Code project sessions (``~/.claude/projects/<project>/<session>.jsonl``) as transcripts.

Each line is one entry with a top-level ``type``: ``user`` and ``assistant`` entries carry an
Anthropic Messages ``message`` (``role``, ``content``; the assistant's with ``id``, ``model`` and
``usage``); ``summary``, ``system``, ``file-history-snapshot``, ``queue-operation``, ``progress``
and other bookkeeping entries are not part of what the model saw and are skipped. Every entry
carries ``sessionId``, ``uuid``, ``parentUuid``, ``cwd``, ``timestamp``...

How the entries become messages:

- Claude Code writes one assistant reply as several entries that share ``message.id``, one
  content block each (thinking, text, tool use); they are joined into one assistant message,
  with the usage of the last of them.
- Tool results come back as ``user`` entries holding ``tool_result`` blocks; the Anthropic
  converter turns them into ``tool`` messages named after their calls.
- Entries of a sub-agent (``isSidechain``) and synthetic replies (model ``<synthetic>``: errors
  Claude Code shows but never got from the model) are skipped. A sub-agent's own file
  (``subagents/agent-*.jsonl``, every message entry a sidechain) is read as the sub-agent's
  conversation: ``meta["sidechain"]`` is true and the id is the file's name.
- Content blocks the core model has no place for (server tool results and the like) are kept as
  text holding their JSON, so that their tokens still count; ``meta["converted_blocks"]`` says
  how many.

Lines are taken in file order (a rewound conversation's abandoned branch is kept).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from abridged.core.model import assign_ids
from abridged.formats.transcripts.reading import (
    LineRejecter,
    attach_usage,
    convert_messages,
    file_stem,
    jsonl_objects,
    kind_of,
)
from abridged.formats.transcripts.records import CLAUDE_CODE, Transcript, stats_from_messages
from abridged.formats.usage import usage_from_anthropic

#: Entries holding a message the model saw.
MESSAGE_ENTRIES = frozenset({"user", "assistant"})
#: Bookkeeping entries of Claude Code, skipped.
OTHER_ENTRIES = frozenset(
    {"summary", "system", "file-history-snapshot", "queue-operation", "progress", "attachment"}
)
#: Keys that only a Claude Code entry has (one of them is enough to recognise the format).
ENTRY_KEYS = frozenset({"sessionId", "uuid", "parentUuid", "leafUuid", "messageId"})
#: Content blocks the Anthropic converter reads; others become text holding their JSON.
KNOWN_BLOCKS = frozenset(
    {"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"}
)
SYNTHETIC_MODEL = "<synthetic>"
EXPECTED = "a Claude Code entry: an object with a 'type' (user, assistant, summary, ...)"


def looks_like_claude_code(obj: Mapping[str, Any]) -> bool:
    """Whether one JSON Lines object is a Claude Code entry."""
    kind = kind_of(obj)
    if kind in MESSAGE_ENTRIES:
        return isinstance(obj.get("message"), Mapping) and any(k in obj for k in ENTRY_KEYS)
    return kind in OTHER_ENTRIES and any(k in obj for k in ENTRY_KEYS)


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return list(content)
    return []


def _clean_block(block: Any, converted: list[int]) -> Any:
    """The block as the Anthropic converter reads it (unknown kinds as text holding JSON)."""
    if isinstance(block, Mapping) and block.get("type") not in KNOWN_BLOCKS:
        converted[0] += 1
        return {"type": "text", "text": json.dumps(block, ensure_ascii=False, sort_keys=True)}
    return block


def load_claude_code(path: str | Path, *, strict: bool = True) -> Transcript:
    """One Claude Code project session file (see the module docstring).

    ``strict=False`` skips lines that cannot be read (``LoaderStats.skipped_lines``). Raises
    ``FormatError`` naming the line and what was expected.
    """
    p = Path(path)
    skipped: list[int] = []
    reject = LineRejecter(CLAUDE_CODE, p, strict, skipped)
    items: list[dict[str, Any]] = []  # Anthropic messages, in order
    lines: list[int] = []  # the line of each item
    reports: list[dict[str, Any]] = []  # {"role", "usage"} beside each item, for attach_usage
    meta: dict[str, Any] = {}
    converted = [0]
    open_id: str | None = None  # the assistant reply whose blocks are still arriving
    open_index = -1
    entries = list(jsonl_objects(p, CLAUDE_CODE, strict, skipped))
    # a sub-agent's file holds only sidechain entries: its messages are the conversation
    sidechain = _sidechain_only(entries)
    for lineno, obj in entries:
        kind = obj.get("type")
        if not isinstance(kind, str):
            reject(lineno, "the entry has no 'type'", field="type", expected=EXPECTED)
            continue
        if kind not in MESSAGE_ENTRIES or (obj.get("isSidechain") and not sidechain):
            continue
        message = obj.get("message")
        if not isinstance(message, Mapping) or "content" not in message:
            reject(
                lineno,
                f"a {kind} entry without a message",
                field="message",
                expected="'message': an object with 'role' and 'content'",
            )
            continue
        for key, name in (("sessionId", "session_id"), ("cwd", "cwd"), ("version", "version")):
            if obj.get(key) and name not in meta:
                meta[name] = obj[key]
        if obj.get("gitBranch") and "git_branch" not in meta:
            meta["git_branch"] = obj["gitBranch"]
        raw = _blocks(message.get("content"))
        if any(isinstance(b, Mapping) and kind_of(b) is None for b in raw):
            reject(
                lineno,
                "a content block without a string 'type'",
                field="message.content",
                expected="content blocks: objects with a string 'type'",
            )
            continue
        blocks = [_clean_block(b, converted) for b in raw]
        if kind == "assistant":
            model = message.get("model")
            if model == SYNTHETIC_MODEL:
                continue
            if model and "model" not in meta:
                meta["model"] = model
            mid = message.get("id")
            usage = message.get("usage") if isinstance(message.get("usage"), Mapping) else None
            if mid is not None and mid == open_id:
                items[open_index]["content"].extend(blocks)
                if usage:
                    reports[open_index]["usage"] = usage
                continue
            if not blocks:
                continue
            items.append({"role": "assistant", "content": blocks})
            reports.append({"role": "assistant", "usage": usage})
            lines.append(lineno)
            open_id, open_index = (str(mid) if mid is not None else None), len(items) - 1
            continue
        if not blocks:
            continue
        results_only = all(
            isinstance(b, Mapping) and b.get("type") == "tool_result" for b in blocks
        )
        if not results_only:
            open_id = None  # the user spoke: the reply is over
        items.append({"role": "user", "content": blocks})
        reports.append({"role": "user"})
        lines.append(lineno)
    messages = _convert(items, reports, lines, p)
    if converted[0]:
        meta["converted_blocks"] = converted[0]
    meta["path"] = str(p)
    if sidechain:
        meta["sidechain"] = True
    tid = file_stem(p) if sidechain else str(meta.get("session_id") or file_stem(p))
    stats = stats_from_messages(messages).with_skipped(skipped)
    return Transcript(tid, tuple(messages), CLAUDE_CODE, meta, stats)


def _sidechain_only(entries: list[tuple[int, dict[str, Any]]]) -> bool:
    """Whether every message entry is a sub-agent's (and there is one)."""
    kinds = [bool(obj.get("isSidechain")) for _, obj in entries if kind_of(obj) in MESSAGE_ENTRIES]
    return bool(kinds) and all(kinds)


def _convert(
    items: list[dict[str, Any]],
    reports: list[dict[str, Any]],
    lines: list[int],
    path: Path,
) -> list[Any]:
    from abridged.formats.anthropic_messages import messages_from_anthropic  # noqa: PLC0415

    converted = convert_messages(
        lambda: messages_from_anthropic(items), CLAUDE_CODE, str(path), None, lines
    )
    return assign_ids(attach_usage(converted, reports, usage_from_anthropic))
