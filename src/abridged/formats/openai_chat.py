"""Lossless conversion between OpenAI Chat Completions messages and abridged's message model."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from abridged.core.model import (
    File,
    Image,
    Message,
    Part,
    Reasoning,
    ResultContent,
    Role,
    Text,
    ToolCall,
    ToolResult,
)
from abridged.errors import FormatError
from abridged.formats.usage import usage_from_openai

__all__ = [
    "FORMAT",
    "META_KEY",
    "completion_from_openai",
    "messages_from_openai",
    "messages_to_openai",
]

FORMAT = "openai-chat"
"""The ``format`` named by the ``FormatError``s of this module."""

META_KEY = "openai"
"""``Message.meta`` key holding what Chat Completions has beyond the core model (see below)."""

# How the wire shape is kept (shared by the three converters of this package).
#
# A message's ``meta[<format key>]`` is a *shape*: a dict with, each only when needed,
#   "extra":   wire keys the core model has no field for; merged back (recursively) on export,
#   "omit":    keys the exporter writes by default that the original did not have,
#   "content": how the content was spelled ("string", "list" or "null") when not the default,
#   "parts":   {"<part index>": hint} for parts whose wire block had more than the core keeps.
# A part hint is a shape too, with "kind" (the core part kind it belongs to: a hint whose kind
# no longer matches its part is ignored), and "form" when the wire had two spellings for the
# same part (a refusal is a text part with form "refusal"). A tool result's hint holds the shape
# of its own content ("content", "parts"). Every value is plain JSON data.


def _fail(
    fmt: str,
    message: str,
    *,
    index: int | None,
    expected: str,
    field: str | None = None,
) -> FormatError:
    return FormatError(message, format=fmt, index=index, expected=expected, field=field)


def _as_items(items: object, fmt: str, what: str) -> Sequence[Any]:
    if isinstance(items, str | bytes | bytearray) or not isinstance(items, Sequence):
        raise _fail(
            fmt,
            f"expected a list of {what}, got {type(items).__name__}",
            index=None,
            expected=f"a list of {what}",
        )
    return items


def _leftover(obj: Mapping[str, Any], consumed: Collection[str]) -> dict[str, Any]:
    """The keys of ``obj`` the converter did not read (deep-copied: meta must not alias input)."""
    return {k: copy.deepcopy(v) for k, v in obj.items() if k not in consumed}


def _shape(
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


def _merge_into(target: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge_into(current, value)
        else:
            target[key] = copy.deepcopy(value)


def _apply(block: dict[str, Any], shape: Mapping[str, Any]) -> dict[str, Any]:
    """``block`` with the kept wire keys merged back and the omitted ones removed."""
    extra = shape.get("extra")
    if isinstance(extra, Mapping):
        _merge_into(block, extra)
    omit = shape.get("omit")
    if isinstance(omit, list):
        for key in omit:
            block.pop(key, None)
    return block


def _meta_shape(message: Message, key: str) -> Mapping[str, Any]:
    shape = message.meta.get(key)
    return shape if isinstance(shape, Mapping) else {}


def _hint(shape: Mapping[str, Any], index: int, kind: str) -> Mapping[str, Any]:
    """The hint of part ``index`` in ``shape``, or ``{}`` (also when it was for another kind)."""
    parts = shape.get("parts")
    if not isinstance(parts, Mapping):
        return {}
    hint = parts.get(str(index))
    if not isinstance(hint, Mapping) or hint.get("kind") != kind:
        return {}
    return hint


def _str_or_none(obj: Mapping[str, Any], key: str) -> str | None:
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


def _image_from_url(url: str, detail: str | None) -> Image:
    parsed = _parse_data_url(url)
    if parsed is None:
        return Image(url=url, detail=detail)
    return Image(data=parsed[0], media_type=parsed[1], detail=detail)


def _image_url(image: Image) -> str | None:
    if image.url is not None:
        return image.url
    if image.data is not None:
        return _data_url(image.data, image.media_type)
    return None


def _file_data(obj: Mapping[str, Any], key: str) -> tuple[str | None, str | None]:
    """``(data, media type)`` from a ``file_data`` field: a data URL is split, raw data kept."""
    raw = _str_or_none(obj, key)
    if raw is None:
        return None, None
    parsed = _parse_data_url(raw)
    return parsed if parsed is not None else (raw, None)


def _file_data_value(file: File) -> str | None:
    if file.data is None:
        return None
    return _data_url(file.data, file.media_type) if file.media_type else file.data


# -- Chat Completions specifics ----------------------------------------------------------------

_ROLES = ("system", "developer", "user", "assistant", "tool")
_TEXT_TYPES = ("text",)
_USER_TYPES = ("text", "image_url", "input_audio", "file")
_ASSISTANT_TYPES = ("text", "refusal")
_TOOL_TYPES = ("text", "image_url")
_KNOWN_TYPES = (*_USER_TYPES, "refusal")
_AUDIO_FORMATS = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_AUDIO_MEDIA = {v: k for k, v in _AUDIO_FORMATS.items()}
_MISSING: Any = object()


def _audio_media_type(fmt: str) -> str:
    return _AUDIO_FORMATS.get(fmt, "audio/" + fmt)


def _audio_format(media_type: str) -> str:
    return _AUDIO_MEDIA.get(media_type, media_type.removeprefix("audio/"))


def _is_audio(file: File) -> bool:
    return (
        file.data is not None
        and file.media_type is not None
        and file.media_type.startswith("audio/")
        and file.file_id is None
        and file.filename is None
        and file.url is None
    )


def _err(message: str, index: int | None, expected: str, field: str | None = None) -> FormatError:
    return _fail(FORMAT, message, index=index, expected=expected, field=field)


def _read_part(
    p: object, i: int, field: str, allowed: Sequence[str], role: str
) -> tuple[ResultContent, dict[str, Any]]:
    """One content part and its hint (``{}`` when the core keeps all of it)."""
    if not isinstance(p, Mapping):
        raise _err(f"{field} of message {i} is not an object", i, "a content part object", field)
    kind = p.get("type")
    if kind not in allowed:
        if kind in _KNOWN_TYPES:
            raise _err(
                f"content part type {kind!r} is not allowed in a {role} message",
                i,
                "part type one of " + ", ".join(allowed),
                field,
            )
        raise _err(
            f"unknown content part type {kind!r}",
            i,
            "part type one of " + ", ".join(allowed),
            field,
        )
    if kind in ("text", "refusal"):
        text = p.get(kind)
        if not isinstance(text, str):
            raise _err(f"{kind} part without a string {kind!r}", i, f"{kind}: a string", field)
        form = "refusal" if kind == "refusal" else None
        return Text(text), _shape("text", extra=_leftover(p, ("type", kind)), form=form)
    if kind == "image_url":
        obj = p.get("image_url")
        if isinstance(obj, str):
            image = _image_from_url(obj, None)
            return image, _shape("image", extra=_leftover(p, ("type", "image_url")), form="bare")
        if not isinstance(obj, Mapping) or not isinstance(obj.get("url"), str):
            raise _err(
                "image_url part without an image_url.url string",
                i,
                'image_url: {"url": "...", "detail"?: "..."}',
                field,
            )
        detail = _str_or_none(obj, "detail")
        extra = _leftover(p, ("type", "image_url"))
        inner = _leftover(obj, ("url", "detail") if detail is not None else ("url",))
        if inner:
            extra["image_url"] = inner
        return _image_from_url(obj["url"], detail), _shape("image", extra=extra)
    if kind == "input_audio":
        obj = p.get("input_audio")
        if (
            not isinstance(obj, Mapping)
            or not isinstance(obj.get("data"), str)
            or not isinstance(obj.get("format"), str)
        ):
            raise _err(
                "input_audio part without input_audio.data and .format strings",
                i,
                'input_audio: {"data": "<base64>", "format": "wav" | "mp3"}',
                field,
            )
        audio_type = _audio_media_type(obj["format"])
        extra = _leftover(p, ("type", "input_audio"))
        inner = _leftover(obj, ("data", "format"))
        if _audio_format(audio_type) != obj["format"]:
            inner["format"] = obj["format"]
        if inner:
            extra["input_audio"] = inner
        return File(data=obj["data"], media_type=audio_type), _shape("file", extra=extra)
    # file
    obj = p.get("file")
    if not isinstance(obj, Mapping):
        raise _err(
            "file part without a file object",
            i,
            'file: {"file_id"?, "file_data"?, "filename"?}',
            field,
        )
    data, media_type = _file_data(obj, "file_data")
    file = File(
        file_id=_str_or_none(obj, "file_id"),
        data=data,
        media_type=media_type,
        filename=_str_or_none(obj, "filename"),
    )
    consumed = [k for k in ("file_id", "file_data", "filename") if _str_or_none(obj, k) is not None]
    extra = _leftover(p, ("type", "file"))
    inner = _leftover(obj, consumed)
    if inner:
        extra["file"] = inner
    return file, _shape("file", extra=extra, form="file" if _is_audio(file) else None)


def _read_content(
    content: object, i: int, allowed: Sequence[str], role: str
) -> tuple[list[tuple[ResultContent, dict[str, Any]]], str]:
    """The parts of a ``content`` field with their hints, and how it was spelled."""
    if isinstance(content, str):
        return [(Text(content), {})], "string"
    if content is None:
        return [], "null"
    if isinstance(content, list | tuple):
        pairs = [_read_part(p, i, f"content[{j}]", allowed, role) for j, p in enumerate(content)]
        return pairs, "list"
    raise _err(
        f"content of message {i} is a {type(content).__name__}",
        i,
        "content: a string or a list of content parts",
        "content",
    )


def _default_form(parts: Sequence[Part], hints: Sequence[Mapping[str, Any]], nullable: bool) -> str:
    """How the exporter spells content by default: null, one string, or a list of parts."""
    if not parts and nullable:
        return "null"
    if len(parts) == 1 and isinstance(parts[0], Text) and not hints[0]:
        return "string"
    return "list"


def _content_shape(
    pairs: Sequence[tuple[Part, Mapping[str, Any]]], form: str, nullable: bool
) -> str | None:
    default = _default_form([p for p, _ in pairs], [h for _, h in pairs], nullable)
    return None if form == default else form


def _read_tool_call(call: object, i: int, k: int) -> tuple[ToolCall, dict[str, Any]]:
    field = f"tool_calls[{k}]"
    if not isinstance(call, Mapping):
        raise _err(f"{field} of message {i} is not an object", i, "a tool call object", field)
    call_id = call.get("id")
    if not isinstance(call_id, str):
        raise _err(f"{field} has no string id", i, "id: a string", field)
    omit: list[str] = []
    if "type" not in call:
        omit.append("type")
    elif call["type"] != "function":
        raise _err(
            f"unsupported tool call type {call['type']!r}", i, "type: function", f"{field}.type"
        )
    fn = call.get("function")
    if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
        raise _err(
            f"{field} has no function name",
            i,
            'function: {"name": "...", "arguments": "<JSON text>"}',
            f"{field}.function",
        )
    arguments = fn.get("arguments")
    form = None
    if isinstance(arguments, Mapping):
        # Some compatible servers send the arguments decoded; keep them as JSON text.
        try:
            arguments, form = json.dumps(arguments, ensure_ascii=False), "object"
        except (TypeError, ValueError) as e:
            raise _err(
                f"{field} arguments cannot be written as JSON: {e}",
                i,
                "function.arguments: a JSON string or JSON object",
                f"{field}.function.arguments",
            ) from None
    elif not isinstance(arguments, str):
        raise _err(
            f"{field} has no arguments string",
            i,
            "function.arguments: a JSON string",
            f"{field}.function.arguments",
        )
    extra = _leftover(call, ("id", "type", "function"))
    inner = _leftover(fn, ("name", "arguments"))
    if inner:
        extra["function"] = inner
    return ToolCall(call_id, fn["name"], arguments), _shape(
        "tool_call", extra=extra, omit=omit, form=form
    )


def _finish(
    role: Role,
    pairs: Sequence[tuple[Part, Mapping[str, Any]]],
    shape: dict[str, Any],
    meta: dict[str, Any],
) -> Message:
    hints = {str(n): dict(h) for n, (_, h) in enumerate(pairs) if h}
    if hints:
        shape["parts"] = hints
    if shape:
        meta[META_KEY] = shape
    return Message(role, tuple(p for p, _ in pairs), meta=meta)


def _read_message(item: object, i: int, names: dict[str, str]) -> Message:
    if not isinstance(item, Mapping):
        raise _err(f"message {i} is not an object", i, "a message object with a role")
    role = item.get("role")
    if role not in _ROLES:
        problem = "message has no role" if "role" not in item else f"unknown role {role!r}"
        raise _err(problem, i, "role: one of " + ", ".join(_ROLES), "role")
    if role == "assistant":
        return _read_assistant(item, i, names)
    if role == "tool":
        return _read_tool(item, i, names)
    if "content" not in item:
        raise _err(f"{role} message has no content", i, "content: a string or a list", "content")
    allowed = _USER_TYPES if role == "user" else _TEXT_TYPES
    pairs, form = _read_content(item["content"], i, allowed, role)
    shape = _shape(
        extra=_leftover(item, ("role", "content")),
        content=_content_shape(pairs, form, nullable=False),
    )
    meta: dict[str, Any] = {"developer": True} if role == "developer" else {}
    return _finish("user" if role == "user" else "system", pairs, shape, meta)


def _read_assistant(item: Mapping[str, Any], i: int, names: dict[str, str]) -> Message:
    pairs: list[tuple[Part, Mapping[str, Any]]] = []
    consumed = ["role"]
    omit: list[str] = []
    if isinstance(item.get("reasoning_content"), str):
        pairs.append((Reasoning(item["reasoning_content"]), {}))
        consumed.append("reasoning_content")
    elif isinstance(item.get("reasoning"), str):
        pairs.append((Reasoning(item["reasoning"]), _shape("reasoning", form="reasoning")))
        consumed.append("reasoning")
    content_form = None
    if "content" in item:
        consumed.append("content")
        content, form = _read_content(item["content"], i, _ASSISTANT_TYPES, "assistant")
        content_form = _content_shape(content, form, nullable=True)
        pairs.extend(content)
    else:
        omit.append("content")
    if isinstance(item.get("refusal"), str):
        pairs.append((Text(item["refusal"]), _shape("text", form="refusal_field")))
        consumed.append("refusal")
    calls = item.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list | tuple):
            raise _err(
                f"tool_calls of message {i} is a {type(calls).__name__}",
                i,
                "tool_calls: a list of tool call objects",
                "tool_calls",
            )
        if calls:  # an empty list stays in "extra", as sent
            consumed.append("tool_calls")
            for k, call in enumerate(calls):
                part, hint = _read_tool_call(call, i, k)
                names[part.id] = part.name
                pairs.append((part, hint))
    shape = _shape(extra=_leftover(item, consumed), omit=omit, content=content_form)
    return _finish("assistant", pairs, shape, {})


def _read_tool(item: Mapping[str, Any], i: int, names: dict[str, str]) -> Message:
    call_id = item.get("tool_call_id")
    if not isinstance(call_id, str):
        raise _err(
            "tool message has no tool_call_id",
            i,
            "tool_call_id: the id of the call it answers",
            "tool_call_id",
        )
    if "content" not in item:
        raise _err("tool message has no content", i, "content: a string or a list", "content")
    pairs, form = _read_content(item["content"], i, _TOOL_TYPES, "tool")
    # A ``name`` field (sent by some clients) names the tool; it stays in "extra" too.
    name = _str_or_none(item, "name")
    result = ToolResult(
        call_id, name if name is not None else names.get(call_id, ""), tuple(p for p, _ in pairs)
    )
    nested = {str(n): h for n, (_, h) in enumerate(pairs) if h}
    hint = _shape("tool_result", content=_content_shape(pairs, form, nullable=False), parts=nested)
    shape = _shape(extra=_leftover(item, ("role", "tool_call_id", "content")))
    return _finish("tool", [(result, hint)], shape, {})


def messages_from_openai(items: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Read OpenAI Chat Completions messages into core messages.

    ``developer`` messages become ``system`` messages with ``meta["developer"] = True``.
    ``reasoning_content`` (or ``reasoning``) sent by compatible servers becomes a ``Reasoning``
    part (``provider=None``) first in the message; a ``refusal`` becomes a ``Text`` part. Each
    ``tool`` message becomes a ``tool`` message with one ``ToolResult`` whose name is taken from
    the matching earlier call. Arguments are kept verbatim, valid JSON or not. Everything else
    (``name``, annotations, unknown fields, how content was spelled) is kept in
    ``meta["openai"]`` so that ``messages_to_openai`` gives the input back. Ids are derived from
    content; use ``assign_ids`` for conversation-unique ids.

    Raises ``FormatError`` (``format="openai-chat"``, ``index`` of the message) on malformed input.
    """
    seq = _as_items(items, FORMAT, "chat messages")
    names: dict[str, str] = {}
    return [_read_message(item, i, names) for i, item in enumerate(seq)]


