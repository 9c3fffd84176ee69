"""Telling a transcript file's format from its content (the order is in ``loaders``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from abridged.errors import FormatError
from abridged.formats.transcripts.claude_code import looks_like_claude_code
from abridged.formats.transcripts.codex import looks_like_codex
from abridged.formats.transcripts.reading import (
    ANTHROPIC_BLOCKS,
    EXPECT_JSONL,
    EXPECT_MESSAGES,
    NON_SPACE,
    decode,
    kind_of,
    messages_of,
    parse_json,
)
from abridged.formats.transcripts.records import (
    ABRIDGED_JSON,
    ABRIDGED_JSONL,
    ANTHROPIC_MESSAGES,
    CLAUDE_CODE,
    CODEX,
    MINI_SWE_AGENT_TRAJ,
    OPENAI_CHAT,
    OPENAI_CHAT_JSONL,
    SWEBENCH_JSONL,
)


class Detected(NamedTuple):
    format: str
    doc: Any = None  # the parsed document, when the file is one JSON document
    line: int | None = None  # where a single flattened session sits


def _looks_anthropic(messages: Sequence[Any]) -> bool:
    for message in messages:
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = kind_of(block)
            if kind in ANTHROPIC_BLOCKS or (kind in ("image", "document") and "source" in block):
                return True
    return False


def _has_parts(messages: Sequence[Any]) -> bool:
    first = next((m for m in messages if isinstance(m, Mapping)), None)
    return first is not None and "parts" in first


def _jsonl_kind(obj: Mapping[str, Any], path: Path, line: int) -> str:
    if "messages" in obj:
        return SWEBENCH_JSONL
    if "role" in obj:
        return ABRIDGED_JSONL if "parts" in obj else OPENAI_CHAT_JSONL
    if looks_like_codex(obj):
        return CODEX
    if looks_like_claude_code(obj):
        return CLAUDE_CODE
    raise FormatError(
        f"line {line}: neither a session nor a message",
        format="jsonl",
        path=str(path),
        line=line,
        expected="a session object with 'messages', a message object with 'role', a Claude "
        "Code entry or a Codex rollout record",
    )


def _doc_kind(doc: Any, path: Path) -> str:
    if isinstance(doc, list):
        if _has_parts(doc):
            return ABRIDGED_JSON
        return ANTHROPIC_MESSAGES if _looks_anthropic(doc) else OPENAI_CHAT
    if isinstance(doc, Mapping):
        if "messages" not in doc:  # a one-line JSON Lines file of an agent CLI
            if looks_like_codex(doc):
                return CODEX
            if looks_like_claude_code(doc):
                return CLAUDE_CODE
        messages = messages_of(doc, "json", str(path), None)
        if doc.get("format") == ABRIDGED_JSON or _has_parts(messages):
            return ABRIDGED_JSON
        if "trajectory_format" in doc or "info" in doc:
            return MINI_SWE_AGENT_TRAJ
        if "system" in doc or _looks_anthropic(messages):
            return ANTHROPIC_MESSAGES
        if "instance_id" in doc or "exit_status" in doc:
            return SWEBENCH_JSONL
        return OPENAI_CHAT
    raise FormatError(
        "the JSON document is neither a list of messages nor an object",
        format="json",
        path=str(path),
        expected="a list of messages, or " + EXPECT_MESSAGES,
    )


def detect(path: Path, strict: bool = True) -> Detected:
    text = decode(path.read_bytes(), "json", str(path))
    start = NON_SPACE.search(text)
    if start is None:
        raise FormatError(
            "the file is empty", format="json", path=str(path), expected="JSON or JSON Lines"
        )
    line_start = text.rfind("\n", 0, start.start()) + 1
    line_end = text.find("\n", start.start())
    line_end = len(text) if line_end < 0 else line_end
    first_line = text.count("\n", 0, line_start) + 1
    first = text[line_start:line_end]
    more = NON_SPACE.search(text, line_end) is not None
    if more:
        try:
            obj = parse_json(first)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return Detected(_jsonl_kind(obj, path, first_line))
    try:
        doc = parse_json(text)
    except json.JSONDecodeError as e:
        looks_jsonl = more and first.strip().startswith("{") and first.strip().endswith("}")
        if not looks_jsonl:
            raise FormatError(
                f"invalid JSON: {e.msg}",
                format="json",
                path=str(path),
                line=e.lineno,
                column=e.colno,
                expected="a JSON document or JSON Lines",
            ) from e
        # JSON Lines whose first line is corrupt: name it, or decide from the first good line.
        if strict:
            raise FormatError(
                f"line {first_line}: invalid JSON",
                format="jsonl",
                path=str(path),
                line=first_line,
                expected=EXPECT_JSONL,
            ) from e
        for number, candidate in enumerate(text.split("\n"), 1):
            try:
                obj = parse_json(candidate) if candidate.strip() else None
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return Detected(_jsonl_kind(obj, path, number))
        raise FormatError(
            "no line of the file is a JSON object",
            format="jsonl",
            path=str(path),
            expected=EXPECT_JSONL,
        ) from e
    kind = _doc_kind(doc, path)
    return Detected(kind, doc, None if more else first_line)
