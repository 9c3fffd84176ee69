"""What the local provider's API modules share: a parsed request, a resolved reply, SSE events."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from abridged.core.model import Message
from abridged.testing.counting import Segment

CHUNK_CHARS = 16
"""Characters per streamed text or arguments delta."""

STOP, LENGTH, TOOL_CALLS = "stop", "length", "tool_calls"
_FINISH = {
    "stop": STOP,
    "end_turn": STOP,
    "completed": STOP,
    "stop_sequence": STOP,
    "length": LENGTH,
    "max_tokens": LENGTH,
    "max_output_tokens": LENGTH,
    "incomplete": LENGTH,
    "tool_calls": TOOL_CALLS,
    "tool_use": TOOL_CALLS,
}


def normalize_finish(reason: str) -> str:
    """A finish reason of any API as ``stop``, ``length`` or ``tool_calls`` (others unchanged)."""
    return _FINISH.get(reason, reason)


@dataclass(slots=True)
class Prepared:
    """A request that passed the format and pairing checks, measured."""

    api: str
    model: str
    messages: list[Message]
    segments: list[Segment]
    prompt_tokens: int
    max_tokens: int | None
    stream: bool = False
    include_usage: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Output:
    """A reply resolved for one request: ids assigned, arguments as JSON text, usage known.

    ``finish`` is ``stop``, ``length`` or ``tool_calls`` (each API spells it its own way), or
    a provider-native reason given by the script, passed through.
    """

    text: str
    reasoning: str
    signature: str | None
    calls: list[tuple[str, str, str]]  # (id, name, arguments JSON)
    finish: str
    output_tokens: int
    reasoning_tokens: int
    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    response_id: str
    created: int


@dataclass(frozen=True, slots=True)
class Event:
    """One server-sent event: its ``event:`` name (``None`` for data-only) and JSON data."""

    name: str | None
    data: Any


def chunks(text: str, size: int = CHUNK_CHARS) -> Iterator[str]:
    """``text`` in pieces of ``size`` characters (nothing for an empty text)."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


def make_id(prefix: str, *parts: object, length: int = 24) -> str:
    """A deterministic id: ``prefix`` + hex digits derived from ``parts``."""
    seed = ":".join(str(p) for p in parts)
    return prefix + hashlib.blake2b(seed.encode("utf-8"), digest_size=16).hexdigest()[:length]
