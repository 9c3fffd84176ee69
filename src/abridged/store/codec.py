"""Rows to values and back: messages as ``message_to_dict`` JSON, decoded one row at a time."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy.engine import RowMapping

from abridged.core.model import Message, message_from_dict, message_to_dict
from abridged.errors import CorruptRowError
from abridged.store.records import (
    ConversationInfo,
    DeliveryStatus,
    Reason,
    SessionInfo,
    SessionTotals,
    StoredMessage,
    StoredSummary,
)

_USAGE_COLUMNS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_tokens"),
    ("cache_write", "cache_write_tokens"),
    ("reasoning", "reasoning_tokens"),
)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(value: Any) -> str:
    """Compact, stable JSON text.

    A lone surrogate (valid in JSON, and sent by providers and tools) cannot be encoded as UTF-8,
    so neither database takes it raw: it is written as its JSON escape (``\\ud800``), which
    ``json.loads`` reads back to the same string. Everything else stays unescaped.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return _LONE_SURROGATE.sub(_escape_surrogate, text)


SURROGATES_KEY = "_abridged_lone_surrogates"
"""The summary-metadata key recording the lone surrogates replaced in its stored text."""


def text_for_storage(text: str, meta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A text column's value and its metadata, with each lone surrogate replaced by U+FFFD and
    the replacement recorded (``[index, code point]`` pairs) so ``text_from_storage`` restores it:
    databases store UTF-8, which cannot hold a lone surrogate."""
    found = [[m.start(), ord(m.group())] for m in _LONE_SURROGATE.finditer(text)]
    if not found:
        return text, meta
    return _LONE_SURROGATE.sub("\ufffd", text), {**meta, SURROGATES_KEY: found}


def text_from_storage(text: str, meta: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The text and metadata ``text_for_storage`` was given (a damaged record is ignored: the
    text then keeps its U+FFFD replacements)."""
    if SURROGATES_KEY not in meta:
        return text, meta
    meta = dict(meta)
    found = meta.pop(SURROGATES_KEY)
    chars = list(text)
    try:
        for index, code in found:
            if chars[index] == "\ufffd" and 0xD800 <= code <= 0xDFFF:
                chars[index] = chr(code)
    except (TypeError, ValueError, IndexError):
        return text, meta
    return "".join(chars), meta


def now() -> datetime:
    """The current time, in UTC."""
    return datetime.now(UTC)


def aware(value: datetime) -> datetime:
    """A datetime read back from the database, in UTC (SQLite drops the zone)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def message_columns(message: Message) -> dict[str, Any]:
    """The columns a message is stored in: role, id, parts/meta JSON and the usage columns."""
    data = message_to_dict(message)
    row: dict[str, Any] = {
        "message_id": message.id,
        "role": message.role,
        "parts": dumps(data["parts"]),
        "meta": dumps(data["meta"]) if "meta" in data else None,
    }
    usage = message.usage
    for field, column in _USAGE_COLUMNS:
        row[column] = getattr(usage, field) if usage is not None else None
    return row


def pruned_columns(message: Message) -> dict[str, Any]:
    """The columns of a message's pruned form: its parts and meta JSON (id, role and usage
    are the stored message's)."""
    data = message_to_dict(message)
    return {"parts": dumps(data["parts"]), "meta": dumps(data["meta"]) if "meta" in data else None}


def pruned_message(row: RowMapping, original: Message) -> Message | None:
    """The pruned form of ``original`` stored in ``row``; ``None`` when it no longer fits it
    (the message was edited since: other tool results) or cannot be decoded (a corrupt row
    costs the prune, never the conversation)."""
    try:
        data: dict[str, Any] = {
            "id": original.id,
            "role": original.role,
            "parts": json.loads(row["parts"]),
        }
        if row["meta"] is not None:
            data["meta"] = json.loads(row["meta"])
        pruned = message_from_dict(data)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    calls = [r.call_id for r in original.tool_results]
    if [r.call_id for r in pruned.tool_results] != calls or not calls:
        return None
    return pruned.replace(usage=original.usage) if original.usage is not None else pruned


def stored_message(row: RowMapping) -> StoredMessage:
    """Decode one message row; a row that cannot be decoded raises ``CorruptRowError`` naming
    the conversation, the message's sequence number and id."""
    try:
        data: dict[str, Any] = {
            "id": row["message_id"],
            "role": row["role"],
            "parts": json.loads(row["parts"]),
        }
        if row["meta"] is not None:
            data["meta"] = json.loads(row["meta"])
        if not isinstance(data["parts"], list):
            raise ValueError("parts is not a list")
        if "meta" in data and not isinstance(data["meta"], dict):
            raise ValueError("meta is not an object")
        if row["input_tokens"] is not None:
            data["usage"] = {field: int(row[col] or 0) for field, col in _USAGE_COLUMNS}
        message = message_from_dict(data)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CorruptRowError(
            f"stored message cannot be decoded: {exc}",
            conversation_id=row["conversation_id"],
            seq=row["seq"],
            message_id=row["message_id"],
            version=row["version"],
        ) from exc
    return StoredMessage(
        pk=int(row["pk"]),
        conversation_id=row["conversation_id"],
        session_id=row["session_id"],
        seq=row["seq"],
        version=int(row["version"]),
        message=message,
        status=cast(DeliveryStatus, row["status"]),
        model=row["model"],
        ttft_ms=row["ttft_ms"],
        total_ms=row["total_ms"],
        created_at=aware(row["created_at"]),
    )


def loads_object(text: str | None, *, what: str, **context: Any) -> dict[str, Any]:
    """A JSON object stored as text; anything else raises ``CorruptRowError`` with ``context``."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CorruptRowError(f"stored {what} is not valid JSON: {exc}", **context) from exc
    if not isinstance(value, dict):
        raise CorruptRowError(f"stored {what} is not a JSON object", **context)
    return value


def loads_list(text: str | None, *, what: str, **context: Any) -> list[Any]:
    """A JSON array stored as text; anything else raises ``CorruptRowError`` with ``context``."""
    if text is None:
        return []
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CorruptRowError(f"stored {what} is not valid JSON: {exc}", **context) from exc
    if not isinstance(value, list):
        raise CorruptRowError(f"stored {what} is not a JSON array", **context)
    return value


def summary(row: RowMapping | None, prefix: str = "") -> StoredSummary | None:
    """A summary from a row (columns optionally prefixed, for joins); ``None`` when absent."""
    if row is None or row[prefix + "id"] is None:
        return None
    context = {
        "conversation_id": row.get(prefix + "conversation_id"),
        "summary_id": row[prefix + "id"],
    }
    meta = loads_object(row[prefix + "meta"], what="summary metadata", **context)
    carried = loads_list(row[prefix + "carried_seqs"], what="summary carried messages", **context)
    ops = loads_object(row[prefix + "file_ops"], what="summary file operations", **context)
    try:
        seqs = tuple(int(s) for s in carried)
        files = {str(k): tuple(str(p) for p in v) for k, v in ops.items()}
    except (TypeError, ValueError) as exc:
        raise CorruptRowError(f"summary columns cannot be decoded: {exc}", **context) from exc
    text, meta = text_from_storage(row[prefix + "text"], meta)
    return StoredSummary(
        text=text,
        meta=meta,
        id=row[prefix + "id"],
        covers_to_seq=int(row[prefix + "covers_to_seq"]),
        carried_seqs=seqs,
        file_ops=files,
    )


def totals(row: RowMapping) -> SessionTotals | None:
    """The stored totals of a finalised session (``None`` before finalisation)."""
    if row["message_count"] is None:
        return None
    return SessionTotals(
        messages=int(row["message_count"]),
        input=int(row["input_tokens"] or 0),
        output=int(row["output_tokens"] or 0),
        cache_read=int(row["cache_read_tokens"] or 0),
        cache_write=int(row["cache_write_tokens"] or 0),
        reasoning=int(row["reasoning_tokens"] or 0),
    )


def session_info(
    row: RowMapping,
    *,
    start: StoredSummary | None,
    final: StoredSummary | None,
    current_id: str | None,
    live: SessionTotals | None = None,
) -> SessionInfo:
    """A session from its row and its summaries."""
    return SessionInfo(
        id=row["id"],
        conversation_id=row["conversation_id"],
        number=int(row["number"]),
        parent_id=row["parent_id"],
        reason=cast(Reason, row["reason"]),
        carry_from=int(row["carry_from"]),
        start_seq=int(row["start_seq"]),
        start_summary=start,
        final_summary=final,
        finalized_at=aware(row["finalized_at"]) if row["finalized_at"] is not None else None,
        totals=live if live is not None else totals(row),
        created_at=aware(row["created_at"]),
        is_current=row["id"] == current_id,
    )


def conversation_info(row: RowMapping) -> ConversationInfo:
    """A conversation from its row."""
    return ConversationInfo(
        id=row["id"],
        owner=row["owner"],
        model=row["model"],
        settings=loads_object(row["settings"], what="settings", conversation_id=row["id"]),
        version=int(row["version"]),
        next_seq=int(row["next_seq"]),
        current_session_id=row["current_session_id"],
        prune_boundary=int(row["prune_boundary"]),
        resummarize_from=row["resummarize_from"],
        created_at=aware(row["created_at"]),
        updated_at=aware(row["updated_at"]),
    )
