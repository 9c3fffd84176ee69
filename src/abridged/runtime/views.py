"""What users are shown of a stored conversation's sessions and compactions: one pydantic model
each, the same JSON in ``abridged sessions show --json`` and in the HTTP API.

``SessionView.of`` and ``CompactionView.of`` turn the store's records into them. A field either
surface printed before is kept (the API's flat token figures beside the CLI's ``totals``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from abridged.store import SessionInfo, SessionTotals, StoredCompaction, StoredSummary

__all__ = ["CompactionView", "SessionView", "SummaryView", "TotalsView"]


class TotalsView(BaseModel):
    """What a session's messages hold and cost: count and the provider's token figures."""

    messages: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    reasoning: int

    @classmethod
    def of(cls, totals: SessionTotals | None) -> TotalsView | None:
        """The view of ``totals`` (``None`` stays ``None``)."""
        if totals is None:
            return None
        return cls(
            messages=totals.messages,
            input=totals.input,
            output=totals.output,
            cache_read=totals.cache_read,
            cache_write=totals.cache_write,
            reasoning=totals.reasoning,
        )


class SummaryView(BaseModel):
    """A stored summary: its text, the messages it covers and its metadata."""

    id: str | None
    text: str
    covers_to_seq: int | None
    meta: dict[str, Any]

    @classmethod
    def of(cls, summary: StoredSummary | None) -> SummaryView | None:
        """The view of ``summary`` (``None`` stays ``None``)."""
        if summary is None:
            return None
        return cls(
            id=summary.id,
            text=summary.text,
            covers_to_seq=summary.covers_to_seq,
            meta=dict(summary.meta),
        )


class SessionView(BaseModel):
    """A session of a conversation: why it started, where its context starts, its summaries
    (``summary``: the final one, else the one it started from) and totals."""

    id: str
    number: int
    parent_id: str | None
    reason: str
    carry_from: int
    start_seq: int
    current: bool
    created_at: datetime
    finalized_at: datetime | None
    totals: TotalsView | None
    start_summary: SummaryView | None
    final_summary: SummaryView | None
    summary: str | None
    messages: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int

    @classmethod
    def of(cls, info: SessionInfo) -> SessionView:
        """The view of a stored session."""
        summary = info.final_summary or info.start_summary
        totals = info.totals or SessionTotals()
        return cls(
            id=info.id,
            number=info.number,
            parent_id=info.parent_id,
            reason=info.reason,
            carry_from=info.carry_from,
            start_seq=info.start_seq,
            current=info.is_current,
            created_at=info.created_at,
            finalized_at=info.finalized_at,
            totals=TotalsView.of(info.totals),
            start_summary=SummaryView.of(info.start_summary),
            final_summary=SummaryView.of(info.final_summary),
            summary=summary.text if summary is not None else None,
            messages=totals.messages,
            input_tokens=totals.input,
            output_tokens=totals.output,
            cache_read_tokens=totals.cache_read,
        )


class CompactionView(BaseModel):
    """A committed compaction: the sessions it linked, where it cut, the summary it made."""

    id: str
    session_id: str
    child_session_id: str
    trigger: str
    cut_seq: int
    tokens_before: int
    tokens_after: int
    summary: str
    summarizer: str | None
    duration_ms: float
    created_at: datetime

    @classmethod
    def of(cls, compaction: StoredCompaction) -> CompactionView:
        """The view of a committed compaction."""
        record = compaction.record
        return cls(
            id=compaction.id,
            session_id=compaction.session_id,
            child_session_id=compaction.child_session_id,
            trigger=record.trigger,
            cut_seq=record.cut_seq,
            tokens_before=record.tokens_before,
            tokens_after=record.tokens_after,
            summary=record.summary.text,
            summarizer=record.summarizer,
            duration_ms=record.duration_ms,
            created_at=compaction.created_at,
        )
