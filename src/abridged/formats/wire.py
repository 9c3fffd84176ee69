"""Wire-shape helpers shared by the converters of this package (Chat, Responses, Anthropic)."""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from abridged.core.model import File, Image, Message, Part, Role, Text, ToolResult, Usage
from abridged.errors import FormatError
from abridged.formats.transcripts.text_protocol import messages_to_text_protocol

__all__ = [
    "apply",
    "as_items",
    "checked",
    "completion",
    "content_form",
    "default_form",
    "encodable",
    "fail",
    "file_data",
    "file_data_value",
    "hint",
    "image_from_url",
    "image_url",
    "leftover",
    "merge_into",
    "message",
    "meta_shape",
    "misplaced",
    "part_hints",
    "read_role",
    "shape",
    "str_or_none",
    "text_protocol_wire",
    "tool_results",
]

# How the wire shape is kept.
#
# A message's ``meta[<format key>]`` is a *shape*: a dict with, each only when needed,
#   "extra":   wire keys the core model has no field for; merged back (recursively) on export,
#   "omit":    keys the exporter writes by default that the original did not have,
#   "content": how the content was spelled ("string", "list", "null", or "absent" for an
#              Anthropic tool result without content) when not the default,
#   "parts":   {"<part index>": hint} for parts whose wire block had more than the core keeps.
# A part hint is a shape too, with "kind" (the core part kind it belongs to: a hint whose kind
# no longer matches its part is ignored), and "form" when the wire had two spellings for the
# same part (a refusal is a text part with form "refusal"). A tool result's hint holds the shape
# of its own content ("content", "parts"). Every value is plain JSON data.


def fail(
    fmt: str,
    message: str,
    *,
    index: int | None,
    expected: str,
    field: str | None = None,
) -> FormatError:
    """The ``FormatError`` of format ``fmt`` (returned, for the caller to raise)."""
    return FormatError(message, format=fmt, index=index, expected=expected, field=field)


def misplaced(
    fmt: str, part: Part, where: str, *, index: int, n: int, expected: str
) -> FormatError:
    """The ``FormatError`` for part ``n`` of message ``index``, which has no place in ``where``."""
    return fail(
        fmt,
        f"a {part.kind} part cannot be in {where}",
        index=index,
        expected=expected,
        field=f"parts[{n}]",
    )


def checked(messages: Sequence[Message], fmt: str) -> Iterator[tuple[int, Message]]:
    """``enumerate(messages)``, raising ``FormatError`` at the first item that is no ``Message``."""
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            raise fail(
                fmt, f"item {i} is not a Message", index=i, expected="abridged.core.model.Message"
            )
        yield i, m


def read_role(item: Mapping[str, Any], roles: Sequence[str], fmt: str, index: int) -> str:
    """The ``role`` of a wire message, which must be one of ``roles`` (``FormatError`` if not)."""
    role = item.get("role")
    if role not in roles:
        problem = "message has no role" if "role" not in item else f"unknown role {role!r}"
        raise fail(
            fmt, problem, index=index, expected="role: one of " + ", ".join(roles), field="role"
        )
    return str(role)


def as_items(items: object, fmt: str, what: str) -> Sequence[Any]:
    """``items`` when it is a list (not a string); else a ``FormatError`` naming ``what``."""
    if isinstance(items, str | bytes | bytearray) or not isinstance(items, Sequence):
        raise fail(
            fmt,
            f"expected a list of {what}, got {type(items).__name__}",
            index=None,
            expected=f"a list of {what}",
        )
    return items


def leftover(obj: Mapping[str, Any], consumed: Collection[str]) -> dict[str, Any]:
    """The keys of ``obj`` the converter did not read (deep-copied: meta must not alias input)."""
    return {k: copy.deepcopy(v) for k, v in obj.items() if k not in consumed}


