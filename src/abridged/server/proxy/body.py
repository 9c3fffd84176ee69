"""A request's body read within a size limit, and its JSON read within a nesting depth."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import Receive

__all__ = ["MAX_DEPTH", "declared_length", "parse_json", "read_body", "too_deep"]

MAX_DEPTH = 100
"""Deepest nesting of a request body the proxy manages (a chat history with tool schemas is
about 20 deep); deeper bodies pass through unread, so that nothing after the parser recurses
into them."""


def declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The ``content-length`` the client declared, if any (a malformed one: ``None``)."""
    for name, value in headers:
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or ``None`` as soon as more than ``limit`` bytes came (the rest is not
    read: a client streaming 50 MB is stopped at the limit, not held in memory).
    ``ClientDisconnect`` when the client goes away first (half a body is never sent on)."""
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` deep (walked without
    recursion: the depth is what is being checked).

    >>> too_deep({"a": [[1]]}, 3), too_deep({"a": [[1]]}, 2)
    (False, True)
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        for child in item:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                push((child, depth + 1))
    return False


def parse_json(raw: bytes, max_depth: int = MAX_DEPTH) -> tuple[Any, str | None]:
    """``(value, None)``, or ``(None, why)`` when the body is not JSON abridged can read:
    ``"not JSON"`` or ``"nested more than N deep"`` (the parser's own recursion limit included:
    a 100,000-deep body is refused, not a ``RecursionError``)."""
    try:
        value = json.loads(raw)
    except RecursionError:
        return None, f"nested more than {max_depth} deep"
    except ValueError:
        return None, "not JSON"
    if too_deep(value, max_depth):
        return None, f"nested more than {max_depth} deep"
    return value, None