def completion_from_openai(response: Mapping[str, Any]) -> Message:
    """The assistant message of a Chat Completions response (``choices[0]``), with its usage.

    ``meta`` also gets ``response_id``, ``model`` and ``stop_reason`` (the ``finish_reason``).
    """
    if not isinstance(response, Mapping):
        raise _err("response is not an object", None, "a chat.completion object")
    choices = response.get("choices")
    if not isinstance(choices, list | tuple) or not choices:
        raise _err("response has no choices", None, "choices: a non-empty list", "choices")
    choice = choices[0]
    if not isinstance(choice, Mapping) or not isinstance(choice.get("message"), Mapping):
        raise _err(
            "choices[0] has no message", 0, "choices[0].message: an object", "choices[0].message"
        )
    raw = choice["message"]
    if raw.get("role", "assistant") != "assistant":
        raise _err(f"choices[0].message has role {raw.get('role')!r}", 0, "role: assistant", "role")
    usage = response.get("usage")
    if usage is not None and not isinstance(usage, Mapping):
        raise _err("usage is not an object", None, "usage: an object", "usage")
    message = _read_assistant({**raw, "role": "assistant"}, 0, {})
    meta = dict(message.meta)
    for key, value in (
        ("response_id", response.get("id")),
        ("model", response.get("model")),
        ("stop_reason", choice.get("finish_reason")),
    ):
        if isinstance(value, str):
            meta[key] = value
    return Message("assistant", message.parts, meta=meta, usage=usage_from_openai(usage))


