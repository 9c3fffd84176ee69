"""Rows to values and back: messages as ``message_to_dict`` JSON, decoded one row at a time."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import DateTime, String, Table, type_coerce
from sqlalchemy.engine import RowMapping
from sqlalchemy.sql.elements import ColumnElement

from abridged.core.model import Message, message_from_dict, message_to_dict
from abridged.errors import CorruptRowError, FormatError
from abridged.store.records import (
    STATUSES,
    CompactionRecord,
    ConversationInfo,
    DeliveryStatus,
    Reason,
    SessionInfo,
    SessionTotals,
    StoredCompaction,
    StoredMessage,
    StoredSummary,
)

#: What decoding a damaged column can raise (a JSON error is a ValueError; too deep a nesting
#: a RecursionError; ``1e999`` an OverflowError once made an integer): each becomes a
#: ``CorruptRowError`` naming the row, so that one bad row never costs the whole query.
DECODE_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    ArithmeticError,
    RecursionError,
)

_USAGE_COLUMNS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_tokens"),
    ("cache_write", "cache_write_tokens"),
    ("reasoning", "reasoning_tokens"),
)


MESSAGE_COLUMNS = ("message_id", "role", "parts", "meta", *(c for _, c in _USAGE_COLUMNS))
"""The columns ``message_columns`` fills."""

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
    return escape_surrogates(text)


def escape_surrogates(text: str) -> str:
    """``text`` (JSON) with each lone surrogate written as its JSON escape (see ``dumps``)."""
    if text.isascii():  # nearly always, and far cheaper than the search
        return text
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


def columns(table: Table) -> list[ColumnElement[Any]]:
    """The columns of ``table`` to select, its timestamps read as they are stored (text on
    SQLite) and decoded row by row by ``stamp``: SQLAlchemy would decode them while fetching,
    so that one bad date failed the whole query."""
    return [
        type_coerce(c, String()).label(c.name) if isinstance(c.type, DateTime) else c
        for c in table.c
    ]


def stamp(value: object) -> datetime:
    """A stored timestamp (a datetime, or SQLite's text) in UTC; ``ValueError`` otherwise."""
    if isinstance(value, datetime):
        return aware(value)
    if isinstance(value, str):
        return aware(datetime.fromisoformat(value))
    raise ValueError(f"not a timestamp: {type(value).__name__}")


def _opt_stamp(value: object) -> datetime | None:
    return None if value is None else stamp(value)


def _int(value: object) -> int:
    """An integer column (SQLite keeps text in one): ``ValueError`` unless it is an integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"not an integer: {value!r:.40}")
    return value


def _opt_int(value: object) -> int | None:
    return None if value is None else _int(value)


def _opt_float(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"not a number: {value!r:.40}")
    return float(value)


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a text: {value!r:.40}")
    return value


def _opt_str(value: object) -> str | None:
    return None if value is None else _str(value)


def _paths(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"not a list of paths: {value!r:.40}")
    return tuple(_str(p) for p in value)


def _json(text: object, what: str, context: Mapping[str, Any]) -> Any:
    try:
        return json.loads(cast(str, text))
    except DECODE_ERRORS as exc:
        raise CorruptRowError(f"stored {what} is not valid JSON: {exc}", **context) from exc


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


#: ``FormatError.format`` of an id no database can hold
ID_FORMAT = "abridged id"


def check_id(value: object, field: str, **context: Any) -> str:
    """``value`` when it can name a row: a string with no NUL and no lone surrogate (neither
    database can store them; the drivers fail in ways that read as an outage), else
    ``FormatError`` naming the field, raised before any statement carries it."""
    if isinstance(value, str) and "\x00" not in value:
        if value.isascii():
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return value
    raise FormatError(
        f"a {field.replace('_', ' ')} must be text without NUL characters or lone surrogates",
        format=ID_FORMAT,
        field=field,
        value=ascii(value)[:80],
        **context,
    )


def idempotency_key(message: Message) -> str | None:
    """The key a second append of ``message`` is recognised by: its id when the id was chosen
    (a client's, the runtime's), ``None`` when it is ``Message``'s default, derived from the
    content (two messages saying "yes" are two messages, not one sent twice)."""
    mid = message.id
    if len(mid) == 21 and mid[0] == "m" and mid == "m" + message.fingerprint[:20]:
        return None
    return mid


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
    except DECODE_ERRORS:
        return None
    calls = [r.call_id for r in original.tool_results]
    if [r.call_id for r in pruned.tool_results] != calls or not calls:
        return None
    return pruned.replace(usage=original.usage) if original.usage is not None else pruned


def stored_message(row: Mapping[Any, Any]) -> StoredMessage:
    """Decode one message row; a row that cannot be decoded (any column) raises
    ``CorruptRowError`` naming the conversation, the message's sequence number and id."""
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
            data["usage"] = {field: _int(row[col] or 0) for field, col in _USAGE_COLUMNS}
        message = message_from_dict(data)
        status = row["status"]
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r:.40}")
        return StoredMessage(
            pk=_int(row["pk"]),
            conversation_id=_str(row["conversation_id"]),
            session_id=_str(row["session_id"]),
            seq=_opt_int(row["seq"]),
            version=_int(row["version"]),
            message=message,
            status=cast(DeliveryStatus, status),
            model=_opt_str(row["model"]),
            ttft_ms=_opt_float(row["ttft_ms"]),
            total_ms=_opt_float(row["total_ms"]),
            created_at=stamp(row["created_at"]),
        )
    except DECODE_ERRORS as exc:
        raise CorruptRowError(
            f"stored message cannot be decoded: {exc}",
            conversation_id=row.get("conversation_id"),
            seq=row.get("seq"),
            message_id=row.get("message_id"),
            version=row.get("version"),
        ) from exc


