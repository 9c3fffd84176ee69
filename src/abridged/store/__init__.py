"""Durable conversations: the SQLAlchemy store, its sessions and the single writer (an edge).

``Store(url)`` keeps every message on SQLite (default) or PostgreSQL; ``upgrade(url)`` migrates a
database's schema. Values it takes and returns are in ``abridged.store.records``.
"""

from __future__ import annotations

from abridged.core.protocols import Embedder
from abridged.store.calls import CallEntry, SentRef, StoredCall
from abridged.store.embed import HashingEmbedder
from abridged.store.listing import CompactionBrief, ConversationPage, ListedConversation
from abridged.store.migrate import head_revision, upgrade
from abridged.store.records import (
    CompactionOutcome,
    CompactionRecord,
    Compactor,
    Context,
    ConversationInfo,
    FinalizeRequest,
    NewMessage,
    ResumeResult,
    SearchHit,
    SessionInfo,
    SessionTotals,
    StoredCompaction,
    StoredMessage,
    StoredSummary,
    SummaryMaker,
)
from abridged.store.store import Store

__all__ = [
    "CallEntry",
    "CompactionBrief",
    "CompactionOutcome",
    "CompactionRecord",
    "Compactor",
    "Context",
    "ConversationInfo",
    "ConversationPage",
    "Embedder",
    "FinalizeRequest",
    "HashingEmbedder",
    "ListedConversation",
    "NewMessage",
    "ResumeResult",
    "SearchHit",
    "SentRef",
    "SessionInfo",
    "SessionTotals",
    "Store",
    "StoredCall",
    "StoredCompaction",
    "StoredMessage",
    "StoredSummary",
    "SummaryMaker",
    "head_revision",
    "upgrade",
]