def shape(
    kind: str | None = None,
    *,
    extra: Mapping[str, Any] | None = None,
    omit: Sequence[str] = (),
    form: str | None = None,
    content: str | None = None,
    parts: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A shape (or part hint) with its empty entries dropped; ``{}`` when nothing is kept."""
    out: dict[str, Any] = {}
    if extra:
        out["extra"] = dict(extra)
    if omit:
        out["omit"] = list(omit)
    if form:
        out["form"] = form
    if content:
        out["content"] = content
    if parts:
        out["parts"] = dict(parts)
    if out and kind is not None:
        out = {"kind": kind, **out}
    return out


def default_form(
    parts: Sequence[Part], hints: Sequence[Mapping[str, Any]], empty: str = "list"
) -> str:
    """How content is spelled by default: ``empty`` when there is none, one plain text part as a
    string, else a list."""
    if not parts:
        return empty
    if len(parts) == 1 and isinstance(parts[0], Text) and not hints[0]:
        return "string"
    return "list"


def content_form(
    pairs: Sequence[tuple[Part, Mapping[str, Any]]], form: str, empty: str = "list"
) -> str | None:
    """The ``"content"`` entry of a shape: ``form`` (how content was spelled) unless default."""
    default = default_form([p for p, _ in pairs], [h for _, h in pairs], empty)
    return None if form == default else form


def part_hints(pairs: Sequence[tuple[Part, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The ``"parts"`` entry of a shape: the non-empty hints of ``(part, hint)`` pairs by index."""
    return {str(n): dict(h) for n, (_, h) in enumerate(pairs) if h}


def message(
    role: Role,
    pairs: Sequence[tuple[Part, Mapping[str, Any]]],
    shape: dict[str, Any],
    key: str,
    meta: dict[str, Any] | None = None,
) -> Message:
    """A core message of ``pairs``' parts, ``shape`` (with the pairs' hints) under ``meta[key]``."""
    hints = part_hints(pairs)
    if hints:
        shape["parts"] = hints
    meta = {} if meta is None else meta
    if shape:
        meta[key] = shape
    return Message(role, tuple(p for p, _ in pairs), meta=meta)


def completion(message: Message, usage: Usage | None, **fields: object) -> Message:
    """The assistant ``message`` of a response with its ``usage``; ``fields`` (the response's
    ``response_id``, ``model``, ``stop_reason``) are added to its meta when they are strings."""
    meta = dict(message.meta)
    meta.update({k: v for k, v in fields.items() if isinstance(v, str)})
    return Message("assistant", message.parts, meta=meta, usage=usage)


def tool_results(message: Message, index: int, fmt: str) -> list[tuple[int, ToolResult]]:
    """The parts of a ``tool`` message by index; ``FormatError`` for a part that is no result."""
    out = []
    for n, part in enumerate(message.parts):
        if not isinstance(part, ToolResult):
            expected = "tool messages hold tool results only"
            raise misplaced(fmt, part, "a tool message", index=index, n=n, expected=expected)
        out.append((n, part))
    return out


def merge_into(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    """Merge ``extra`` into ``target`` in place, recursively for nested objects (deep-copied)."""
    for key, value in extra.items():
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            merge_into(current, value)
        else:
            target[key] = copy.deepcopy(value)


def apply(block: dict[str, Any], shape: Mapping[str, Any]) -> dict[str, Any]:
    """``block`` with the kept wire keys merged back and the omitted ones removed."""
    extra = shape.get("extra")
    if isinstance(extra, Mapping):
        merge_into(block, extra)
    omit = shape.get("omit")
    if isinstance(omit, list):
        for key in omit:
            block.pop(key, None)
    return block


def meta_shape(message: Message, key: str) -> Mapping[str, Any]:
    """The shape kept in ``message.meta[key]``, or ``{}``."""
    shape = message.meta.get(key)
    return shape if isinstance(shape, Mapping) else {}


def hint(shape: Mapping[str, Any], index: int, kind: str) -> Mapping[str, Any]:
    """The hint of part ``index`` in ``shape``, or ``{}`` (also when it was for another kind)."""
    parts = shape.get("parts")
    if not isinstance(parts, Mapping):
        return {}
    found = parts.get(str(index))
    if not isinstance(found, Mapping) or found.get("kind") != kind:
        return {}
    return found


def str_or_none(obj: Mapping[str, Any], key: str) -> str | None:
    """``obj[key]`` when it is a string, else ``None``."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


_DATA_URL = re.compile(r"data:([^;,]*);base64,(.*)", re.DOTALL)


def _parse_data_url(url: str) -> tuple[str, str | None] | None:
    """``(base64 data, media type)`` of a ``data:<type>;base64,<data>`` URL, else ``None``."""
    match = _DATA_URL.fullmatch(url)
    if match is None:
        return None
    return match.group(2), match.group(1) or None


def _data_url(data: str, media_type: str | None) -> str:
    return f"data:{media_type or ''};base64,{data}"


def image_from_url(url: str, detail: str | None) -> Image:
    """An ``Image`` from a URL field: a base64 data URL becomes data and media type."""
    parsed = _parse_data_url(url)
    if parsed is None:
        return Image(url=url, detail=detail)
    return Image(data=parsed[0], media_type=parsed[1], detail=detail)


def image_url(image: Image) -> str | None:
    """The URL field of ``image``: its URL, else its data as a data URL, else ``None``."""
    if image.url is not None:
        return image.url
    if image.data is not None:
        return _data_url(image.data, image.media_type)
    return None


def file_data(obj: Mapping[str, Any], key: str) -> tuple[str | None, str | None]:
    """``(data, media type)`` from a ``file_data`` field: a data URL is split, raw data kept."""
    raw = str_or_none(obj, key)
    if raw is None:
        return None, None
    parsed = _parse_data_url(raw)
    return parsed if parsed is not None else (raw, None)


def file_data_value(file: File) -> str | None:
    """The ``file_data`` field of ``file``: a data URL when its media type is known."""
    if file.data is None:
        return None
    return _data_url(file.data, file.media_type) if file.media_type else file.data


def text_protocol_wire(message: Message) -> dict[str, Any] | None:
    """The plain ``{"role", "content"}`` a text-protocol message is sent as, else ``None``.

    Messages with ``meta["text_protocol"]`` (mini-swe-agent's bash blocks) are sent as their
    text: the assistant message as its text (the recovered tool call is not written), the
    observation with role ``meta["wire_role"]`` (``user``) and its result's text, which is the
    placeholder once pruned. Reasoning parts are not part of that text and are left out.
    """
    if not message.meta.get("text_protocol"):
        return None
    return messages_to_text_protocol([message])[0]


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def encodable(value: Any) -> Any:
    """``value`` (a request body: dicts, lists, strings) with every lone surrogate replaced by
    U+FFFD, the only change that lets it be sent as UTF-8; what is stored keeps the original.
    Called only when encoding the body as it is failed, so a normal call pays nothing.

    >>> encodable({"content": ["ok", "bad \\ud800"]})["content"][1] == "bad \\ufffd"
    True
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {k: encodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(v) for v in value]
    return value
