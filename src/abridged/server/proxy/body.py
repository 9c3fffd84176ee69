"""A request's body read within a size limit, and its JSON read within a nesting depth."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import Receive

__all__ = ["MAX_DEPTH", "BodyReader", "declared_length", "parse_json", "read_body", "too_deep"]

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


_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()
#: Requests whose history ``BodyReader`` remembers (the last body of each).
READER_ENTRIES = 128


@dataclass(slots=True)
class _Known:
    """What a body held, up to the end of its history's last item."""

    text: str  # the body's text up to there
    head: dict[str, Any]  # its members before the history
    items: list[Any]  # the history's items


#: Raised (``ValueError``) inside ``BodyReader`` when a body is not in the shape its incremental
#: read takes: the body is then read whole by ``parse_json``.
_UNREAD = "not in the shape of an incremental read"


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WHITESPACE:
        i += 1
    return i


def _expect(s: str, i: int, char: str) -> int:
    """The index after ``char`` (whitespace skipped); ``ValueError`` if it is not next."""
    i = _skip(s, i)
    if i >= len(s) or s[i] != char:
        raise ValueError(_UNREAD)
    return i + 1


def _value(s: str, i: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(s, _skip(s, i))
    except RecursionError:
        raise ValueError(_UNREAD) from None


class BodyReader:
    """A managed request's JSON read so that the part of its history the previous request of
    the same client already sent is not parsed again.

    An agent sends its whole history every call, grown by a step: the same text up to the end
    of the last item it sent before. When a body starts with the text the previous body of the
    same ``scope`` had up to the end of its history's last item, only the rest is parsed, and
    the items read before are the very objects given again (which lets the context manager
    compare them by identity). The value is always the one ``parse_json`` gives: a body in any
    other shape (a member repeated, a history that is no list, text that is no UTF-8, bad
    JSON) is read whole by ``parse_json``, with its errors. At most ``entries`` scopes are
    remembered (least recently used first out)."""

    def __init__(self, entries: int = READER_ENTRIES, max_depth: int = MAX_DEPTH) -> None:
        self.entries = entries
        self.max_depth = max_depth
        self._known: OrderedDict[Hashable, _Known] = OrderedDict()
        #: bodies read from the end of a previous one's history (for tests and benchmarks)
        self.continued = 0

    def parse(self, raw: bytes, history: str, scope: Hashable) -> tuple[Any, str | None]:
        """``parse_json(raw)``'s result; ``history`` names the member holding the history, and
        ``scope`` the client (bodies of one scope continue each other)."""
        if self.max_depth >= 3:
            try:
                text = raw.decode("utf-8")
                known = self._known.get(scope)
                body, new = self._read(text, history, known)
                if new is not None:
                    self._known[scope] = new
                    self._known.move_to_end(scope)
                    while len(self._known) > self.entries:
                        self._known.popitem(last=False)
                return body, None
            except ValueError:  # the text is no UTF-8, or not in the shape read here
                self._known.pop(scope, None)
        return parse_json(raw, self.max_depth)

    def _read(
        self, s: str, history: str, known: _Known | None
    ) -> tuple[dict[str, Any], _Known | None]:
        """The body, and what to remember of it (``None``: its history is no list)."""
        limit = self.max_depth
        if known is not None and s.startswith(known.text):
            body = dict(known.head)
            items = list(known.items)
            i = len(known.text)
            self.continued += 1
        else:
            body, items = {}, []
            i = _skip(s, _expect(s, 0, "{"))
            if i < len(s) and s[i] == "}":
                return self._end(s, i + 1, body, None)
            while True:
                i = _skip(s, i)
                if i >= len(s) or s[i] != '"':
                    raise ValueError(_UNREAD)
                key, i = _value(s, i)
                if key in body:
                    raise ValueError(_UNREAD)  # a repeated member: json.loads keeps the last one
                i = _skip(s, _expect(s, i, ":"))
                if key == history and i < len(s) and s[i] == "[":
                    i += 1
                    break
                body[key], i = _value(s, i)
                if too_deep(body[key], limit - 1):
                    raise ValueError(_UNREAD)
                i = _skip(s, i)
                if i < len(s) and s[i] == "}":
                    return self._end(s, i + 1, body, None)
                i = _expect(s, i, ",")
        head = dict(body)
        # inside the history's list, after its last item read (or its ``[``)
        while True:
            i = _skip(s, i)
            if i < len(s) and s[i] == "]":
                break
            if items:
                i = _expect(s, i, ",")
            item, i = _value(s, i)
            if isinstance(item, dict | list) and too_deep(item, limit - 2):
                raise ValueError(_UNREAD)
            items.append(item)
        new = _Known(s[:i], head, items)
        if history in body:
            raise ValueError(_UNREAD)
        body[history] = list(items)
        i += 1
        # the members after the history
        while True:
            i = _skip(s, i)
            if i < len(s) and s[i] == "}":
                return self._end(s, i + 1, body, new)
            i = _expect(s, i, ",")
            i = _skip(s, i)
            if i >= len(s) or s[i] != '"':
                raise ValueError(_UNREAD)
            key, i = _value(s, i)
            if key in body:
                raise ValueError(_UNREAD)
            i = _expect(s, i, ":")
            body[key], i = _value(s, i)
            if too_deep(body[key], limit - 1):
                raise ValueError(_UNREAD)

    @staticmethod
    def _end(
        s: str, i: int, body: dict[str, Any], new: _Known | None
    ) -> tuple[dict[str, Any], _Known | None]:
        if _skip(s, i) != len(s):
            raise ValueError(_UNREAD)  # more after the object: not JSON
        return body, new
