"""The proxy's request log: one line per proxied request, saying what abridged did to it.

``POST /v1/chat/completions px-3f2a… 130 msg 39.1k -> 41 msg 5.3k, compacted, cache 4.1k,
200, +1.8 ms``, with the same figures as fields of the JSON line (``abridged.server.logs``):
``method``, ``path``, ``api``, ``conversation_id``, ``messages_app`` / ``messages_sent`` (the
history the app sent, the context sent upstream), ``tokens_app`` / ``tokens_sent``,
``action``, ``cache_read``, ``status``, ``added_ms`` (what the proxy added before the upstream
request went out), ``reason`` (why a request passed through unmanaged) and ``window`` (the
context window the request was sized to). Sizes only: never a
message's content, never a key.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from abridged.core.budget import format_token_size
from abridged.events.engine import CompactionEnded, Event, OverflowRecovered, Pruned

__all__ = ["RequestLine", "action_of", "log_request"]

#: What the proxy did to a managed request, in the order they are named in ``action``.
ACTIONS = ("recovered", "compacted", "pruned")


def action_of(events: Iterable[Event], *, unchanged: bool) -> str:
    """What abridged did, from the request's events: ``recovered`` (an overflow, the emergency
    path), ``compacted``, ``pruned`` (joined by ``+`` when several), else ``passed`` (the
    request's own bytes went upstream) or ``rewritten`` (the context of earlier compactions or
    prunes, nothing new this time)."""
    done: set[str] = set()
    for event in events:
        if isinstance(event, OverflowRecovered):
            done.add("recovered")
        elif isinstance(event, CompactionEnded) and event.status in ("compacted", "pruned"):
            done.add(event.status)
        elif isinstance(event, Pruned):
            done.add("pruned")
    named = [a for a in ACTIONS if a in done]
    if named:
        return "+".join(named)
    return "passed" if unchanged else "rewritten"


@dataclass(frozen=True, slots=True)
class RequestLine:
    """The figures of one proxied request (``None``: not known, left out of the line)."""

    method: str
    path: str
    api: str
    action: str
    status: int | None = None
    conversation_id: str | None = None
    messages_app: int | None = None
    messages_sent: int | None = None
    tokens_app: int | None = None
    tokens_sent: int | None = None
    cache_read: int | None = None
    added_ms: float | None = None
    reason: str | None = None
    #: the context window abridged sized the request to (kept with the last request, so that
    #: the index shows its meter after a restart, before the model's window is looked up)
    window: int | None = None

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> RequestLine:
        """The line whose ``fields()`` are ``fields`` (as the store keeps them); a field of
        another type is left out, the four that name the request read ``?`` then."""

        def text(name: str) -> str | None:
            value = fields.get(name)
            return value if isinstance(value, str) else None

        def count(name: str) -> int | None:
            value = fields.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        added = fields.get("added_ms")
        return cls(
            text("method") or "?",
            text("path") or "?",
            text("api") or "?",
            text("action") or "?",
            status=count("status"),
            conversation_id=text("conversation_id"),
            messages_app=count("messages_app"),
            messages_sent=count("messages_sent"),
            tokens_app=count("tokens_app"),
            tokens_sent=count("tokens_sent"),
            cache_read=count("cache_read"),
            added_ms=float(added) if isinstance(added, int | float) else None,
            reason=text("reason"),
            window=count("window"),
        )

    def text(self) -> str:
        """The human half of the line."""
        parts = [f"{self.method} {self.path}"]
        if self.conversation_id is not None:
            parts.append(self.conversation_id)
        head = " ".join(parts)
        bits: list[str] = []
        if self.messages_app is not None and self.messages_sent is not None:
            bits.append(
                f"{self.messages_app} msg {_size(self.tokens_app)} -> "
                f"{self.messages_sent} msg {_size(self.tokens_sent)}"
            )
        bits.append(self.action if self.reason is None else f"{self.action}: {self.reason}")
        if self.cache_read:
            bits.append(f"cache {format_token_size(self.cache_read)}")
        if self.status is not None:
            bits.append(str(self.status))
        if self.added_ms is not None:
            bits.append(f"+{self.added_ms:.1f} ms")
        return f"{head} {', '.join(bits)}"

    def fields(self) -> dict[str, object]:
        """The structured half: the ``extra`` of the log record."""
        values = {
            "method": self.method,
            "path": self.path,
            "api": self.api,
            "action": self.action,
            "status": self.status,
            "conversation_id": self.conversation_id,
            "messages_app": self.messages_app,
            "messages_sent": self.messages_sent,
            "tokens_app": self.tokens_app,
            "tokens_sent": self.tokens_sent,
            "cache_read": self.cache_read,
            "added_ms": None if self.added_ms is None else round(self.added_ms, 3),
            "reason": self.reason,
            "window": self.window,
        }
        return {k: v for k, v in values.items() if v is not None}


def _size(tokens: int | None) -> str:
    return "?" if tokens is None else format_token_size(tokens)


def log_request(logger: logging.Logger, line: RequestLine) -> None:
    """Write ``line`` at INFO (a failed upstream answer, 5xx, at WARNING)."""
    level = logging.WARNING if line.status is not None and line.status >= 500 else logging.INFO
    if logger.isEnabledFor(level):
        logger.log(level, "%s", line.text(), extra=line.fields())