# -- export -------------------------------------------------------------------------------------


def _write_part(
    part: Part, hint: Mapping[str, Any], i: int, role: str, fmt_field: str
) -> dict[str, Any]:
    if isinstance(part, Text):
        if hint.get("form") == "refusal":
            return _apply({"type": "refusal", "refusal": part.text}, hint)
        return _apply({"type": "text", "text": part.text}, hint)
    if isinstance(part, Image):
        url = _image_url(part)
        if url is None:
            raise _err(
                f"image in message {i} has neither url nor data",
                i,
                "an image with a url or base64 data",
                fmt_field,
            )
        if hint.get("form") == "bare":
            return _apply({"type": "image_url", "image_url": url}, hint)
        obj: dict[str, Any] = {"url": url}
        if part.detail is not None:
            obj["detail"] = part.detail
        return _apply({"type": "image_url", "image_url": obj}, hint)
    if isinstance(part, File):
        if part.url is not None:
            raise _err(
                f"file in message {i} is a URL, which Chat Completions cannot send",
                i,
                "a file with a file_id or data",
                fmt_field,
            )
        if _is_audio(part) and hint.get("form") != "file":
            assert part.data is not None and part.media_type is not None
            audio = {"data": part.data, "format": _audio_format(part.media_type)}
            return _apply({"type": "input_audio", "input_audio": audio}, hint)
        file: dict[str, Any] = {}
        if part.file_id is not None:
            file["file_id"] = part.file_id
        data = _file_data_value(part)
        if data is not None:
            file["file_data"] = data
        if part.filename is not None:
            file["filename"] = part.filename
        return _apply({"type": "file", "file": file}, hint)
    raise _err(
        f"a {part.kind} part cannot be content of a {role} message",
        i,
        f"content parts a {role} message can hold",
        fmt_field,
    )


