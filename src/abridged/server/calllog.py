"""The model calls of each turn, kept in the store at the turn's end (the call inspector reads
them from there: after a restart, and from any worker)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from abridged.core.model import Message
from abridged.runtime.conversation import CallRecord, Conversation
from abridged.store import CallEntry
from abridged.store.calls import SentRef, summary_digest

__all__ = [
    "CallMark",
    "calls_not_kept",
    "entries",
    "mark_calls",
    "sent_refs",
    "turn_calls",
]

log = logging.getLogger("abridged.server.calls")

#: Where a conversation's call log stood before a turn: its newest record (``None``: empty).
CallMark = CallRecord | None


def mark_calls(convo: Conversation) -> CallMark:
    """The conversation's newest call record now, to find the turn's own calls after it."""
    return convo.call_log[-1] if convo.call_log else None


def _since(convo: Conversation, mark: CallMark) -> list[CallRecord]:
    """The records added after ``mark`` (by identity: the log is bounded, so its length says
    nothing once it is full)."""
    out: list[CallRecord] = []
    for record in reversed(convo.call_log):
        if record is mark:
            break
        out.append(record)
    out.reverse()
    return out


def entries(convo: Conversation, records: list[CallRecord]) -> list[CallEntry]:
    """What the store keeps of ``records``: ``call_entry(inspect_call(...))`` of each (tokens
    by the conversation's calibrated estimate, as the turn counted them), built without the
    inspection's objects of every message (``sent_refs``)."""
    count = convo.counter
    factor = count.calibration.factor  # what ``Calibration.apply`` multiplies by
    tools = convo.budget().tools_tokens
    seen: dict[tuple[int, int, bool, bool], SentRef] = {}  # the calls of a turn share a prefix
    return [
        CallEntry(
            epoch=r.epoch,
            estimate=r.estimate,
            tools=tools,
            usage=r.usage,
            retry=r.retry,
            ok=r.ok,
            sent=sent_refs(
                r.messages,
                tokens=lambda m: round(count.message_tokens(m) * factor),
                cache_read=r.usage.cache_read if r.usage is not None else 0,
                seen=seen,
            ),
        )
        for r in records
    ]


def sent_refs(
    messages: Sequence[Message],
    *,
    tokens: Callable[[Message], int],
    cache_read: int,
    seen: dict[tuple[int, int, bool, bool], SentRef] | None = None,
) -> tuple[SentRef, ...]:
    """``call_entry(inspect_call(...)).sent`` of a call that sent ``messages`` (the provider
    read ``cache_read`` tokens from its cache), in one pass: a call sends the whole context,
    so the inspection's two objects a message cost more than the rest of the turn's steps
    (``bench/service.py``). The rules are ``abridged.runtime.inspection``'s (section, cached
    prefix) and ``abridged.store.calls.reference``'s (where the store finds a message);
    ``tests/server/test_calllog.py`` holds them equal. ``seen`` keeps the references made,
    by message (identity: only while the messages live) and what else decides them, for the
    next call of the same turn to take again."""
    if seen is None:
        seen = {}
    before_summary = any(m.meta.get("kind") == "summary" for m in messages)
    cached_left = cache_read
    out: list[SentRef] = []
    for message in messages:
        meta = message.meta
        summary = meta.get("kind") == "summary"
        if summary:
            before_summary = False
        count = tokens(message)
        cached = 0 < count <= cached_left
        cached_left = cached_left - count if cached else 0
        key = (id(message), count, cached, before_summary)
        known = seen.get(key)
        if known is not None:
            out.append(known)
            continue
        pruned = bool(meta.get("pruned"))
        if message.role == "system":
            section = "system"
        elif summary:
            section = "summary"
        elif pruned:
            section = "pruned"
        else:
            section = "pinned" if before_summary else "kept"
        if summary:
            ref = SentRef(section, count, cached, summary=summary_digest(message))
        elif (
            message.role == "system"
            or not message.id
            or "clipped" in meta
            or meta.get("kind") == "damaged"
        ):
            ref = SentRef(section, count, cached, copy=message)
        else:
            ref = SentRef(section, count, cached, message_id=message.id, pruned=pruned)
        seen[key] = ref
        out.append(ref)
    return tuple(out)


def turn_calls(convo: Conversation, mark: CallMark) -> list[CallEntry]:
    """What the store keeps of the calls ``convo`` made since ``mark`` (kept with the turn's
    release of its lease, ``Store.finish_turn``)."""
    records = _since(convo, mark)
    return entries(convo, records) if records else []


def calls_not_kept(conversation_id: str, exc: BaseException) -> None:
    """Log that a turn's model calls were not kept for the inspector."""
    log.warning(
        "the turn's model calls were not kept for the inspector: %s",
        type(exc).__name__,
        extra={"event": "calls_not_kept", "conversation_id": conversation_id},
    )
