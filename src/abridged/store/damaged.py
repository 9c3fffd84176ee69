"""Damaged message rows in a context: a placeholder in each one's place, tool pairing kept."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from abridged.core.model import Message, Text, ToolCall, ToolResult
from abridged.errors import CorruptRowError
from abridged.store import codec
from abridged.store.records import StoredMessage

#: the text a damaged message is sent as (the model sees that something is missing)
PLACEHOLDER = "[message {seq} could not be read: its stored row is damaged]"


def newest_versions(
    rows: Iterable[Mapping[Any, Any]],
) -> tuple[list[StoredMessage], list[CorruptRowError]]:
    """Rows ordered by (seq, version), decoded to the newest version of each message; a row
    that cannot be decoded becomes a placeholder (its error returned), rebuilt so that every
    tool call keeps a result and every result a call (``validate_messages`` holds)."""
    newest: list[Mapping[Any, Any]] = []
    for row in rows:
        if newest and row["seq"] is not None and newest[-1]["seq"] == row["seq"]:
            newest[-1] = row
        else:
            newest.append(row)
    out: list[StoredMessage] = []
    errors: list[CorruptRowError] = []
    damaged: dict[int, str] = {}  # index -> the role its row names, when it names one
    for row in newest:
        try:
            out.append(codec.stored_message(row))
        except CorruptRowError as exc:
            errors.append(exc)
            role = row.get("role")
            damaged[len(out)] = role if isinstance(role, str) else ""
            out.append(_stand_in(row))
    if damaged:
        _pair(out, damaged)
    return out, errors


def _stand_in(row: Mapping[Any, Any]) -> StoredMessage:
    """What a damaged row is sent as until ``_pair`` gives it its role: a user text."""
    seq = _maybe_int(row.get("seq"))
    mid = row.get("message_id")
    return StoredMessage(
        pk=_maybe_int(row.get("pk")) or 0,
        conversation_id=str(row.get("conversation_id") or ""),
        session_id=str(row.get("session_id") or ""),
        seq=seq,
        version=_maybe_int(row.get("version")) or 0,
        message=Message.user(
            PLACEHOLDER.format(seq="?" if seq is None else seq),
            id=mid if isinstance(mid, str) and mid else f"damaged-{row.get('pk')}",
            meta={"kind": "damaged"},
        ),
        status="delivered",
        model=None,
        ttft_ms=None,
        total_ms=None,
        created_at=codec.now(),
    )


def _maybe_int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError, OverflowError):
        return None


def _step_results(
    out: list[StoredMessage], start: int, damaged: Mapping[int, str], also: int = -1
) -> list[int]:
    """Indices of the messages from ``start`` on that belong to one step's results: those
    carrying tool results, damaged rows that were tool messages, and ``also``."""
    found = []
    for i in range(start, len(out)):
        if i == also or out[i].message.tool_results or damaged.get(i) == "tool":
            found.append(i)
        else:
            break
    return found


def _pair(out: list[StoredMessage], damaged: Mapping[int, str]) -> None:
    """Give each placeholder the role that keeps the pairing valid: a damaged assistant
    message calls the tools whose results follow it; a damaged message in a step answers, as
    an error, the calls of the step left without a result; a damaged tool message with
    nothing left to answer is left out (its error is reported); anything else is a user
    text."""
    for i, role in damaged.items():
        if role != "assistant":
            continue
        results = [
            r for j in _step_results(out, i + 1, damaged) for r in out[j].message.tool_results
        ]
        made = [ToolCall(r.call_id, r.name or "unknown") for r in results]
        text = out[i].message.text
        out[i] = _with(out[i], Message.assistant(text, tool_calls=made, id=out[i].message.id))
    dropped: set[int] = set()
    for i, role in damaged.items():
        if role == "assistant":
            continue
        start = i
        while start > 0 and (
            out[start - 1].message.tool_results or damaged.get(start - 1) == "tool"
        ):
            start -= 1
        caller = out[start - 1].message if start > 0 else None
        calls = caller.tool_calls if caller is not None and caller.role == "assistant" else ()
        step = _step_results(out, start, damaged, also=i)
        answered = {r.call_id for j in step for r in out[j].message.tool_results}
        open_calls = [c for c in calls if c.id not in answered]
        text = out[i].message.text
        if open_calls:
            errors = tuple(ToolResult(c.id, c.name, (Text(text),), True) for c in open_calls)
            out[i] = _with(out[i], Message("tool", errors, id=out[i].message.id))
        elif role == "tool":
            dropped.add(i)
    if dropped:
        out[:] = [m for i, m in enumerate(out) if i not in dropped]


def _with(stored: StoredMessage, message: Message) -> StoredMessage:
    meta = dict(message.meta)
    meta["kind"] = "damaged"
    return dataclasses.replace(stored, message=message.replace(meta=meta))