def _write_content(
    parts: Sequence[tuple[int, Part]],
    shape: Mapping[str, Any],
    i: int,
    role: str,
    *,
    nullable: bool = False,
) -> Any:
    """Content spelled as it was read (``shape["content"]``), else as ``_default_form`` says."""
    form = shape.get("content")
    hints = [_hint(shape, n, p.kind) for n, p in parts]
    default = _default_form([p for _, p in parts], hints, nullable)
    chosen = default
    if form == "list" or (form == "null" and not parts):
        chosen = str(form)
    elif form == "string" and len(parts) == 1 and isinstance(parts[0][1], Text):
        chosen = "string"
    if chosen == "null":
        return None
    if chosen == "string":
        part = parts[0][1]
        assert isinstance(part, Text)
        return part.text
    return [
        _write_part(p, h, i, role, f"parts[{n}]") for (n, p), h in zip(parts, hints, strict=True)
    ]


def _write_tool_call(call: ToolCall, hint: Mapping[str, Any]) -> dict[str, Any]:
    arguments: Any = call.arguments
    if hint.get("form") == "object":
        parsed = call.parsed_arguments()
        if isinstance(parsed, dict):
            arguments = parsed
    fn = {"name": call.name, "arguments": arguments}
    return _apply({"id": call.id, "type": "function", "function": fn}, hint)


