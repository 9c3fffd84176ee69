"""The library's log: one line per compaction decision, on ``logging.getLogger("abridged")``.

abridged logs nothing unless the application asks (the package adds a ``NullHandler``); with
``logging.basicConfig(level=logging.INFO)`` or ``logging.getLogger("abridged").setLevel(...)``
every compaction says what triggered it and why, what was pruned, how the overflow was
recovered, when the summarizer fell back, and how it ended. The line is the event's own
``text`` (what ``Prepared.notifications`` shows) passed through ``redact``, so a key that
reached a tool output or an error message is not written to a log.

>>> import logging
>>> from abridged.events.engine import CompactionStarted
>>> logging.getLogger("abridged").handlers
[<NullHandler (NOTSET)>]
>>> level_of(CompactionStarted("tokens", "context 9.5k >= trigger 9.3k", 9_700, 40))
20
"""

from __future__ import annotations

import logging

from abridged.engine.summarize.redact import redact
from abridged.events.engine import Event

LOGGER = logging.getLogger("abridged.compaction")

#: The level of each event kind; a kind not listed logs at DEBUG.
LEVELS: dict[str, int] = {
    "compaction_started": logging.INFO,
    "compaction_ended": logging.INFO,
    "pruned": logging.INFO,
    "overflow_recovered": logging.INFO,
    "compaction_backoff": logging.INFO,
    "compaction_cancelled": logging.INFO,
    "summarizer_fallback": logging.WARNING,
}


def level_of(event: Event) -> int:
    """The level ``event`` is logged at."""
    return LEVELS.get(event.kind, logging.DEBUG)


def log_event(event: Event) -> None:
    """Log ``event`` (its text, redacted) when the application listens at its level."""
    level = level_of(event)
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, "%s: %s", event.kind, redact(event.text))
