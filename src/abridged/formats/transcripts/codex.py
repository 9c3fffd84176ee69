"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as transcripts.

Each line is ``{"timestamp", "type", "payload"}``:

- ``session_meta``: the session's id, working directory, CLI version, model provider, and the
  model's instructions when the rollout recorded them (``base_instructions``, a string or
  ``{"text": ...}``, and the legacy ``instructions``): they become the leading system message,
  so that what the provider counted is in the transcript (see "hidden prefix" in
  ``abridged.runtime.sizing`` for rollouts without them);
- ``turn_context``: the model (and sandbox, approval policy) of a turn;
- ``response_item``: what the model saw and said, as OpenAI Responses items: ``message`` (user,
  assistant, developer), ``reasoning``, ``function_call`` / ``function_call_output``. They go
  through abridged's Responses converter, which joins the items of one response into one
  assistant message. ``custom_tool_call`` (with its ``input``) and ``local_shell_call`` (with
  its ``action``) are read as function calls, their outputs as function call outputs; items with
  no place in the core model (``ghost_snapshot``, web searches) are skipped and counted in
  ``meta["skipped_items"]``;
- ``event_msg``: events; ``token_count`` events carry the provider's usage of the call just made
  (``info.last_token_usage``), which becomes that reply's usage. The others repeat what the
  response items hold and are skipped, as are ``compacted`` records (Codex's own compaction).

Older rollouts without the envelope (a first line ``{"id", "timestamp", "instructions"}``, then
bare items, with ``{"record_type": "state"}`` lines between) are read too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from abridged.core.model import assign_ids
from abridged.formats.transcripts.reading import (
    LineRejecter,
    convert_messages,
    file_stem,
    jsonl_objects,
    kind_of,
)
from abridged.formats.transcripts.records import CODEX, Transcript, stats_from_messages
from abridged.formats.usage import usage_from_openai

#: Top-level record types of an enveloped rollout.
RECORD_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)
#: Response items the Responses converter reads.
ITEM_TYPES = frozenset({"message", "reasoning", "function_call", "function_call_output"})
#: Items read as function calls / outputs.
CALL_TYPES = frozenset({"custom_tool_call", "local_shell_call"})
OUTPUT_TYPES = frozenset({"custom_tool_call_output", "local_shell_call_output"})
_ASSISTANT_SIDE = frozenset({"reasoning", "function_call"})
EXPECTED = (
    "a Codex rollout line: {'type': 'session_meta' | 'response_item' | ..., 'payload': {...}}"
)


