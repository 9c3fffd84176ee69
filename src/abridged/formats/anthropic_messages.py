"""Lossless conversion between Anthropic Messages (system and messages) and the core model."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from abridged.core.model import (
    File,
    Image,
    Message,
    Opaque,
    Part,
    Reasoning,
    ResultContent,
    Role,
    Text,
    ToolCall,
    ToolResult,
)
from abridged.errors import FormatError, SettingError
from abridged.formats import wire
from abridged.formats.usage import usage_from_anthropic

__all__ = [
    "FORMAT",
    "META_KEY",
    "PROVIDER",
    "RAW_ARGUMENTS_KEY",
    "completion_from_anthropic",
    "messages_from_anthropic",
    "messages_to_anthropic",
]

FORMAT = "anthropic"
"""The ``format`` named by the ``FormatError``s of this module."""

META_KEY = "anthropic"
"""``Message.meta`` key holding what Anthropic Messages has beyond the core model."""

PROVIDER = "anthropic"
"""``Reasoning.provider`` of thinking blocks: only these are written back as thinking blocks."""

RAW_ARGUMENTS_KEY = "_raw_arguments"
"""The one key of a ``tool_use`` input that carries arguments which are not a JSON object."""

_USER_BLOCKS = ("text", "image", "document", "tool_result")
_ASSISTANT_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use")
_RESULT_BLOCKS = ("text", "image", "document")
_KNOWN_BLOCKS = (*_USER_BLOCKS, "thinking", "redacted_thinking", "tool_use")
_ROLES = ("user", "assistant")
_MISSING: Any = object()


def _err(message: str, index: int | None, expected: str, field: str | None = None) -> FormatError:
    return wire.fail(FORMAT, message, index=index, expected=expected, field=field)


def _need_str(block: Mapping[str, Any], key: str, i: int | None, field: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        kind = block.get("type")
        raise _err(f"{kind} block has no string {key!r}", i, f"{key}: a string", f"{field}.{key}")
    return value


def _arguments_from_input(value: Mapping[str, Any]) -> str:
    """``tool_use.input`` as JSON text; the wrapper ``{RAW_ARGUMENTS_KEY: text}`` is undone."""
    raw = value.get(RAW_ARGUMENTS_KEY)
    if len(value) == 1 and isinstance(raw, str) and not isinstance(_loads(raw), dict):
        return raw
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # nested too deeply to decode: not an object either
        return None


# -- import ---------------------------------------------------------------------------------------


def _read_source(
    block: Mapping[str, Any], i: int | None, field: str
) -> tuple[Mapping[str, Any], str | None]:
    source = block.get("source")
    if not isinstance(source, Mapping):
        raise _err(
            f"{block.get('type')} block has no source object",
            i,
            'source: {"type": "base64" | "url" | ..., ...}',
            f"{field}.source",
        )
    kind = source.get("type")
    return source, kind if isinstance(kind, str) else None


def _source_extra(source: Mapping[str, Any], consumed: Sequence[str]) -> dict[str, Any]:
    inner = wire.leftover(source, consumed)
    return {"source": inner} if inner else {}


def _read_image(
    block: Mapping[str, Any], i: int | None, field: str
) -> tuple[Image, dict[str, Any]]:
    source, kind = _read_source(block, i, field)
    extra = wire.leftover(block, ("type", "source"))
    media_type, data, url = (wire.str_or_none(source, k) for k in ("media_type", "data", "url"))
    if kind == "base64" and media_type is not None and data is not None:
        image = Image(data=data, media_type=media_type)
        extra.update(_source_extra(source, ("type", "media_type", "data")))
    elif kind == "url" and url is not None:
        image = Image(url=url)
        extra.update(_source_extra(source, ("type", "url")))
    else:  # a file id or a source kind the core has no field for: kept whole
        image = Image()
        extra["source"] = wire.leftover(source, ())
    return image, wire.shape("image", extra=extra)


def _read_document(
    block: Mapping[str, Any], i: int | None, field: str
) -> tuple[File, dict[str, Any]]:
    source, kind = _read_source(block, i, field)
    title = wire.str_or_none(block, "title")
    extra = wire.leftover(
        block, ("type", "source", "title") if title is not None else ("type", "source")
    )
    media_type, data, url, file_id = (
        wire.str_or_none(source, k) for k in ("media_type", "data", "url", "file_id")
    )
    form = None
    if kind in ("base64", "text") and media_type is not None and data is not None:
        file = File(data=data, media_type=media_type, filename=title)
        extra.update(_source_extra(source, ("type", "media_type", "data")))
        form = "text" if kind == "text" else None
    elif kind == "url" and url is not None:
        file = File(url=url, filename=title)
        extra.update(_source_extra(source, ("type", "url")))
    elif kind == "file" and file_id is not None:
        file = File(file_id=file_id, filename=title)
        extra.update(_source_extra(source, ("type", "file_id")))
    else:  # content blocks, or a source kind the core has no field for: kept whole
        file = File(filename=title)
        extra["source"] = wire.leftover(source, ())
    return file, wire.shape("file", extra=extra, form=form)


def _read_tool_result(
    block: Mapping[str, Any], i: int | None, field: str, names: Mapping[str, str]
) -> tuple[ToolResult, dict[str, Any]]:
    call_id = _need_str(block, "tool_use_id", i, field)
    content = block.get("content", _MISSING)
    pairs: list[tuple[ResultContent, dict[str, Any]]] = []
    if content is _MISSING:
        form = "absent"
    elif isinstance(content, str):
        pairs, form = [(Text(content), {})], "string"
    elif isinstance(content, list | tuple):
        for j, b in enumerate(content):
            part, hint = _read_block(b, i, f"{field}.content[{j}]", _RESULT_BLOCKS, "tool_result")
            assert isinstance(part, Text | Image | File)
            pairs.append((part, hint))
        form = "list"
    else:
        raise _err(
            f"tool_result content is a {type(content).__name__}",
            i,
            "content: a string or a list of text/image blocks",
            f"{field}.content",
        )
    is_error = block.get("is_error") is True
    consumed = ["type", "tool_use_id", "content"] + (["is_error"] if is_error else [])
    hint = wire.shape(
        "tool_result",
        extra=wire.leftover(block, consumed),
        content=wire.content_form(pairs, form, "absent"),
        parts=wire.part_hints(pairs),
    )
    result = ToolResult(call_id, names.get(call_id, ""), tuple(p for p, _ in pairs), is_error)
    return result, hint


def _read_block(
    block: object,
    i: int | None,
    field: str,
    allowed: Sequence[str],
    where: str,
    *,
    names: Mapping[str, str] | None = None,
) -> tuple[Part, dict[str, Any]]:
    """One content block as a core part with its hint (``{}`` when the core keeps all of it)."""
    if not isinstance(block, Mapping):
        raise _err(f"{field} of message {i} is not an object", i, "a content block object", field)
    kind = block.get("type")
    if isinstance(kind, str) and kind not in _KNOWN_BLOCKS and allowed is not _RESULT_BLOCKS:
        # A block of the provider's own (server tool use and results, MCP, container uploads,
        # its compaction): kept whole, written back only to Anthropic.
        if not kind or kind == "system" or "role" in block:
            raise _err(
                f"block type {kind!r} is unknown, in a {where}",
                i,
                "a content block object with a type",
                f"{field}.type",
            )
        return Opaque.of(FORMAT, block), {}
    if kind not in allowed:
        problem = "is not allowed in" if kind in _KNOWN_BLOCKS else "is unknown, in"
        raise _err(
            f"block type {kind!r} {problem} a {where}",
            i,
            "block type one of " + ", ".join(allowed),
            f"{field}.type",
        )
    if kind == "text":
        text = _need_str(block, "text", i, field)
        return Text(text), wire.shape("text", extra=wire.leftover(block, ("type", "text")))
    if kind == "image":
        return _read_image(block, i, field)
    if kind == "document":
        return _read_document(block, i, field)
    if kind == "tool_result":
        return _read_tool_result(block, i, field, names or {})
    if kind == "thinking":
        text = _need_str(block, "thinking", i, field)
        signature = wire.str_or_none(block, "signature")
        consumed = (
            ("type", "thinking", "signature") if signature is not None else ("type", "thinking")
        )
        part = Reasoning(text=text, signature=signature, provider=PROVIDER)
        return part, wire.shape("reasoning", extra=wire.leftover(block, consumed))
    if kind == "redacted_thinking":
        data = _need_str(block, "data", i, field)
        part = Reasoning(encrypted=data, redacted=True, provider=PROVIDER)
        return part, wire.shape("reasoning", extra=wire.leftover(block, ("type", "data")))
    # tool_use
    call_id = _need_str(block, "id", i, field)
    name = _need_str(block, "name", i, field)
    value = block.get("input")
    if not isinstance(value, Mapping):
        raise _err("tool_use block has no input object", i, "input: an object", f"{field}.input")
    try:
        arguments = _arguments_from_input(value)
    except (TypeError, ValueError, RecursionError) as e:
        raise _err(
            f"tool_use input cannot be written as JSON: {e}",
            i,
            "input: a JSON object",
            f"{field}.input",
        ) from None
    extra = wire.leftover(block, ("type", "id", "name", "input"))
    return ToolCall(call_id, name, arguments), wire.shape("tool_call", extra=extra)


def _read_content(
    item: Mapping[str, Any], i: int, allowed: Sequence[str], names: dict[str, str]
) -> tuple[list[tuple[Part, dict[str, Any]]], str]:
    content = item.get("content", _MISSING)
    if isinstance(content, str):
        return [(Text(content), {})], "string"
    if not isinstance(content, list | tuple):
        problem = (
            "has no content" if content is _MISSING else f"content is a {type(content).__name__}"
        )
        raise _err(
            f"message {i} {problem}",
            i,
            "content: a string or a list of content blocks",
            "content",
        )
    pairs = []
    role = item["role"]
    for j, b in enumerate(content):
        part, hint = _read_block(b, i, f"content[{j}]", allowed, f"{role} message", names=names)
        if isinstance(part, ToolCall):
            names[part.id] = part.name
        pairs.append((part, hint))
    return pairs, "list"


def _read_message(item: object, i: int, names: dict[str, str], out: list[Message]) -> None:
    if not isinstance(item, Mapping):
        raise _err(f"message {i} is not an object", i, "a message object with a role")
    role = item.get("role")
    if role not in _ROLES:
        if "role" not in item:
            problem = "message has no role"
        elif role == "system":
            problem = "role 'system' is not a message role in Anthropic Messages"
        else:
            problem = f"unknown role {role!r}"
        raise _err(problem, i, "role: user or assistant (the system prompt is separate)", "role")
    extra = wire.leftover(item, ("role", "content"))
    if role == "assistant":
        pairs, form = _read_content(item, i, _ASSISTANT_BLOCKS, names)
        shape = wire.shape(extra=extra, content=wire.content_form(pairs, form))
        out.append(wire.message("assistant", pairs, shape, META_KEY))
        return
    pairs, form = _read_content(item, i, _USER_BLOCKS, names)
    # A user message holding tool results is split: each tool_result becomes a tool message, the
    # other blocks between them user messages; "merge" says which ones the export joins again.
    groups: list[tuple[Role, list[tuple[Part, dict[str, Any]]]]] = []
    for part, hint in pairs:
        if isinstance(part, ToolResult):
            groups.append(("tool", [(part, hint)]))
        elif groups and groups[-1][0] == "user":
            groups[-1][1].append((part, hint))
        else:
            groups.append(("user", [(part, hint)]))
    if not groups:
        groups.append(("user", []))
    for k, (group_role, group) in enumerate(groups):
        shape = {}
        if k == 0:
            shape = wire.shape(extra=extra)
            if len(groups) == 1 and group_role == "user":
                content = wire.content_form(group, form)
                if content:
                    shape["content"] = content
            if group_role == "tool" and out and out[-1].role == "tool":
                shape["merge"] = False
        elif not (group_role == "tool" and groups[k - 1][0] == "tool"):
            shape["merge"] = True
        out.append(wire.message(group_role, group, shape, META_KEY))


def _read_system(system: object) -> Message:
    if isinstance(system, str):
        return Message.system(system)
    if not isinstance(system, list | tuple):
        raise _err(
            f"system is a {type(system).__name__}",
            None,
            "system: a string or a list of text blocks",
            "system",
        )
    pairs: list[tuple[Part, dict[str, Any]]] = []
    for j, block in enumerate(system):
        if not isinstance(block, Mapping) or block.get("type") != "text":
            raise _err(
                f"system[{j}] is not a text block",
                None,
                'system blocks: {"type": "text", "text": "..."}',
                f"system[{j}]",
            )
        pairs.append(_read_block(block, None, f"system[{j}]", ("text",), "system prompt"))
    return wire.message(
        "system", pairs, wire.shape(content=wire.content_form(pairs, "list")), META_KEY
    )


def messages_from_anthropic(
    messages: Sequence[Mapping[str, Any]],
    system: str | Sequence[Mapping[str, Any]] | None = None,
) -> list[Message]:
    """Read Anthropic Messages (and the separate ``system`` prompt) into core messages.

    ``system`` (a string, or text blocks whose ``cache_control`` is kept) becomes one leading
    ``system`` message. ``thinking`` becomes ``Reasoning(text, signature, provider="anthropic")``,
    ``redacted_thinking`` ``Reasoning(encrypted=data, redacted=True, provider="anthropic")``.
    ``tool_use.input`` becomes the call's JSON arguments (compact, keys in order). A user
    message holding ``tool_result`` blocks is split: each result becomes a ``tool`` message with
    one ``ToolResult`` (named after its call), the other blocks around them ``user`` messages
    marked ``meta["anthropic"]["merge"] = True`` so that ``messages_to_anthropic`` joins them
    again. Everything else the core model has no field for (``cache_control``, citations, a
    document's context, how content was spelled) is kept in ``meta["anthropic"]``.

    Raises ``FormatError`` (``format="anthropic"``, ``index`` of the message; ``field="system..."``
    with no index for the system prompt) on malformed input.
    """
    out: list[Message] = []
    if system is not None:
        out.append(_read_system(system))
    names: dict[str, str] = {}
    for i, item in enumerate(wire.as_items(messages, FORMAT, "Anthropic messages")):
        _read_message(item, i, names, out)
    return out


def completion_from_anthropic(response: Mapping[str, Any]) -> Message:
    """The assistant message of an Anthropic Messages response, with its usage.

    ``meta`` also gets ``response_id``, ``model`` and ``stop_reason``.
    """
    if not isinstance(response, Mapping):
        raise _err("response is not an object", None, "a message object")
    if (
        response.get("type", "message") != "message"
        or response.get("role", "assistant") != "assistant"
    ):
        raise _err(
            f"response is a {response.get('type')!r} object with role {response.get('role')!r}",
            None,
            'a message object: {"type": "message", "role": "assistant", ...}',
            "type",
        )
    usage = response.get("usage")
    if usage is not None and not isinstance(usage, Mapping):
        raise _err("usage is not an object", None, "usage: an object", "usage")
    content = response.get("content")
    if not isinstance(content, list | tuple):
        raise _err("response has no content list", None, "content: a list of blocks", "content")
    out: list[Message] = []
    _read_message({"role": "assistant", "content": content}, 0, {}, out)
    return wire.completion(
        out[0],
        usage_from_anthropic(usage),
        response_id=response.get("id"),
        model=response.get("model"),
        stop_reason=response.get("stop_reason"),
    )


# -- export ---------------------------------------------------------------------------------------


def _write_source_image(part: Image, i: int, field: str) -> dict[str, Any] | None:
    if part.data is not None:
        if part.media_type is None:
            raise _err(
                "image data has no media type", i, "an image media type", f"{field}.media_type"
            )
        return {"type": "base64", "media_type": part.media_type, "data": part.data}
    if part.url is not None:
        return {"type": "url", "url": part.url}
    return None


def _write_source_file(part: File, form: object, i: int, field: str) -> dict[str, Any] | None:
    if part.file_id is not None:
        return {"type": "file", "file_id": part.file_id}
    if part.data is not None:
        if part.media_type is None:
            raise _err(
                "document data has no media type", i, "a document media type", f"{field}.media_type"
            )
        kind = "text" if form == "text" else "base64"
        return {"type": kind, "media_type": part.media_type, "data": part.data}
    if part.url is not None:
        return {"type": "url", "url": part.url}
    return None


def _write_block(
    part: Part,
    hint: Mapping[str, Any],
    i: int,
    field: str,
    invalid_arguments: str,
) -> dict[str, Any] | None:
    """``part`` as a content block; ``None`` for reasoning of another provider (dropped)."""
    if isinstance(part, Text):
        return wire.apply({"type": "text", "text": part.text}, hint)
    if isinstance(part, Image | File):
        if isinstance(part, Image):
            block: dict[str, Any] = {"type": "image"}
            source = _write_source_image(part, i, field)
        else:
            block = {"type": "document"}
            source = _write_source_file(part, hint.get("form"), i, field)
        if source is not None:
            block["source"] = source
        elif not isinstance(hint.get("extra", {}).get("source"), Mapping):
            raise _err(f"{part.kind} has no data, url or file id", i, "a source", field)
        if isinstance(part, File) and part.filename is not None:
            block["title"] = part.filename
        return wire.apply(block, hint)
    if isinstance(part, Reasoning):
        if part.provider != PROVIDER and not (
            part.provider is None and (part.signature is not None or part.redacted)
        ):
            return None  # only Anthropic can read its thinking back (signatures are its own)
        if part.redacted:
            return wire.apply({"type": "redacted_thinking", "data": part.encrypted or ""}, hint)
        block = {"type": "thinking", "thinking": part.text}
        if part.signature is not None:
            block["signature"] = part.signature
        return wire.apply(block, hint)
    if isinstance(part, ToolCall):
        parsed = part.parsed_arguments()
        if not isinstance(parsed, dict):
            if invalid_arguments == "raise":
                raise _err(
                    f"arguments of tool call {part.id!r} in message {i} are not a JSON object",
                    i,
                    "arguments: a JSON object (tool_use.input is an object)",
                    f"{field}.arguments",
                )
            parsed = {RAW_ARGUMENTS_KEY: part.arguments}
        block = {"type": "tool_use", "id": part.id, "name": part.name, "input": parsed}
        return wire.apply(block, hint)
    if isinstance(part, Opaque):
        # the provider's own block: back to Anthropic as it came, dropped for anything else
        return part.value() if part.format == FORMAT else None
    # ToolResult
    content: list[tuple[int, Part]] = list(enumerate(part.content))
    blocks = [
        _write_block(p, wire.hint(hint, n, p.kind), i, f"{field}.content[{n}]", invalid_arguments)
        for n, p in content
    ]
    hints = [wire.hint(hint, n, p.kind) for n, p in content]
    form = hint.get("content")
    if form not in ("string", "list", "absent"):
        form = wire.default_form([p for _, p in content], hints, "absent")
    block = {"type": "tool_result", "tool_use_id": part.call_id}
    if form == "string" and len(content) == 1 and isinstance(content[0][1], Text):
        block["content"] = content[0][1].text
    elif content or form != "absent":
        block["content"] = blocks
    if part.is_error:
        block["is_error"] = True
    return wire.apply(block, hint)


_ALLOWED: dict[str, tuple[type, ...]] = {
    "user": (Text, Image, File, Opaque),
    "assistant": (Text, Reasoning, ToolCall, Opaque),
    "tool": (ToolResult,),
    "system": (Text,),
}


def _write_content(
    m: Message, i: int, shape: Mapping[str, Any], invalid_arguments: str
) -> str | list[dict[str, Any]]:
    parts: list[tuple[Part, Mapping[str, Any]]] = []
    blocks: list[dict[str, Any]] = []
    for n, part in enumerate(m.parts):
        if not isinstance(part, _ALLOWED[m.role]):
            expected = f"{m.role} message parts: " + ", ".join(t.__name__ for t in _ALLOWED[m.role])
            raise wire.misplaced(
                FORMAT, part, f"a {m.role} message", index=i, n=n, expected=expected
            )
        hint = wire.hint(shape, n, part.kind)
        block = _write_block(part, hint, i, f"parts[{n}]", invalid_arguments)
        if block is not None:
            parts.append((part, hint))
            blocks.append(block)
    form = shape.get("content")
    if form not in ("string", "list") or m.role == "tool":
        form = wire.default_form([p for p, _ in parts], [h for _, h in parts])
    if form == "string" and len(parts) == 1 and isinstance(parts[0][0], Text) and m.role != "tool":
        return parts[0][0].text
    return blocks


def _write_system(systems: Sequence[Message]) -> str | list[dict[str, Any]] | None:
    if not systems:
        return None
    blocks: list[dict[str, Any]] = []
    for i, m in enumerate(systems):
        content = _write_content(m, i, wire.meta_shape(m, META_KEY), "raise")
        if len(systems) == 1 and isinstance(content, str):
            return content
        blocks.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
    return blocks


def messages_to_anthropic(
    messages: Sequence[Message],
    *,
    invalid_arguments: Literal["wrap", "raise"] = "wrap",
) -> tuple[str | list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """Write core messages as Anthropic Messages: ``(system, messages)``.

    Leading ``system`` messages become the system prompt (a string when it is one plain text,
    else text blocks; ``None`` when there is none); a system message after the first other
    message raises ``FormatError``. ``tool`` messages become ``user`` messages of
    ``tool_result`` blocks: consecutive tool messages are merged into one user message (parallel
    tool use), and a message marked ``meta["anthropic"]["merge"]`` joins the previous one.
    Reasoning of another provider is dropped (only its provider accepts it back); an image's
    ``detail`` and size have no field and are not written. Image or document data needs its
    media type (``FormatError`` otherwise).

    ``tool_use.input`` must be a JSON object. Arguments that are not (invalid JSON, kept verbatim
    in the core) are by default wrapped as ``{"_raw_arguments": "<text>"}``, which the reader
    unwraps, so a conversation with one bad call still converts and round-trips; with
    ``invalid_arguments="raise"`` they raise ``FormatError`` naming the message index instead.

    Messages with ``meta["text_protocol"]`` (mini-swe-agent's bash blocks, whose tool steps were
    recovered from text) are written as the plain messages they were sent as: the assistant
    message as its text alone (no ``tool_use``), the observation as a ``user`` message
    (``meta["wire_role"]``) whose string content is the observation text, or its placeholder
    once pruned. They are never merged with a neighbour, and nothing is merged into them: the
    Messages API accepts consecutive ``user`` (or ``assistant``) messages and combines them
    into one turn itself, so each message stays exactly as it was sent.
    """
    if invalid_arguments not in ("wrap", "raise"):
        raise SettingError("invalid_arguments", invalid_arguments, '"wrap" or "raise"')
    start = 0
    while start < len(messages) and messages[start].role == "system":
        start += 1
    system = _write_system([m for _, m in wire.checked(messages[:start], FORMAT)])
    out: list[dict[str, Any]] = []
    previous: Role | None = None
    for i, m in wire.checked(messages, FORMAT):
        if i < start:
            continue
        if m.role == "system":
            raise _err(
                f"system message {i} comes after the conversation started",
                i,
                "system messages only before the first user or assistant message",
                "role",
            )
        plain = wire.text_protocol_wire(m)
        if plain is not None:
            out.append(plain)  # never merged: consecutive user turns are valid as they are
            previous = None
            continue
        shape = wire.meta_shape(m, META_KEY)
        role = "assistant" if m.role == "assistant" else "user"
        content = _write_content(m, i, shape, invalid_arguments)
        merge = shape.get("merge")
        if not isinstance(merge, bool):
            merge = m.role == "tool" and previous == "tool"
        previous = m.role
        if merge and out and out[-1]["role"] == role:
            last = out[-1]
            if isinstance(last["content"], str):
                last["content"] = [{"type": "text", "text": last["content"]}]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            last["content"].extend(content)
            extra = shape.get("extra")
            if isinstance(extra, Mapping):
                wire.merge_into(last, extra)
            continue
        out.append(wire.apply({"role": role, "content": content}, shape))
    return system, out
