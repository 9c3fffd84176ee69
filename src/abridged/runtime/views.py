"""What users are shown of a stored conversation, its sessions and compactions: one pydantic model
each, the same JSON in ``abridged sessions show --json`` and in the HTTP API.

``SessionView.of``, ``CompactionView.of``, ``ConversationView.of`` and ``SessionHitView.found``
(a session found by ``abridged sessions search --json`` and ``GET .../sessions/search``) turn
the store's records into them. A field either surface printed before is kept (the API's flat
token figures beside the CLI's ``totals``). The HTTP API shows a conversation in its own shape
(``abridged.server.schemas.ConversationOut``): a tenant sees its own name for it as ``id``, never
the store's key, its owner or the writer's version.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from abridged.store import (
    ConversationInfo,
    SearchHit,
    SessionInfo,
    SessionTotals,
    StoredCompaction,
    StoredSummary,
)

__all__ = [
    "CompactionView",
    "ConversationView",
    "SessionHitView",
    "SessionView",
    "SummaryView",
    "TotalsView",
]


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

    @classmethod
    def over(cls, sessions: Iterable[SessionInfo]) -> TotalsView:
        """The totals of ``sessions`` together (a conversation's)."""
        each = [s.totals for s in sessions if s.totals is not None]
        return cls(
            messages=sum(t.messages for t in each),
            input=sum(t.input for t in each),
            output=sum(t.output for t in each),
            cache_read=sum(t.cache_read for t in each),
            cache_write=sum(t.cache_write for t in each),
            reasoning=sum(t.reasoning for t in each),
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
    (``summary``: the final one, else the one it started from), ``gist`` (the line that tells
    it apart, as ``/resume`` lists it: ``runtime.commands.session_gists``; empty where not
    computed) and totals."""

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
    gist: str = ""
    messages: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int

    @classmethod
    def of(cls, info: SessionInfo, gist: str = "") -> SessionView:
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
            gist=gist,
            messages=totals.messages,
            input_tokens=totals.input,
            output_tokens=totals.output,
            cache_read_tokens=totals.cache_read,
        )


class SessionHitView(SessionView):
    """A session whose summary matched a search: the session, its conversation
    (``conversation_id``: the store's key; the HTTP API writes the tenant's name), how well it
    matched (``score``, rounded to 4 places) and how it was found (``method``)."""

    conversation_id: str
    score: float
    method: Literal["embedding", "text"]

    @classmethod
    def found(cls, hit: SearchHit, info: SessionInfo) -> SessionHitView:
        """The view of ``hit``, the search's match of the stored session ``info``."""
        session = SessionView.of(info).model_dump()
        return cls(
            **session,
            conversation_id=hit.conversation_id,
            score=round(hit.score, 4),
            method=hit.method,
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


class ConversationView(BaseModel):
    """A stored conversation: its store key and its owner's name for it, the single writer's
    state (``version``, current session, prune boundary), its message count and settings."""

    id: str
    name: str
    owner: str | None
    model: str | None
    version: int
    current_session_id: str | None
    prune_boundary: int
    messages: int
    created_at: datetime
    updated_at: datetime
    settings: dict[str, Any]

    @classmethod
    def of(cls, info: ConversationInfo) -> ConversationView:
        """The view of a stored conversation."""
        return cls(
            id=info.id,
            name=info.name,
            owner=info.owner,
            model=info.model,
            version=info.version,
            current_session_id=info.current_session_id,
            prune_boundary=info.prune_boundary,
            messages=info.next_seq - 1,
            created_at=info.created_at,
            updated_at=info.updated_at,
            settings=dict(info.settings),
        )
