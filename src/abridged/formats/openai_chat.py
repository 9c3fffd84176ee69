"""Lossless conversion between OpenAI Chat Completions messages and abridged's message model."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from abridged.core.model import (
    File,
    Image,
    Message,
    Opaque,
    Part,
    Reasoning,
    ResultContent,
    Text,
    ToolCall,
    ToolResult,
)
from abridged.errors import FormatError
from abridged.formats import wire
from abridged.formats.usage import usage_from_openai

__all__ = [
    "FORMAT",
    "META_KEY",
    "completion_from_openai",
    "message_json_openai",
    "messages_from_openai",
    "messages_to_openai",
]

FORMAT = "openai-chat"
"""The ``format`` named by the ``FormatError``s of this module."""

META_KEY = "openai"
"""``Message.meta`` key holding what Chat Completions has beyond the core model: a shape, as
``abridged.formats.wire`` describes it."""

_ROLES = ("system", "developer", "user", "assistant", "tool")
_TEXT_TYPES = ("text",)
_USER_TYPES = ("text", "image_url", "input_audio", "file")
_ASSISTANT_TYPES = ("text", "refusal")
_TOOL_TYPES = ("text", "image_url")
_KNOWN_TYPES = (*_USER_TYPES, "refusal")
_AUDIO_FORMATS = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_AUDIO_MEDIA = {v: k for k, v in _AUDIO_FORMATS.items()}


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
    return wire.fail(FORMAT, message, index=index, expected=expected, field=field)


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
        return Text(text), wire.shape("text", extra=wire.leftover(p, ("type", kind)), form=form)
    if kind == "image_url":
        obj = p.get("image_url")
        if isinstance(obj, str):
            image = wire.image_from_url(obj, None)
            return image, wire.shape(
                "image", extra=wire.leftover(p, ("type", "image_url")), form="bare"
            )
        if not isinstance(obj, Mapping) or not isinstance(obj.get("url"), str):
            raise _err(
                "image_url part without an image_url.url string",
                i,
                'image_url: {"url": "...", "detail"?: "..."}',
                field,
            )
        detail = wire.str_or_none(obj, "detail")
        extra = wire.leftover(p, ("type", "image_url"))
        inner = wire.leftover(obj, ("url", "detail") if detail is not None else ("url",))
        if inner:
            extra["image_url"] = inner
        return wire.image_from_url(obj["url"], detail), wire.shape("image", extra=extra)
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
        extra = wire.leftover(p, ("type", "input_audio"))
        inner = wire.leftover(obj, ("data", "format"))
        if _audio_format(audio_type) != obj["format"]:
            inner["format"] = obj["format"]
        if inner:
            extra["input_audio"] = inner
        return File(data=obj["data"], media_type=audio_type), wire.shape("file", extra=extra)
    # file
    obj = p.get("file")
    if not isinstance(obj, Mapping):
        raise _err(
            "file part without a file object",
            i,
            'file: {"file_id"?, "file_data"?, "filename"?}',
            field,
        )
    data, media_type = wire.file_data(obj, "file_data")
    file = File(
        file_id=wire.str_or_none(obj, "file_id"),
        data=data,
        media_type=media_type,
        filename=wire.str_or_none(obj, "filename"),
    )
    consumed = [
        k for k in ("file_id", "file_data", "filename") if wire.str_or_none(obj, k) is not None
    ]
    extra = wire.leftover(p, ("type", "file"))
    inner = wire.leftover(obj, consumed)
    if inner:
        extra["file"] = inner
    return file, wire.shape("file", extra=extra, form="file" if _is_audio(file) else None)


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
    extra = wire.leftover(call, ("id", "type", "function"))
    inner = wire.leftover(fn, ("name", "arguments"))
    if inner:
        extra["function"] = inner
    return ToolCall(call_id, fn["name"], arguments), wire.shape(
        "tool_call", extra=extra, omit=omit, form=form
    )


def _read_message(item: object, i: int, names: dict[str, str]) -> Message:
    if not isinstance(item, Mapping):
        raise _err(f"message {i} is not an object", i, "a message object with a role")
    role = wire.read_role(item, _ROLES, FORMAT, i)
    if role == "assistant":
        return _read_assistant(item, i, names)
    if role == "tool":
        return _read_tool(item, i, names)
    if "content" not in item:
        raise _err(f"{role} message has no content", i, "content: a string or a list", "content")
    allowed = _USER_TYPES if role == "user" else _TEXT_TYPES
    pairs, form = _read_content(item["content"], i, allowed, role)
    shape = wire.shape(
        extra=wire.leftover(item, ("role", "content")),
        content=wire.content_form(pairs, form),
    )
    meta: dict[str, Any] = {"developer": True} if role == "developer" else {}
    return wire.message("user" if role == "user" else "system", pairs, shape, META_KEY, meta)


def _read_assistant(item: Mapping[str, Any], i: int, names: dict[str, str]) -> Message:
    pairs: list[tuple[Part, Mapping[str, Any]]] = []
    consumed = ["role"]
    omit: list[str] = []
    if isinstance(item.get("reasoning_content"), str):
        pairs.append((Reasoning(item["reasoning_content"]), {}))
        consumed.append("reasoning_content")
    elif isinstance(item.get("reasoning"), str):
        pairs.append((Reasoning(item["reasoning"]), wire.shape("reasoning", form="reasoning")))
        consumed.append("reasoning")
    content_form = None
    if "content" in item:
        consumed.append("content")
        content, form = _read_content(item["content"], i, _ASSISTANT_TYPES, "assistant")
        content_form = wire.content_form(content, form, "null")
        pairs.extend(content)
    else:
        omit.append("content")
    if isinstance(item.get("refusal"), str):
        pairs.append((Text(item["refusal"]), wire.shape("text", form="refusal_field")))
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
    shape = wire.shape(extra=wire.leftover(item, consumed), omit=omit, content=content_form)
    return wire.message("assistant", pairs, shape, META_KEY)


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
    name = wire.str_or_none(item, "name")
    result = ToolResult(
        call_id, name if name is not None else names.get(call_id, ""), tuple(p for p, _ in pairs)
    )
    hint = wire.shape(
        "tool_result", content=wire.content_form(pairs, form), parts=wire.part_hints(pairs)
    )
    shape = wire.shape(extra=wire.leftover(item, ("role", "tool_call_id", "content")))
    return wire.message("tool", [(result, hint)], shape, META_KEY)


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
    seq = wire.as_items(items, FORMAT, "chat messages")
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
    return wire.completion(
        _read_assistant({**raw, "role": "assistant"}, 0, {}),
        usage_from_openai(usage),
        response_id=response.get("id"),
        model=response.get("model"),
        stop_reason=choice.get("finish_reason"),
    )


# -- export -------------------------------------------------------------------------------------


def _write_part(
    part: Part, hint: Mapping[str, Any], i: int, role: str, fmt_field: str
) -> dict[str, Any]:
    if isinstance(part, Text):
        if hint.get("form") == "refusal":
            return wire.apply({"type": "refusal", "refusal": part.text}, hint)
        return wire.apply({"type": "text", "text": part.text}, hint)
    if isinstance(part, Image):
        url = wire.image_url(part)
        if url is None:
            raise _err(
                f"image in message {i} has neither url nor data",
                i,
                "an image with a url or base64 data",
                fmt_field,
            )
        if hint.get("form") == "bare":
            return wire.apply({"type": "image_url", "image_url": url}, hint)
        obj: dict[str, Any] = {"url": url}
        if part.detail is not None:
            obj["detail"] = part.detail
        return wire.apply({"type": "image_url", "image_url": obj}, hint)
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
            return wire.apply({"type": "input_audio", "input_audio": audio}, hint)
        file: dict[str, Any] = {}
        if part.file_id is not None:
            file["file_id"] = part.file_id
        data = wire.file_data_value(part)
        if data is not None:
            file["file_data"] = data
        if part.filename is not None:
            file["filename"] = part.filename
        return wire.apply({"type": "file", "file": file}, hint)
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
    """Content spelled as it was read (``shape["content"]``), else as ``wire.default_form`` says
    (no content is ``null`` when ``nullable``)."""
    form = shape.get("content")
    hints = [wire.hint(shape, n, p.kind) for n, p in parts]
    default = wire.default_form([p for _, p in parts], hints, "null" if nullable else "list")
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
    return wire.apply({"id": call.id, "type": "function", "function": fn}, hint)


def _write_assistant(m: Message, i: int, shape: Mapping[str, Any]) -> dict[str, Any]:
    reasoning: list[tuple[int, Reasoning]] = []
    content: list[tuple[int, Part]] = []
    refusal: list[str] = []
    calls: list[dict[str, Any]] = []
    for n, part in enumerate(m.parts):
        hint = wire.hint(shape, n, part.kind)
        if isinstance(part, Reasoning):
            # Chat Completions carries reasoning text only (``reasoning_content`` of compatible
            # servers); reasoning of a known provider is only valid with that provider: dropped.
            if part.provider is None:
                reasoning.append((n, part))
        elif isinstance(part, ToolCall):
            calls.append(_write_tool_call(part, hint))
        elif isinstance(part, Opaque):
            continue  # a provider's own item (a Responses web search): only it reads it back
        elif isinstance(part, Text) and hint.get("form") == "refusal_field":
            refusal.append(part.text)
        elif isinstance(part, Text):
            content.append((n, part))
        else:
            expected = "assistant parts: text, reasoning, tool calls"
            raise wire.misplaced(
                FORMAT, part, "an assistant message", index=i, n=n, expected=expected
            )
    out: dict[str, Any] = {
        "role": "assistant",
        "content": _write_content(content, shape, i, "assistant", nullable=True),
    }
    if reasoning:
        first, _ = reasoning[0]
        key = (
            "reasoning"
            if wire.hint(shape, first, "reasoning").get("form") == "reasoning"
            else "reasoning_content"
        )
        out[key] = "\n".join(r.text for _, r in reasoning)
    if refusal:
        out["refusal"] = "\n".join(refusal)
    if calls:
        out["tool_calls"] = calls
    return out


def _write_message(m: Message, i: int) -> list[dict[str, Any]]:
    plain = wire.text_protocol_wire(m)
    if plain is not None:
        return [plain]
    shape = wire.meta_shape(m, META_KEY)
    if m.role == "assistant":
        return [wire.apply(_write_assistant(m, i, shape), shape)]
    if m.role == "tool":
        out = []
        for n, result in wire.tool_results(m, i, FORMAT):
            hint = wire.hint(shape, n, "tool_result")
            content = _write_content(list(enumerate(result.content)), hint, i, "tool")
            msg = {"role": "tool", "tool_call_id": result.call_id, "content": content}
            out.append(wire.apply(msg, shape))
        return out
    role = m.role
    role_name = "developer" if role == "system" and m.meta.get("developer") is True else role
    kept = [(n, p) for n, p in enumerate(m.parts) if not isinstance(p, Opaque)]
    for n, part in kept:
        if role == "system" and not isinstance(part, Text):
            expected = "system messages hold text only"
            raise wire.misplaced(FORMAT, part, "a system message", index=i, n=n, expected=expected)
    content = _write_content(kept, shape, i, role)
    return [wire.apply({"role": role_name, "content": content}, shape)]


def messages_to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Write core messages as OpenAI Chat Completions messages (the inverse of the reader).

    What Chat Completions cannot express is handled so that a conversation always converts:
    reasoning whose ``provider`` is set (signed or encrypted for Anthropic or the Responses API)
    is dropped, since only its provider accepts it back, and so are ``Opaque`` parts (a
    provider's own items: a Responses web search, an Anthropic server tool); several reasoning
    parts are joined; a tool message with several results becomes several tool messages;
    ``is_error`` is dropped.
    Parts that have no place in a message (an image in an assistant message, a file given by URL,
    a tool call outside an assistant message) raise ``FormatError`` naming the message index.

    Messages with ``meta["text_protocol"]`` (mini-swe-agent's bash blocks, whose tool steps were
    recovered from text) are written as the plain messages they were sent as: the assistant
    message as its text alone (no ``tool_calls``), the observation as a ``user`` message
    (``meta["wire_role"]``) whose content is the observation text, or its placeholder once pruned.
    """
    return [item for i, m in wire.checked(messages, FORMAT) for item in _write_message(m, i)]


def wire_json(value: Any) -> bytes:
    """JSON bytes as the OpenAI SDK encodes a request body (compact, UTF-8, no NaN), so that
    a body joined from parts is byte for byte the one the SDK would send."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def message_json_openai(m: Message, i: int = 0) -> bytes:
    """One message as the JSON of its Chat Completions messages, comma-separated (a tool
    message of several results is several; ``b""`` when it writes none): what
    ``messages_to_openai`` gives for it, encoded as ``wire_json`` encodes it. ``i`` is the
    index errors name. ``UnicodeEncodeError`` for text that is no valid UTF-8 (a lone
    surrogate)."""
    for _ in wire.checked([m], FORMAT):  # not a Message: the FormatError of messages_to_openai
        pass
    return b",".join(wire_json(item) for item in _write_message(m, i))
