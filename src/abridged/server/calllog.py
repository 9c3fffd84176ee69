"""The model calls of each turn, kept in the store at the turn's end (the call inspector reads
them from there: after a restart, and from any worker)."""

from __future__ import annotations

import logging

from abridged.runtime.conversation import CallRecord, Conversation
from abridged.runtime.inspection import call_entry, inspect_call
from abridged.store import CallEntry, Store

__all__ = ["CallMark", "keep_calls", "mark_calls"]

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
    """What the store keeps of ``records``, each inspected part by part (tokens by the
    conversation's calibrated estimate, as the turn counted them)."""
    count = convo.counter
    tools = convo.budget().tools_tokens
    return [
        call_entry(
            inspect_call(
                0,
                epoch=r.epoch,
                messages=r.messages,
                estimate=r.estimate,
                usage=r.usage,
                tokens=lambda m: count.calibration.apply(count.message_tokens(m)),
                retry=r.retry,
                ok=r.ok,
            ),
            tools=tools,
        )
        for r in records
    ]


async def keep_calls(store: Store, convo: Conversation, mark: CallMark, *, tenant: str) -> None:
    """Store the calls ``convo`` made since ``mark``. A failure costs the inspector those
    calls, never the turn: it is logged."""
    records = _since(convo, mark)
    if not records:
        return
    try:
        await store.record_calls(convo.id, entries(convo, records), owner=tenant)
    except Exception as exc:
        log.warning(
            "the turn's model calls were not kept for the inspector: %s",
            type(exc).__name__,
            extra={"event": "calls_not_kept", "conversation_id": convo.id},
        )