def _write_assistant(m: Message, i: int, shape: Mapping[str, Any]) -> dict[str, Any]:
    reasoning: list[tuple[int, Reasoning]] = []
    content: list[tuple[int, Part]] = []
    refusal: list[str] = []
    calls: list[dict[str, Any]] = []
    for n, part in enumerate(m.parts):
        hint = _hint(shape, n, part.kind)
        if isinstance(part, Reasoning):
            # Chat Completions carries reasoning text only (``reasoning_content`` of compatible
            # servers); reasoning of a known provider is only valid with that provider: dropped.
            if part.provider is None:
                reasoning.append((n, part))
        elif isinstance(part, ToolCall):
            calls.append(_write_tool_call(part, hint))
        elif isinstance(part, Text) and hint.get("form") == "refusal_field":
            refusal.append(part.text)
        elif isinstance(part, Text):
            content.append((n, part))
        else:
            raise _err(
                f"a {part.kind} part cannot be in an assistant message",
                i,
                "assistant parts: text, reasoning, tool calls",
                f"parts[{n}]",
            )
    out: dict[str, Any] = {
        "role": "assistant",
        "content": _write_content(content, shape, i, "assistant", nullable=True),
    }
    if reasoning:
        first, _ = reasoning[0]
        key = (
            "reasoning"
            if _hint(shape, first, "reasoning").get("form") == "reasoning"
            else "reasoning_content"
        )
        out[key] = "\n".join(r.text for _, r in reasoning)
    if refusal:
        out["refusal"] = "\n".join(refusal)
    if calls:
        out["tool_calls"] = calls
    return out


