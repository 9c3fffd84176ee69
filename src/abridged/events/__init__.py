"""Every event abridged reports, in one place: the engine's (compaction) and a conversation's.

``from abridged.events import CompactionEnded, Notice`` works for all of them. They are defined
in ``abridged.events.engine`` (what compaction did, ``Event`` their union) and
``abridged.events.runtime`` (what a ``Conversation`` reports while it runs,
``ConversationEvent`` their union); both are plain data over the core, so the engine imports
them from here. The stream's deltas (``TextDelta``, ``ReasoningDelta``, ``ToolCallDelta``) are
here too.
"""

from __future__ import annotations

from abridged.core.protocols import ReasoningDelta, TextDelta, ToolCallDelta
from abridged.events.engine import (
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
from abridged.events.runtime import (
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
