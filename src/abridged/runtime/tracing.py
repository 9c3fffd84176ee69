"""The library's log: a line per compaction decision, on ``logging.getLogger("abridged.runtime")``.

abridged logs nothing unless the application listens (the package adds a ``NullHandler`` to
the ``abridged`` logger and never touches the root logger); with
``logging.basicConfig(level=logging.INFO)`` or a handler on ``logging.getLogger("abridged")``
every compaction says what triggered it, the tokens before and after and the summarizer that
made its summary; a prune how many tool outputs it replaced and the tokens it freed; an overflow
recovery its stage and sizes; a summarizer that failed (``WARNING``) why, and what it fell back
to. The engine decides and reports events; the runtime logs them here, with the engine's own
figures (``extra``: ``event``, ``conversation_id``). A line holds figures, names and reasons,
never a message's content or a summary; a reason is redacted, so a key quoted by a provider's
error is not written to a log.

>>> import logging
>>> from abridged.events.engine import Pruned
>>> logging.getLogger("abridged").handlers
[<NullHandler (NOTSET)>]
>>> line_of(Pruned(outputs=3, messages=2, tokens_before=9_000, tokens_after=600,
...                context_before=12_000, context_after=3_600))
'pruned: 3 tool outputs in 2 messages, 8,400 tokens freed (context 12,000 -> 3,600)'
>>> level_of(Pruned(3, 2, 9_000, 600, 12_000, 3_600))
20
"""

from __future__ import annotations

import dataclasses
import logging

from abridged.engine.compaction import CompactionHooks
from abridged.engine.summarize.redact import redact
from abridged.events.engine import (
    CompactionEnded,
    CompactionStarted,
    Event,
    OverflowRecovered,
    Pruned,
    SummarizerFallback,
)

__all__ = [
    "LEVELS",
    "LOGGER",
    "PASSED_ON",
    "failure_reason",
    "level_of",
    "line_of",
    "log_event",
    "log_failure",
    "logged",
]

LOGGER = logging.getLogger("abridged.runtime")

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


def _started(event: CompactionStarted) -> str:
    stage = f", emergency stage {event.emergency}" if event.emergency else ""
    forced = ", forced" if event.forced else ""
    return (
        f"trigger {event.trigger}{stage}{forced}: {event.tokens_before:,} tokens in "
        f"{event.messages_before} messages ({event.reason})"
    )


def _ended(event: CompactionEnded) -> str:
    sizes = (
        f"{event.tokens_before:,} -> {event.tokens_after:,} tokens, "
        f"{event.messages_before} -> {event.messages_after} messages"
    )
    parts = [f"{event.status}, trigger {event.trigger}: {sizes}"]
    if event.summarizer:
        parts.append(f"summarizer {event.summarizer}")
    if event.truncated:
        parts.append("summary truncated")
    if event.status in ("compacted", "pruned") and not event.reached_target:
        parts.append(f"above the target {event.target:,}")
    if event.detail:
        parts.append(redact(event.detail))
    if event.duration:
        parts.append(f"{event.duration:.2f} s")
    return ", ".join(parts)


def _pruned(event: Pruned) -> str:
    freed = event.tokens_before - event.tokens_after
    return (
        f"{event.outputs} tool outputs in {event.messages} messages, {freed:,} tokens freed "
        f"(context {event.context_before:,} -> {event.context_after:,})"
    )


def _recovered(event: OverflowRecovered) -> str:
    source = ", reported by the provider" if event.reported else ""
    return (
        f"stage {event.stage}{source}: {event.tokens_before:,} -> {event.tokens_after:,} tokens "
        f"(input budget {event.input_budget:,})"
    )


def _fallback(event: SummarizerFallback) -> str:
    used = f"fell back to {event.fallback}" if event.fallback else "no summary was made"
    return f"{event.summarizer} failed ({event.reason}); {used}"


def line_of(event: Event) -> str:
    """The log line of ``event``: its kind, then the figures of the decision (redacted)."""
    if isinstance(event, CompactionStarted):
        text = _started(event)
    elif isinstance(event, CompactionEnded):
        text = _ended(event)
    elif isinstance(event, Pruned):
        text = _pruned(event)
    elif isinstance(event, OverflowRecovered):
        text = _recovered(event)
    elif isinstance(event, SummarizerFallback):
        text = _fallback(event)
    else:
        text = event.text
    return f"{event.kind}: {redact(text)}"


#: The attribute of a log record whose event was also passed on to the caller's ``on_event``:
#: a handler that shows both (the chat) shows the event once.
PASSED_ON = "passed_on"


def log_event(event: Event, conversation_id: str | None = None, *, passed_on: bool = False) -> None:
    """Log ``event`` when the application listens at its level; ``passed_on``: the caller's
    ``on_event`` receives it too (the record says so in its ``passed_on`` attribute)."""
    level = level_of(event)
    if LOGGER.isEnabledFor(level):
        extra: dict[str, object] = {"event": event.kind, PASSED_ON: passed_on}
        if conversation_id is not None:
            extra["conversation_id"] = conversation_id
        LOGGER.log(level, "%s", line_of(event), extra=extra)


def failure_reason(exc: BaseException) -> str:
    """``exc`` as a log may hold it: its type and text, redacted, at most 300 characters."""
    return redact(f"{type(exc).__name__}: {exc}")[:300]


def log_failure(kind: str, exc: BaseException, conversation_id: str | None = None) -> None:
    """A ``WARNING`` that ``kind`` (``compaction_failed``, ...) failed with ``exc``: the runtime
    reports it and goes on (the history is kept as it was)."""
    extra: dict[str, str] = {"event": kind}
    if conversation_id is not None:
        extra["conversation_id"] = conversation_id
    LOGGER.warning("%s: %s", kind, failure_reason(exc), extra=extra)


def logged(hooks: CompactionHooks, conversation_id: str | None = None) -> CompactionHooks:
    """``hooks`` whose ``on_event`` logs each event first (``log_event``), then passes it on."""
    sink = hooks.on_event

    def on_event(event: Event) -> None:
        log_event(event, conversation_id, passed_on=sink is not None)
        if sink is not None:
            sink(event)

    return dataclasses.replace(hooks, on_event=on_event)