def _write_message(m: Message, i: int) -> list[dict[str, Any]]:
    shape = _meta_shape(m, META_KEY)
    if m.role == "assistant":
        return [_apply(_write_assistant(m, i, shape), shape)]
    if m.role == "tool":
        out = []
        for n, part in enumerate(m.parts):
            if not isinstance(part, ToolResult):
                raise _err(
                    f"a {part.kind} part cannot be in a tool message",
                    i,
                    "tool messages hold tool results only",
                    f"parts[{n}]",
                )
            hint = _hint(shape, n, "tool_result")
            content = _write_content(list(enumerate(part.content)), hint, i, "tool")
            msg = {"role": "tool", "tool_call_id": part.call_id, "content": content}
            out.append(_apply(msg, shape))
        return out
    role = m.role
    role_name = "developer" if role == "system" and m.meta.get("developer") is True else role
    for n, part in enumerate(m.parts):
        if role == "system" and not isinstance(part, Text):
            raise _err(
                f"a {part.kind} part cannot be in a system message",
                i,
                "system messages hold text only",
                f"parts[{n}]",
            )
    content = _write_content(list(enumerate(m.parts)), shape, i, role)
    return [_apply({"role": role_name, "content": content}, shape)]


def messages_to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Write core messages as OpenAI Chat Completions messages (the inverse of the reader).

    What Chat Completions cannot express is handled so that a conversation always converts:
    reasoning whose ``provider`` is set (signed or encrypted for Anthropic or the Responses API)
    is dropped, since only its provider accepts it back; several reasoning parts are joined; a
    tool message with several results becomes several tool messages; ``is_error`` is dropped.
    Parts that have no place in a message (an image in an assistant message, a file given by URL,
    a tool call outside an assistant message) raise ``FormatError`` naming the message index.
    """
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            raise _err(f"item {i} is not a Message", i, "abridged.core.model.Message")
        out.extend(_write_message(m, i))
    return out
