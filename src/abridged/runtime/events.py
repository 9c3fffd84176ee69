"""Moved to ``abridged.events.runtime``: the old path gives the same objects and warns."""

from __future__ import annotations

from typing import TYPE_CHECKING

import abridged.events.runtime as _new
from abridged.core.moved import moved_names

if TYPE_CHECKING:
    from abridged.core.protocols import ReasoningDelta, TextDelta, ToolCallDelta
    from abridged.events.runtime import (
        ConversationEvent,
        Notice,
        Retrying,
        StreamItem,
        ToolFinished,
        ToolStarted,
        TurnResult,
    )

# The old module's own names and the stream's deltas it imported (``from
# abridged.runtime.events import TextDelta`` worked, so it keeps working).
__all__ = [
    "ConversationEvent",
    "Notice",
    "ReasoningDelta",
    "Retrying",
    "StreamItem",
    "TextDelta",
    "ToolCallDelta",
    "ToolFinished",
    "ToolStarted",
    "TurnResult",
]

__getattr__ = moved_names(__name__, _new, __all__)
