"""Every event abridged reports, in one place: the engine's (compaction) and a conversation's.

``from abridged.events import CompactionEnded, Notice`` works for all of them; the modules that
define them stay where they were and keep their import paths (``abridged.engine.events``: what
compaction did, ``Event`` their union; ``abridged.runtime.events``: what a ``Conversation``
reports while it runs, ``ConversationEvent`` their union). The stream's deltas
(``TextDelta``, ``ReasoningDelta``, ``ToolCallDelta``) are here too.
"""

from __future__ import annotations

from abridged.core.protocols import ReasoningDelta, TextDelta, ToolCallDelta
from abridged.engine.events import (
    CompactionBackoff,
    CompactionCancelled,
    CompactionEnded,
    CompactionStarted,
    EndStatus,
    Event,
    HiddenPrefix,
    OverflowRecovered,
    Pruned,
    SummarizerFallback,
    UsageUpdated,
)
from abridged.runtime.events import (
    ConversationEvent,
    Notice,
    Retrying,
    StreamItem,
    ToolFinished,
    ToolStarted,
    TurnResult,
)

__all__ = [
    "CompactionBackoff",
    "CompactionCancelled",
    "CompactionEnded",
    "CompactionStarted",
    "ConversationEvent",
    "EndStatus",
    "Event",
    "HiddenPrefix",
    "Notice",
    "OverflowRecovered",
    "Pruned",
    "ReasoningDelta",
    "Retrying",
    "StreamItem",
    "SummarizerFallback",
    "TextDelta",
    "ToolCallDelta",
    "ToolFinished",
    "ToolStarted",
    "TurnResult",
    "UsageUpdated",
]
