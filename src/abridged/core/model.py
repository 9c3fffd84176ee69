"""The message model: immutable messages made of typed parts, with the provider's usage."""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, get_args

from abridged.errors import FormatError

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = get_args(Role)

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen_mapping(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not value:
        return _EMPTY
    if isinstance(value, MappingProxyType):
        return value
    return MappingProxyType(dict(value))


@dataclass(frozen=True, slots=True)
class Text:
    """Plain text content."""

    text: str
    kind: Literal["text"] = field(default="text", init=False, repr=False)


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A reasoning (thinking) block, with the provider's signature or encrypted content kept opaque.

    ``redacted`` marks Anthropic's ``redacted_thinking`` (whose payload is in ``encrypted``).
    ``summary`` holds OpenAI Responses reasoning summaries; ``provider`` names who produced it,
    because signatures are only valid when sent back to the same provider.
    """

    text: str = ""
    signature: str | None = None
    encrypted: str | None = None
    redacted: bool = False
    summary: tuple[str, ...] = ()
    id: str | None = None
    provider: str | None = None
    kind: Literal["reasoning"] = field(default="reasoning", init=False, repr=False)


@dataclass(frozen=True, slots=True)
class Image:
    """An image, by URL or inline base64 ``data``, with what is known of its size."""

    url: str | None = None
    data: str | None = None
    media_type: str | None = None
    width: int | None = None
    height: int | None = None
    detail: str | None = None
    kind: Literal["image"] = field(default="image", init=False, repr=False)


@dataclass(frozen=True, slots=True)
class File:
    """A file reference (provider file id, URL or inline base64 ``data``)."""

    file_id: str | None = None
    url: str | None = None
    data: str | None = None
    media_type: str | None = None
    filename: str | None = None
    kind: Literal["file"] = field(default="file", init=False, repr=False)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call of a tool by the model; ``arguments`` is the JSON text exactly as the model wrote."""

    id: str
    name: str
    arguments: str = "{}"
    kind: Literal["tool_call"] = field(default="tool_call", init=False, repr=False)

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON, or ``None`` when they are not valid JSON or nest
        too deeply to decode (a model can emit ``[[[[...]]]]``): they are then kept verbatim,
        unparsed, and ``arguments_valid`` is false.

        >>> ToolCall("c1", "read", '{"path": "a.py"}').parsed_arguments()
        {'path': 'a.py'}
        >>> ToolCall("c1", "read", "[" * 100_000 + "]" * 100_000).parsed_arguments() is None
        True
        """
        try:
            return json.loads(self.arguments)
        except (ValueError, TypeError, RecursionError):
            return None

    @property
    def arguments_valid(self) -> bool:
        """Whether ``arguments`` is valid JSON (invalid ones are kept verbatim, never dropped)."""
        return self.parsed_arguments() is not None or self.arguments.strip() == "null"


@dataclass(frozen=True, slots=True)
class Opaque:
    """A provider-native item or content block that abridged does not interpret (a Responses
    ``web_search_call`` or ``mcp_call`` item, an Anthropic ``server_tool_use`` or
    ``web_search_tool_result`` block, a provider's own ``compaction``), kept with its exact JSON.

    ``format`` names the only wire format it is written back to (``"openai-responses"`` or
    ``"anthropic-messages"``; every other writer drops it, as reasoning signed for another
    provider), ``type`` is its ``type`` field and ``data`` its JSON text as received (compact,
    key order kept), so writing it back gives the same object. It is counted by its size, shown
    to a summarizer by its type only, and never pruned or rewritten.

    >>> part = Opaque.of("openai-responses", {"type": "web_search_call", "id": "ws_1"})
    >>> part.type, part.value()
    ('web_search_call', {'type': 'web_search_call', 'id': 'ws_1'})
    """

    format: str
    type: str
    data: str
    kind: Literal["opaque"] = field(default="opaque", init=False, repr=False)

    @classmethod
    def of(cls, format: str, value: Mapping[str, Any]) -> Opaque:
        """The part holding ``value`` (an item or block object with a string ``type``);
        ``FormatError`` when it cannot be kept as JSON (nested too deeply, not JSON data)."""
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (RecursionError, ValueError, TypeError) as exc:
            raise FormatError(
                f"a {value.get('type')!r} item cannot be kept as JSON: {type(exc).__name__}",
                format=format,
                expected="an item of JSON data, nested at most a few hundred levels",
            ) from None
        return cls(format, str(value.get("type", "")), text)

    def value(self) -> Any:
        """The item or block, decoded again (a new object each time)."""
        return json.loads(self.data)

    @property
    def is_compaction(self) -> bool:
        """Whether this is the provider's own compaction (a summary boundary: what precedes it
        is not sent again)."""
        return self.type == "compaction"


ResultContent: TypeAlias = Text | Image | File


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of one tool call. ``content`` given as a string becomes one ``Text`` part."""

    call_id: str
    name: str = ""
    content: tuple[ResultContent, ...] = ()
    is_error: bool = False
    kind: Literal["tool_result"] = field(default="tool_result", init=False, repr=False)

    def __post_init__(self) -> None:
        content: Any = self.content
        if isinstance(content, str):
            object.__setattr__(self, "content", (Text(content),))
        elif not isinstance(content, tuple):
            object.__setattr__(self, "content", tuple(content))

    @property
    def text(self) -> str:
        """The text of the result, its text parts joined by newlines."""
        return "\n".join(p.text for p in self.content if isinstance(p, Text))


Part: TypeAlias = Text | Reasoning | Image | File | ToolCall | ToolResult | Opaque
PART_TYPES: tuple[type, ...] = (Text, Reasoning, Image, File, ToolCall, ToolResult, Opaque)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call, normalised: ``input`` excludes cached tokens.

    ``context_tokens`` (input + cache_read + cache_write) is the size of the context the
    provider read for the call, which is what counts against the window.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    @property
    def context_tokens(self) -> int:
        """Tokens of the context sent (everything the provider read for this call)."""
        return self.input + self.cache_read + self.cache_write

    @property
    def total_tokens(self) -> int:
        """Context tokens plus output tokens."""
        return self.context_tokens + self.output

    def __add__(self, other: Usage) -> Usage:
        """The usage of two calls together, field by field."""
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            reasoning=self.reasoning + other.reasoning,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One immutable message: a role and its parts.

    ``id`` is stable: when not given it is derived from the content (see ``fingerprint``);
    ``assign_ids`` gives a list conversation-unique ids. ``usage`` is what the provider reported
    for the call that produced an assistant message (``None`` when nothing was reported).
    ``meta`` carries everything else (``kind="summary"`` for summaries, format extras).

    >>> m = Message.user("hello")
    >>> m.role, m.text
    ('user', 'hello')
    """

    role: Role
    parts: tuple[Part, ...] = ()
    id: str = ""
    meta: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    usage: Usage | None = None
    _fingerprint: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts: Any = self.parts
        if isinstance(parts, str):
            object.__setattr__(self, "parts", (Text(parts),))
        elif not isinstance(parts, tuple):
            object.__setattr__(self, "parts", tuple(parts))
        object.__setattr__(self, "meta", _frozen_mapping(self.meta))
        if not self.id:
            object.__setattr__(self, "id", "m" + self.fingerprint[:20])

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def system(cls, text: str, **kwargs: Any) -> Message:
        """A system message with one text part."""
        return cls("system", (Text(text),), **kwargs)

    @classmethod
    def user(cls, text: str, **kwargs: Any) -> Message:
        """A user message with one text part."""
        return cls("user", (Text(text),), **kwargs)

    @classmethod
    def assistant(
        cls,
        text: str = "",
        *,
        tool_calls: Iterable[ToolCall] = (),
        reasoning: Iterable[Reasoning] = (),
        **kwargs: Any,
    ) -> Message:
        """An assistant message: reasoning first, then text, then tool calls."""
        parts: list[Part] = [*reasoning]
        if text:
            parts.append(Text(text))
        parts.extend(tool_calls)
        return cls("assistant", tuple(parts), **kwargs)

    @classmethod
    def tool(
        cls, call_id: str, content: str, *, name: str = "", is_error: bool = False, **kwargs: Any
    ) -> Message:
        """A tool message holding one result."""
        return cls("tool", (ToolResult(call_id, name, (Text(content),), is_error),), **kwargs)

    # -- views --------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The message's text parts joined by newlines (tool results and reasoning excluded)."""
        return "\n".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls in this message."""
        return tuple(p for p in self.parts if isinstance(p, ToolCall))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """The tool results in this message."""
        return tuple(p for p in self.parts if isinstance(p, ToolResult))

    @property
    def kind(self) -> str:
        """``meta["kind"]`` (for example ``"summary"``), or ``"message"``."""
        return str(self.meta.get("kind", "message"))

    @property
    def is_summary(self) -> bool:
        """Whether this message is a compaction summary."""
        return self.meta.get("kind") == "summary"

    @property
    def fingerprint(self) -> str:
        """A hash of role, parts and usage (not id or meta): equal content, equal fingerprint."""
        cached = self._fingerprint
        if cached is None:
            payload = json.dumps(
                [self.role, [part_to_dict(p) for p in self.parts], usage_to_dict(self.usage)],
                ensure_ascii=False,
                separators=(",", ":"),
                sort_keys=True,
            )
            # ``surrogatepass`` keeps a lone surrogate (valid in JSON, sent by providers and tools)
            # hashable and distinct from any other text, instead of raising.
            data = payload.encode("utf-8", "surrogatepass")
            cached = hashlib.blake2b(data, digest_size=16).hexdigest()
            object.__setattr__(self, "_fingerprint", cached)
        return cached

    def replace(self, **changes: Any) -> Message:
        """A copy with ``changes`` applied; the id is kept unless given."""
        values: dict[str, Any] = {
            "role": self.role,
            "parts": self.parts,
            "id": self.id,
            "meta": self.meta,
            "usage": self.usage,
        }
        values.update(changes)
        return Message(**values)


def starts_with_same(messages: Sequence[Message], prefix: Sequence[Message]) -> bool:
    """Whether ``messages`` start with the very objects of ``prefix`` (by identity, at C
    speed): a call's context between prunes and compactions extends the last one so, and what
    was computed for the last one holds for that part (a changed message is another object).

    >>> a, b = Message.user("a"), Message.user("b")
    >>> starts_with_same([a, b], [a]), starts_with_same([a, b], [Message.user("a")])
    (True, False)
    """
    return len(prefix) <= len(messages) and all(map(operator.is_, prefix, messages))


def assign_ids(messages: Sequence[Message], *, prefix: str = "m") -> list[Message]:
    """Give every message an id unique within the list, stable for the same list.

    Each id chains the previous one with the message's fingerprint, so repeated content still gets
    distinct ids, and the same history always gets the same ids. Messages whose id was set
    explicitly (not derived from their content) keep it.
    """
    out: list[Message] = []
    previous = ""
    seen: set[str] = set()
    for original in messages:
        message = original
        derived = message.id == "m" + message.fingerprint[:20]
        if derived or message.id in seen:
            digest = hashlib.blake2b(
                (previous + message.fingerprint).encode("utf-8", "surrogatepass"), digest_size=10
            ).hexdigest()
            message = message.replace(id=prefix + digest)
        seen.add(message.id)
        previous = message.id
        out.append(message)
    return out


# -- plain-data form (used for fingerprints, storage and abridged's own JSON format) ------------


def usage_to_dict(usage: Usage | None) -> dict[str, int] | None:
    """``Usage`` as a plain dict (``None`` stays ``None``)."""
    if usage is None:
        return None
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "reasoning": usage.reasoning,
    }


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None and v != () and v is not False}


def part_to_dict(part: Part) -> dict[str, Any]:
    """One part as plain JSON-able data, tagged by ``type``."""
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolCall):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if isinstance(part, ToolResult):
        return _drop_none(
            {
                "type": "tool_result",
                "call_id": part.call_id,
                "name": part.name,
                "content": [part_to_dict(c) for c in part.content],
                "is_error": part.is_error,
            }
        )
    if isinstance(part, Reasoning):
        return _drop_none(
            {
                "type": "reasoning",
                "text": part.text,
                "signature": part.signature,
                "encrypted": part.encrypted,
                "redacted": part.redacted,
                "summary": list(part.summary) or None,
                "id": part.id,
                "provider": part.provider,
            }
        )
    if isinstance(part, Opaque):
        return {"type": "opaque", "format": part.format, "item_type": part.type, "data": part.data}
    if isinstance(part, Image):
        return _drop_none(
            {
                "type": "image",
                "url": part.url,
                "data": part.data,
                "media_type": part.media_type,
                "width": part.width,
                "height": part.height,
                "detail": part.detail,
            }
        )
    return _drop_none(
        {
            "type": "file",
            "file_id": part.file_id,
            "url": part.url,
            "data": part.data,
            "media_type": part.media_type,
            "filename": part.filename,
        }
    )


def part_from_dict(data: Mapping[str, Any]) -> Part:
    """The inverse of ``part_to_dict``; raises ``KeyError``/``ValueError`` on malformed data."""
    kind = data["type"]
    if kind == "text":
        return Text(str(data["text"]))
    if kind == "tool_call":
        return ToolCall(str(data["id"]), str(data["name"]), str(data.get("arguments", "{}")))
    if kind == "tool_result":
        content = tuple(part_from_dict(c) for c in data.get("content", ()))
        for c in content:
            if not isinstance(c, Text | Image | File):
                raise ValueError(f"a tool result cannot contain a {c.kind} part")
        return ToolResult(
            str(data["call_id"]),
            str(data.get("name", "")),
            content,  # type: ignore[arg-type]
            bool(data.get("is_error", False)),
        )
    if kind == "reasoning":
        return Reasoning(
            text=str(data.get("text", "")),
            signature=data.get("signature"),
            encrypted=data.get("encrypted"),
            redacted=bool(data.get("redacted", False)),
            summary=tuple(data.get("summary") or ()),
            id=data.get("id"),
            provider=data.get("provider"),
        )
    if kind == "opaque":
        return Opaque(str(data["format"]), str(data["item_type"]), str(data["data"]))
    if kind == "image":
        return Image(
            url=data.get("url"),
            data=data.get("data"),
            media_type=data.get("media_type"),
            width=data.get("width"),
            height=data.get("height"),
            detail=data.get("detail"),
        )
    if kind == "file":
        return File(
            file_id=data.get("file_id"),
            url=data.get("url"),
            data=data.get("data"),
            media_type=data.get("media_type"),
            filename=data.get("filename"),
        )
    raise ValueError(f"unknown part type {kind!r}")


def message_to_dict(message: Message) -> dict[str, Any]:
    """A message as plain JSON-able data (abridged's own format)."""
    out: dict[str, Any] = {
        "id": message.id,
        "role": message.role,
        "parts": [part_to_dict(p) for p in message.parts],
    }
    if message.meta:
        out["meta"] = dict(message.meta)
    if message.usage is not None:
        out["usage"] = usage_to_dict(message.usage)
    return out


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """The inverse of ``message_to_dict``; raises ``KeyError``/``ValueError`` on malformed data."""
    role = data["role"]
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")
    usage_data = data.get("usage")
    usage = Usage(**usage_data) if usage_data is not None else None
    return Message(
        role=role,
        parts=tuple(part_from_dict(p) for p in data.get("parts", ())),
        id=str(data.get("id") or ""),
        meta=data.get("meta") or {},
        usage=usage,
    )