def loads_object(text: str | None, *, what: str, **context: Any) -> dict[str, Any]:
    """A JSON object stored as text; anything else raises ``CorruptRowError`` with ``context``."""
    if text is None:
        return {}
    value = _json(text, what, context)
    if not isinstance(value, dict):
        raise CorruptRowError(f"stored {what} is not a JSON object", **context)
    return value


def loads_list(text: str | None, *, what: str, **context: Any) -> list[Any]:
    """A JSON array stored as text; anything else raises ``CorruptRowError`` with ``context``."""
    if text is None:
        return []
    value = _json(text, what, context)
    if not isinstance(value, list):
        raise CorruptRowError(f"stored {what} is not a JSON array", **context)
    return value


def summary(row: RowMapping | None, prefix: str = "") -> StoredSummary | None:
    """A summary from a row (columns optionally prefixed, for joins); ``None`` when absent.
    ``CorruptRowError`` names the conversation and the summary when a column is damaged."""
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
        seqs = tuple(_int(s) for s in carried)
        files = {str(k): _paths(v) for k, v in ops.items()}
        text, meta = text_from_storage(_str(row[prefix + "text"]), meta)
        return StoredSummary(
            text=text,
            meta=meta,
            id=_str(row[prefix + "id"]),
            covers_to_seq=_opt_int(row[prefix + "covers_to_seq"]),
            carried_seqs=seqs,
            file_ops=files,
        )
    except DECODE_ERRORS as exc:
        raise CorruptRowError(f"summary columns cannot be decoded: {exc}", **context) from exc


def vector(text: object, **context: Any) -> list[float]:
    """A stored embedding (a JSON array of numbers); ``CorruptRowError`` with ``context``."""
    values = loads_list(cast(str, text), what="embedding", **context)
    try:
        return [float(_opt_float(v) or 0.0) for v in values]
    except DECODE_ERRORS as exc:
        raise CorruptRowError(f"stored embedding is malformed: {exc}", **context) from exc


def totals(row: RowMapping) -> SessionTotals | None:
    """The stored totals of a finalised session (``None`` before finalisation)."""
    if row["message_count"] is None:
        return None
    return SessionTotals(
        messages=_int(row["message_count"]),
        input=_int(row["input_tokens"] or 0),
        output=_int(row["output_tokens"] or 0),
        cache_read=_int(row["cache_read_tokens"] or 0),
        cache_write=_int(row["cache_write_tokens"] or 0),
        reasoning=_int(row["reasoning_tokens"] or 0),
    )