def looks_like_codex(obj: Mapping[str, Any]) -> bool:
    """Whether one JSON Lines object is a line of a Codex rollout (enveloped or legacy)."""
    if kind_of(obj) in RECORD_TYPES and isinstance(obj.get("payload"), Mapping):
        return True
    legacy_meta = "id" in obj and "timestamp" in obj and "instructions" in obj
    return legacy_meta and "type" not in obj and "role" not in obj


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _item(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The payload as an item of the Responses converter, or ``None`` to skip it."""
    kind = payload.get("type")
    if kind in ("function_call_output", *OUTPUT_TYPES):
        return {
            "type": "function_call_output",
            "call_id": str(payload.get("call_id") or payload.get("id") or ""),
            "output": _text(payload.get("output", "")),
        }
    if kind == "custom_tool_call":
        return {
            "type": "function_call",
            "call_id": str(payload.get("call_id") or payload.get("id") or ""),
            "name": str(payload.get("name") or "custom_tool"),
            "arguments": _text(payload.get("input", "")),
        }
    if kind == "local_shell_call":
        return {
            "type": "function_call",
            "call_id": str(payload.get("call_id") or payload.get("id") or ""),
            "name": "local_shell",
            "arguments": json.dumps(payload.get("action") or {}, ensure_ascii=False),
        }
    if kind == "function_call":
        item = {k: v for k, v in payload.items() if k in ("type", "call_id", "name", "arguments")}
        item["arguments"] = _text(payload.get("arguments", ""))
        return item
    if kind == "reasoning":
        return {
            k: v
            for k, v in payload.items()
            if k in ("type", "summary", "content", "encrypted_content")
        }
    if kind == "message":
        role = payload.get("role")
        if role not in ("user", "assistant", "developer", "system"):
            return None
        return {"type": "message", "role": role, "content": payload.get("content", "")}
    return None


def _instructions(payload: Mapping[str, Any]) -> str:
    """The model's instructions a ``session_meta`` recorded (empty when none)."""
    texts = []
    for key in ("base_instructions", "instructions"):
        value = payload.get(key)
        if isinstance(value, Mapping):
            value = value.get("text")
        if isinstance(value, str) and value.strip():
            texts.append(value)
    return "\n\n".join(texts)


def _usage(info: Any) -> dict[str, Any] | None:
    last = info.get("last_token_usage") if isinstance(info, Mapping) else None
    if not isinstance(last, Mapping):
        return None
    return {
        "input_tokens": last.get("input_tokens", 0),
        "output_tokens": last.get("output_tokens", 0),
        "input_tokens_details": {"cached_tokens": last.get("cached_input_tokens", 0)},
        "output_tokens_details": {"reasoning_tokens": last.get("reasoning_output_tokens", 0)},
    }


def _is_assistant_side(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    return kind in _ASSISTANT_SIDE or (kind == "message" and item.get("role") == "assistant")


def load_codex(path: str | Path, *, strict: bool = True) -> Transcript:
    """One Codex rollout file (see the module docstring).

    ``strict=False`` skips lines that cannot be read (``LoaderStats.skipped_lines``). Raises
    ``FormatError`` naming the line and what was expected.
    """
    p = Path(path)
    skipped: list[int] = []
    reject = LineRejecter(CODEX, p, strict, skipped)
    items: list[dict[str, Any]] = []
    lines: list[int] = []
    # usage by the index (in ``items``) of the last assistant-side item before the report
    usages: dict[int, dict[str, Any]] = {}
    meta: dict[str, Any] = {}
    instructions = ""
    skipped_items = 0
    for lineno, obj in jsonl_objects(p, CODEX, strict, skipped):
        kind = kind_of(obj)
        payload = obj.get("payload")
        if "type" in obj and kind is None:
            reject(lineno, "'type' is not a string", field="type", expected=EXPECTED)
            continue
        if kind in RECORD_TYPES:
            if not isinstance(payload, Mapping):
                reject(
                    lineno,
                    f"a {kind} record without a payload object",
                    field="payload",
                    expected=EXPECTED,
                )
                continue
        elif obj.get("record_type") == "state":
            continue
        elif "type" in obj:  # a legacy bare item
            kind, payload = "response_item", obj
        elif "id" in obj and "timestamp" in obj:  # legacy session meta
            kind, payload = "session_meta", obj
        else:
            reject(lineno, "not a Codex rollout record", expected=EXPECTED)
            continue
        assert isinstance(payload, Mapping)
        if kind == "response_item" and kind_of(payload) is None:
            reject(
                lineno,
                "the item's 'type' is not a string",
                field="payload.type",
                expected="a Responses item: an object with a string 'type'",
            )
            continue
        if kind == "session_meta":
            if not instructions:
                instructions = _instructions(payload)
            meta.setdefault("session_id", payload.get("id"))
            for key in ("cwd", "cli_version", "model_provider", "originator"):
                if payload.get(key) and key not in meta:
                    meta[key] = payload[key]
        elif kind == "turn_context":
            if payload.get("model") and "model" not in meta:
                meta["model"] = payload["model"]
        elif kind == "event_msg":
            if payload.get("type") == "token_count":
                usage = _usage(payload.get("info"))
                last = next(
                    (k for k in range(len(items) - 1, -1, -1) if _is_assistant_side(items[k])),
                    None,
                )
                if usage is not None and last is not None:
                    usages[last] = usage
        elif kind == "response_item":
            item = _item(payload)
            if item is None:
                skipped_items += 1
                continue
            items.append(item)
            lines.append(lineno)
    if instructions:
        items.insert(0, {"type": "message", "role": "system", "content": instructions})
        lines.insert(0, 1)
        usages = {k + 1: v for k, v in usages.items()}
        meta["base_instructions"] = True
    messages = _convert(items, lines, usages, p)
    meta = {k: v for k, v in meta.items() if v is not None}
    if skipped_items:
        meta["skipped_items"] = skipped_items
    meta["path"] = str(p)
    tid = str(meta.get("session_id") or file_stem(p))
    stats = stats_from_messages(messages).with_skipped(skipped)
    return Transcript(tid, tuple(messages), CODEX, meta, stats)


def _convert(
    items: list[dict[str, Any]],
    lines: list[int],
    usages: dict[int, dict[str, Any]],
    path: Path,
) -> list[Any]:
    from abridged.formats.openai_responses import messages_from_responses  # noqa: PLC0415

    messages = convert_messages(
        lambda: messages_from_responses(items), CODEX, str(path), None, lines
    )
    # The converter makes one message per non-assistant item and one per run of assistant-side
    # items: find the message of each item to give the reply its usage.
    owner: list[int] = []
    position = -1
    previous_assistant = False
    for item in items:
        assistant = _is_assistant_side(item)
        if not (assistant and previous_assistant):
            position += 1
        owner.append(position)
        previous_assistant = assistant
    out = list(messages)
    for index, report in usages.items():
        k = owner[index]
        if k < len(out) and out[k].role == "assistant":
            usage = usage_from_openai(report)
            if usage is not None:
                derived = out[k].id == "m" + out[k].fingerprint[:20]
                out[k] = out[k].replace(usage=usage, id="" if derived else out[k].id)
    return assign_ids(out)
