"""The transcript shapes: each file format's content turned into a ``Transcript``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from abridged.core.model import ROLES, Message, assign_ids, message_from_dict
from abridged.errors import FormatError
from abridged.formats.transcripts.reading import (
    ANTHROPIC_ROLES,
    FOREIGN_KEYS,
    OPENAI_ROLES,
    attach_usage,
    check_roles,
    convert_messages,
    file_stem,
    jsonl_objects,
    messages_of,
)
from abridged.formats.transcripts.records import (
    ABRIDGED_JSON,
    ABRIDGED_JSONL,
    ANTHROPIC_MESSAGES,
    MINI_SWE_AGENT_TRAJ,
    OPENAI_CHAT,
    SWEBENCH_JSONL,
    LoaderStats,
    Transcript,
    stats_from_messages,
)
from abridged.formats.transcripts.text_protocol import messages_from_text_protocol
from abridged.formats.usage import usage_from_anthropic, usage_from_openai


def _openai_messages(
    items: Sequence[Any], fmt: str, path: str, line: int | None, lines: Sequence[int] | None = None
) -> list[Message]:
    from abridged.formats.openai_chat import messages_from_openai  # noqa: PLC0415

    check_roles(items, OPENAI_ROLES, fmt=fmt, path=path, line=line, lines=lines)
    cleaned = [{k: v for k, v in item.items() if k not in FOREIGN_KEYS} for item in items]
    messages = convert_messages(lambda: messages_from_openai(cleaned), fmt, path, line, lines)
    return assign_ids(attach_usage(messages, items, usage_from_openai))


def _is_native(items: Sequence[Any]) -> bool:
    return any(
        isinstance(item, Mapping) and (item.get("role") == "tool" or item.get("tool_calls"))
        for item in items
    )


def _agent_session(
    items: Sequence[Any], tid: str, fmt: str, path: str, line: int | None
) -> tuple[list[Message], LoaderStats, str]:
    """Messages, stats and tool protocol of one mini-swe-agent session."""
    if _is_native(items):
        messages = _openai_messages(items, fmt, path, line)
        return messages, stats_from_messages(messages), "native"
    messages, stats = messages_from_text_protocol(
        items, transcript_id=tid, format=fmt, path=path, line=line
    )
    return messages, stats, "text"


def swebench_session(obj: Any, path: Path, line: int | None, seen: set[str]) -> Transcript:
    fmt = SWEBENCH_JSONL
    items = messages_of(obj, fmt, str(path), line)
    instance_id = obj.get("instance_id")
    tid = str(instance_id) if instance_id else f"{file_stem(path)}:{line or 1}"
    if tid in seen:
        tid = f"{tid}@{line}"
    messages, stats, protocol = _agent_session(items, tid, fmt, str(path), line)
    seen.add(tid)
    meta = {k: v for k, v in obj.items() if k != "messages"}
    meta.update(path=str(path), line=line, tool_protocol=protocol)
    return Transcript(tid, tuple(messages), fmt, meta, stats)


def traj_transcript(doc: Any, path: Path) -> Transcript:
    fmt = MINI_SWE_AGENT_TRAJ
    items = messages_of(doc, fmt, str(path), None)
    info = doc.get("info") if isinstance(doc.get("info"), Mapping) else {}
    instance_id = doc.get("instance_id") or info.get("instance_id")
    tid = str(instance_id) if instance_id else file_stem(path)
    messages, stats, protocol = _agent_session(items, tid, fmt, str(path), None)
    config = info.get("config")
    model_config = config.get("model") if isinstance(config, Mapping) else None
    model = model_config.get("model_name") if isinstance(model_config, Mapping) else None
    # Only named facts: info.config may hold credentials (model_kwargs.api_key) and is not copied.
    meta = {
        "instance_id": instance_id,
        "model": model,
        "exit_status": info.get("exit_status"),
        "submission": info.get("submission"),
        "model_stats": info.get("model_stats"),
        "mini_version": info.get("mini_version"),
        "trajectory_format": doc.get("trajectory_format"),
        "path": str(path),
        "tool_protocol": protocol,
    }
    meta = {k: v for k, v in meta.items() if v is not None}
    return Transcript(tid, tuple(messages), fmt, meta, stats)


def _top_meta(doc: Any, path: Path, skip: Sequence[str]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if isinstance(doc, Mapping):
        meta = {
            k: v
            for k, v in doc.items()
            if k not in skip and (v is None or isinstance(v, str | int | float | bool))
        }
    meta["path"] = str(path)
    return meta


def _doc_id(doc: Any, path: Path) -> str:
    value = doc.get("id") if isinstance(doc, Mapping) else None
    return str(value) if value else file_stem(path)


def openai_transcript(doc: Any, path: Path) -> Transcript:
    items = doc if isinstance(doc, list) else messages_of(doc, OPENAI_CHAT, str(path), None)
    messages = _openai_messages(items, OPENAI_CHAT, str(path), None)
    meta = _top_meta(doc, path, ("messages", "id"))
    return Transcript(
        _doc_id(doc, path), tuple(messages), OPENAI_CHAT, meta, stats_from_messages(messages)
    )


def anthropic_transcript(doc: Any, path: Path) -> Transcript:
    from abridged.formats.anthropic_messages import messages_from_anthropic  # noqa: PLC0415

    fmt = ANTHROPIC_MESSAGES
    items = doc if isinstance(doc, list) else messages_of(doc, fmt, str(path), None)
    system = doc.get("system") if isinstance(doc, Mapping) else None
    check_roles(items, ANTHROPIC_ROLES, fmt=fmt, path=str(path))
    cleaned = [{k: v for k, v in item.items() if k not in FOREIGN_KEYS} for item in items]
    converted = convert_messages(
        lambda: messages_from_anthropic(cleaned, system=system), fmt, str(path), None
    )
    messages = assign_ids(attach_usage(converted, items, usage_from_anthropic))
    meta = _top_meta(doc, path, ("messages", "id", "system"))
    return Transcript(_doc_id(doc, path), tuple(messages), fmt, meta, stats_from_messages(messages))


def _abridged_message(item: Any, index: int, fmt: str, path: str, line: int | None) -> Message:
    check_roles([item], ROLES, fmt=fmt, path=path, line=line, start=index)
    try:
        return message_from_dict(item)
    except (KeyError, TypeError, ValueError) as e:
        raise FormatError(
            f"message {index}: {e!r}",
            format=fmt,
            path=path,
            line=line,
            index=index,
            expected="a message in abridged's message_to_dict form",
        ) from e


def abridged_transcript(doc: Any, path: Path) -> Transcript:
    items = doc if isinstance(doc, list) else messages_of(doc, ABRIDGED_JSON, str(path), None)
    messages = assign_ids(
        [_abridged_message(item, i, ABRIDGED_JSON, str(path), None) for i, item in enumerate(items)]
    )
    meta: dict[str, Any] = {}
    if isinstance(doc, Mapping):
        meta = dict(doc.get("meta") or {})
        if doc.get("source_format"):
            meta.setdefault("source_format", doc["source_format"])
    meta["path"] = str(path)
    return Transcript(
        _doc_id(doc, path), tuple(messages), ABRIDGED_JSON, meta, stats_from_messages(messages)
    )


def message_jsonl(path: Path, fmt: str, strict: bool) -> Transcript:
    """One transcript from a file of one message per line."""
    skipped: list[int] = []
    items: list[dict[str, Any]] = []
    lines: list[int] = []
    messages: list[Message] = []
    roles = ROLES if fmt == ABRIDGED_JSONL else OPENAI_ROLES
    for lineno, obj in jsonl_objects(path, fmt, strict, skipped):
        try:
            check_roles([obj], roles, fmt=fmt, path=str(path), line=lineno, start=len(items))
            if fmt == ABRIDGED_JSONL:
                messages.append(_abridged_message(obj, len(items), fmt, str(path), lineno))
        except FormatError:
            if strict:
                raise
            skipped.append(lineno)
            continue
        items.append(obj)
        lines.append(lineno)
    if fmt == ABRIDGED_JSONL:
        messages = assign_ids(messages)
    else:
        messages = _openai_messages(items, fmt, str(path), None, lines)
    stats = stats_from_messages(messages).with_skipped(skipped)
    return Transcript(file_stem(path), tuple(messages), fmt, {"path": str(path)}, stats)


DOC_LOADERS: dict[str, Callable[[Any, Path], Transcript]] = {
    MINI_SWE_AGENT_TRAJ: traj_transcript,
    OPENAI_CHAT: openai_transcript,
    ANTHROPIC_MESSAGES: anthropic_transcript,
    ABRIDGED_JSON: abridged_transcript,
}