def session_info(
    row: RowMapping,
    *,
    start: StoredSummary | None,
    final: StoredSummary | None,
    current_id: str | None,
    live: SessionTotals | None = None,
) -> SessionInfo:
    """A session from its row and its summaries; ``CorruptRowError`` names the conversation
    and the session when a column is damaged."""
    try:
        return SessionInfo(
            id=_str(row["id"]),
            conversation_id=_str(row["conversation_id"]),
            number=_int(row["number"]),
            parent_id=_opt_str(row["parent_id"]),
            reason=cast(Reason, _str(row["reason"])),
            carry_from=_int(row["carry_from"]),
            start_seq=_int(row["start_seq"]),
            start_summary=start,
            final_summary=final,
            finalized_at=_opt_stamp(row["finalized_at"]),
            totals=live if live is not None else totals(row),
            created_at=stamp(row["created_at"]),
            is_current=row["id"] == current_id,
        )
    except DECODE_ERRORS as exc:
        raise CorruptRowError(
            f"stored session cannot be decoded: {exc}",
            conversation_id=row.get("conversation_id"),
            session_id=row.get("id"),
        ) from exc


def check_conversation(row: RowMapping) -> RowMapping:
    """The conversation's row, once the single writer's columns (version, next sequence
    number, prune boundary) are known to be integers; ``CorruptRowError`` otherwise."""
    try:
        for name in ("version", "next_seq", "prune_boundary"):
            _int(row[name])
        _opt_int(row["resummarize_from"])
    except DECODE_ERRORS as exc:
        raise CorruptRowError(
            f"stored conversation cannot be decoded: {exc}", conversation_id=row.get("id")
        ) from exc
    return row


def conversation_info(row: Mapping[Any, Any]) -> ConversationInfo:
    """A conversation from its row; ``CorruptRowError`` names it when a column is damaged."""
    settings = loads_object(row["settings"], what="settings", conversation_id=row["id"])
    try:
        return ConversationInfo(
            id=_str(row["id"]),
            owner=_opt_str(row["owner"]),
            model=_opt_str(row["model"]),
            settings=settings,
            version=_int(row["version"]),
            next_seq=_int(row["next_seq"]),
            current_session_id=_opt_str(row["current_session_id"]),
            prune_boundary=_int(row["prune_boundary"]),
            resummarize_from=_opt_int(row["resummarize_from"]),
            created_at=stamp(row["created_at"]),
            updated_at=stamp(row["updated_at"]),
            name=_str(row["name"] if row["name"] is not None else row["id"]),
        )
    except DECODE_ERRORS as exc:
        raise CorruptRowError(
            f"stored conversation cannot be decoded: {exc}", conversation_id=row.get("id")
        ) from exc


def stored_compaction(row: RowMapping, summary: StoredSummary | None) -> StoredCompaction:
    """A committed compaction from its row and its summary (``None``: deleted with its
    session); ``CorruptRowError`` names the conversation and the compaction."""
    context = {"conversation_id": row.get("conversation_id"), "compaction_id": row.get("id")}
    ops = loads_object(row["file_ops"], what="compaction file ops", **context)
    try:
        record = CompactionRecord(
            cut_seq=_int(row["cut_seq"]),
            summary=summary if summary is not None else StoredSummary("", {"deleted": True}),
            trigger=_str(row["trigger"]),
            tokens_before=_int(row["tokens_before"]),
            tokens_after=_int(row["tokens_after"]),
            file_ops={str(k): _paths(v) for k, v in ops.items()},
            duration_ms=float(_opt_float(row["duration_ms"]) or 0.0),
            summarizer=_opt_str(row["summarizer"]),
        )
        return StoredCompaction(
            id=_str(row["id"]),
            conversation_id=_str(row["conversation_id"]),
            session_id=_str(row["session_id"]),
            child_session_id=_str(row["child_session_id"]),
            record=record,
            version=_int(row["version"]),
            created_at=stamp(row["created_at"]),
        )
    except DECODE_ERRORS as exc:
        raise CorruptRowError(f"stored compaction cannot be decoded: {exc}", **context) from exc
