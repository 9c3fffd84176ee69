"""Moved to ``abridged.events.engine``: the old path gives the same objects and warns."""

from __future__ import annotations

from typing import TYPE_CHECKING

import abridged.events.engine as _new
from abridged.core.moved import moved_names

if TYPE_CHECKING:
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
        notifications,
    )

__all__ = [
    "CompactionBackoff",
    "CompactionCancelled",
    "CompactionEnded",
    "CompactionStarted",
    "EndStatus",
    "Event",
    "HiddenPrefix",
    "OverflowRecovered",
    "Pruned",
    "SummarizerFallback",
    "UsageUpdated",
    "notifications",
]

__getattr__ = moved_names(__name__, _new, __all__)
