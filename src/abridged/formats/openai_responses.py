"""Lossless conversion between OpenAI Responses input/output items and abridged's message model."""

from __future__ import annotations

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

__all__ = ["FORMAT", "META_KEY", "messages_from_responses", "messages_to_responses"]

FORMAT = "openai-responses"
"""The ``format`` named by the ``FormatError``s of this module."""

META_KEY = "openai_responses"
"""``Message.meta`` key holding what the Responses API has beyond the core model."""

PROVIDER = "openai"
"""``Reasoning.provider`` of reasoning items: only these are written back as reasoning items."""

_ROLES = ("user", "system", "developer", "assistant")
_INPUT_TYPES = ("input_text", "output_text", "input_image", "input_file")
_SYSTEM_TYPES = ("input_text", "output_text")
_ASSISTANT_TYPES = ("output_text", "refusal", "input_text")
_KNOWN_TYPES = (*_INPUT_TYPES, "refusal")
_ITEM_TYPES = ("message", "function_call", "function_call_output", "reasoning")


def _err(message: str, index: int | None, expected: str, field: str | None = None) -> FormatError:
    return wire.fail(FORMAT, message, index=index, expected=expected, field=field)


def _need_str(obj: Mapping[str, Any], key: str, i: int, what: str, field: str | None) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        name = f"{field}.{key}" if field else key
        raise _err(f"{what} has no string {key!r}", i, f"{key}: a string", name)
    return value


# -- import ---------------------------------------------------------------------------------------


def _read_part(
    p: object, i: int, field: str, allowed: Sequence[str], assistant: bool
) -> tuple[ResultContent, dict[str, Any]]:
    """One content part with its hint (``{}`` when the core keeps all of it)."""
    if not isinstance(p, Mapping):
        raise _err(f"{field} of item {i} is not an object", i, "a content part object", field)
    kind = p.get("type")
    if kind not in allowed:
        problem = "is not allowed here" if kind in _KNOWN_TYPES else "is unknown"
        raise _err(
            f"content part type {kind!r} {problem}",
            i,
            "part type one of " + ", ".join(allowed),
            field,
        )
    if kind == "refusal":
        text = _need_str(p, "refusal", i, "refusal part", field)
        return Text(text), wire.shape(
            "text", extra=wire.leftover(p, ("type", "refusal")), form="refusal"
        )
    if kind in ("input_text", "output_text"):
        text = _need_str(p, "text", i, f"{kind} part", field)
        consumed = ["type", "text"]
        omit: list[str] = []
        if kind == "output_text":
            if "annotations" not in p:
                omit.append("annotations")
            elif p["annotations"] == []:
                consumed.append("annotations")
        default = "output_text" if assistant else "input_text"
        form = None if kind == default else kind
        return Text(text), wire.shape(
            "text", extra=wire.leftover(p, consumed), omit=omit, form=form
        )
    if kind == "input_image":
        url = wire.str_or_none(p, "image_url")
        detail = wire.str_or_none(p, "detail")
        consumed = ["type"]
        consumed += ["image_url"] if url is not None else []
        consumed += ["detail"] if detail is not None else []
        image = wire.image_from_url(url, detail) if url is not None else Image(detail=detail)
        return image, wire.shape("image", extra=wire.leftover(p, consumed))
    # input_file
    data, media_type = wire.file_data(p, "file_data")
    file = File(
        file_id=wire.str_or_none(p, "file_id"),
        url=wire.str_or_none(p, "file_url"),
        data=data,
        media_type=media_type,
        filename=wire.str_or_none(p, "filename"),
    )
    keys = ("file_id", "file_url", "file_data", "filename")
    consumed = ["type"] + [k for k in keys if wire.str_or_none(p, k) is not None]
    return file, wire.shape("file", extra=wire.leftover(p, consumed))


def _read_content(
    content: object, i: int, key: str, allowed: Sequence[str], assistant: bool
) -> tuple[list[tuple[ResultContent, dict[str, Any]]], str]:
    if isinstance(content, str):
        return [(Text(content), {})], "string"
    if isinstance(content, list | tuple):
        pairs = [_read_part(p, i, f"{key}[{j}]", allowed, assistant) for j, p in enumerate(content)]
        return pairs, "list"
    raise _err(
        f"{key} of item {i} is a {type(content).__name__}",
        i,
        f"{key}: a string or a list of content parts",
        key,
    )


def _read_message(item: Mapping[str, Any], i: int) -> Message:
    role = item["role"]
    if "content" not in item:
        raise _err(f"{role} message has no content", i, "content: a string or a list", "content")
    allowed = _INPUT_TYPES if role == "user" else _SYSTEM_TYPES
    pairs, form = _read_content(item["content"], i, "content", allowed, False)
    shape = wire.shape(
        extra=wire.leftover(item, ("type", "role", "content")),
        omit=() if "type" in item else ("type",),
        content=wire.content_form(pairs, form),
    )
    meta: dict[str, Any] = {"developer": True} if role == "developer" else {}
    return wire.message("user" if role == "user" else "system", pairs, shape, META_KEY, meta)


def _read_reasoning(item: Mapping[str, Any], i: int) -> tuple[Reasoning, dict[str, Any]]:
    consumed = ["type"]
    omit: list[str] = []
    summary: list[str] = []
    raw_summary = item.get("summary")
    if raw_summary is None and "summary" not in item:
        omit.append("summary")
    elif not isinstance(raw_summary, list | tuple):
        raise _err(
            "reasoning item summary is not a list",
            i,
            "summary: a list of summary_text parts",
            "summary",
        )
    else:
        plain = True
        for j, s in enumerate(raw_summary):
            if not isinstance(s, Mapping) or not isinstance(s.get("text"), str):
                raise _err(
                    f"summary[{j}] of reasoning item {i} has no text",
                    i,
                    'summary parts: {"type": "summary_text", "text": "..."}',
                    f"summary[{j}]",
                )
            summary.append(s["text"])
            plain = plain and dict(s) == {"type": "summary_text", "text": s["text"]}
        if plain:
            consumed.append("summary")  # otherwise kept verbatim in "extra", which wins on export
    text = ""
    content = item.get("content")
    if isinstance(content, list | tuple):
        # Several reasoning_text parts are joined for the core; the list itself stays in "extra".
        texts = [
            c["text"] for c in content if isinstance(c, Mapping) and isinstance(c.get("text"), str)
        ]
        text = "\n".join(texts)
        if (
            len(content) == 1
            and text
            and dict(content[0]) == {"type": "reasoning_text", "text": text}
        ):
            consumed.append("content")
    elif content is not None:
        raise _err(
            "reasoning item content is not a list",
            i,
            "content: a list of reasoning_text parts",
            "content",
        )
    encrypted = wire.str_or_none(item, "encrypted_content")
    if encrypted is not None:
        consumed.append("encrypted_content")
    rid = wire.str_or_none(item, "id")
    if rid is not None:
        consumed.append("id")
    part = Reasoning(
        text=text, encrypted=encrypted, summary=tuple(summary), id=rid, provider=PROVIDER
    )
    return part, wire.shape("reasoning", extra=wire.leftover(item, consumed), omit=omit)


def _read_call(item: Mapping[str, Any], i: int) -> tuple[ToolCall, dict[str, Any]]:
    call_id = _need_str(item, "call_id", i, "function_call item", None)
    name = _need_str(item, "name", i, "function_call item", None)
    arguments = _need_str(item, "arguments", i, "function_call item", None)
    extra = wire.leftover(item, ("type", "call_id", "name", "arguments"))
    return ToolCall(call_id, name, arguments), wire.shape("tool_call", extra=extra)


def _read_assistant_item(
    item: Mapping[str, Any], i: int, kind: str, group: list[tuple[Part, dict[str, Any]]]
) -> None:
    """Add the parts of one assistant-side item to ``group`` (one assistant message)."""
    if kind == "reasoning":
        group.append(_read_reasoning(item, i))
        return
    if kind == "function_call":
        group.append(_read_call(item, i))
        return
    content = item.get("content")
    if "content" not in item or content in ([], ()):
        raise _err(
            "assistant message item has no content",
            i,
            "content: a string or a non-empty list of output_text/refusal parts",
            "content",
        )
    pairs, form = _read_content(content, i, "content", _ASSISTANT_TYPES, True)
    item_shape = wire.shape(
        extra=wire.leftover(item, ("type", "role", "content")),
        omit=() if "type" in item else ("type",),
        content="string" if form == "string" else None,
    )
    starts_new = not group or not isinstance(group[-1][0], Text)
    first, first_hint = pairs[0]
    if item_shape or not starts_new:
        # The first text part of a message item says where the item starts and what it had.
        first_hint = {**first_hint, "kind": "text", "item": item_shape}
    group.append((first, first_hint))
    group.extend(pairs[1:])


def _item_kind(item: object, i: int) -> str:
    if not isinstance(item, Mapping):
        raise _err(f"item {i} is not an object", i, "an input or output item object")
    kind = item.get("type")
    if kind is None and "type" not in item and "role" in item:
        kind = "message"  # an EasyInputMessage: {"role": ..., "content": ...}
    if isinstance(kind, str) and kind and kind not in _ITEM_TYPES:
        return "opaque"  # a built-in tool's item, MCP, a compaction...: kept as it came
    if kind not in _ITEM_TYPES:
        problem = "item has no type" if "type" not in item else f"unknown item type {kind!r}"
        raise _err(problem, i, "type: a string, such as " + ", ".join(_ITEM_TYPES), "type")
    if kind == "message" and wire.read_role(item, _ROLES, FORMAT, i) == "assistant":
        return "assistant_message"
    return str(kind)


def messages_from_responses(items: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Read OpenAI Responses input or output items into core messages.

    Consecutive assistant-side items (``reasoning``, assistant ``message``, ``function_call``),
    as one response produces them, become ONE assistant message whose parts keep the items'
    order (a ``reasoning`` item is one ``Reasoning`` part with ``provider="openai"``, its id,
    summary texts, encrypted content and reasoning text). Each ``function_call_output`` becomes
    one ``tool`` message with one ``ToolResult`` (as in Chat Completions), named after the
    matching call. ``developer`` messages become ``system`` messages with
    ``meta["developer"] = True``. Item ids, statuses, annotations and any field the core model has
    no place for are kept in ``meta["openai_responses"]`` (per message, and per part under
    ``"parts"``; where an assistant ``message`` item starts is recorded on its first text part),
    so ``messages_to_responses`` gives the items back.

    Items of any other type (built-in tool calls and their outputs, ``mcp_*``, ``item_reference``,
    the provider's ``compaction``) become ``Opaque`` parts holding the item's exact JSON, in the
    assistant message of the items around them; they are written back unchanged.

    Raises ``FormatError`` (``format="openai-responses"``, ``index`` of the item) on malformed
    input: an item that is not an object, or has no type.
    """
    seq = wire.as_items(items, FORMAT, "Responses items")
    out: list[Message] = []
    names: dict[str, str] = {}
    group: list[tuple[Part, dict[str, Any]]] = []

    def flush() -> None:
        if group:
            out.append(wire.message("assistant", group, {}, META_KEY))
            group.clear()

    for i, item in enumerate(seq):
        kind = _item_kind(item, i)
        if kind == "opaque":
            # Items abridged does not interpret join the assistant's group, whoever made them
            # (a computer_call_output with its computer_call): a cut never separates them.
            group.append((Opaque.of(FORMAT, item), {}))
            continue
        if kind in ("reasoning", "function_call", "assistant_message"):
            _read_assistant_item(item, i, kind.removeprefix("assistant_"), group)
            if isinstance(group[-1][0], ToolCall):
                names[group[-1][0].id] = group[-1][0].name
            continue
        flush()
        if kind == "message":
            out.append(_read_message(item, i))
            continue
        # function_call_output
        call_id = _need_str(item, "call_id", i, "function_call_output item", None)
        if "output" not in item:
            raise _err(
                "function_call_output item has no output",
                i,
                "output: a string or a list",
                "output",
            )
        pairs, form = _read_content(item["output"], i, "output", _INPUT_TYPES, False)
        result = ToolResult(call_id, names.get(call_id, ""), tuple(p for p, _ in pairs))
        hint = wire.shape(
            "tool_result", content=wire.content_form(pairs, form), parts=wire.part_hints(pairs)
        )
        shape = wire.shape(extra=wire.leftover(item, ("type", "call_id", "output")))
        out.append(wire.message("tool", [(result, hint)], shape, META_KEY))
    flush()
    return out


# -- export ---------------------------------------------------------------------------------------


def _write_part(
    part: Part, hint: Mapping[str, Any], i: int, field: str, assistant: bool
) -> dict[str, Any]:
    if isinstance(part, Text):
        form = hint.get("form") or ("output_text" if assistant else "input_text")
        if form == "refusal":
            return wire.apply({"type": "refusal", "refusal": part.text}, hint)
        if form == "output_text":
            return wire.apply({"type": "output_text", "text": part.text, "annotations": []}, hint)
        return wire.apply({"type": "input_text", "text": part.text}, hint)
    if isinstance(part, Image) and not assistant:
        block: dict[str, Any] = {"type": "input_image"}
        url = wire.image_url(part)
        if url is not None:
            block["image_url"] = url
        if part.detail is not None:
            block["detail"] = part.detail
        return wire.apply(block, hint)
    if isinstance(part, File) and not assistant:
        block = {"type": "input_file"}
        for key, value in (
            ("file_id", part.file_id),
            ("file_url", part.url),
            ("file_data", wire.file_data_value(part)),
            ("filename", part.filename),
        ):
            if value is not None:
                block[key] = value
        return wire.apply(block, hint)
    where = "an assistant message" if assistant else "message content"
    raise _err(
        f"a {part.kind} part cannot be {where} in the Responses API",
        i,
        "assistant message content: text" if assistant else "content: text, image or file parts",
        field,
    )


def _write_content(
    parts: Sequence[tuple[int, ResultContent]], shape: Mapping[str, Any], i: int, assistant: bool
) -> Any:
    """Content as a string or a list: an assistant message item is a list unless it was a string."""
    hints = [wire.hint(shape, n, p.kind) for n, p in parts]
    form = shape.get("content")
    if form not in ("string", "list"):
        form = "list" if assistant else wire.default_form([p for _, p in parts], hints)
    if form == "string" and len(parts) == 1 and isinstance(parts[0][1], Text):
        return parts[0][1].text
    return [
        _write_part(p, h, i, f"parts[{n}]", assistant)
        for (n, p), h in zip(parts, hints, strict=True)
    ]


def _write_reasoning(part: Reasoning, hint: Mapping[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning"}
    if part.id is not None:
        item["id"] = part.id
    item["summary"] = [{"type": "summary_text", "text": s} for s in part.summary]
    if part.encrypted is not None:
        item["encrypted_content"] = part.encrypted
    if part.text:
        item["content"] = [{"type": "reasoning_text", "text": part.text}]
    return wire.apply(item, hint)


def _write_assistant(m: Message, i: int, shape: Mapping[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    current: list[tuple[int, Text]] = []
    current_shape: Mapping[str, Any] = {}

    def close() -> None:
        if current:
            content_shape = {**shape, "content": current_shape.get("content")}
            content = _write_content(current, content_shape, i, True)
            item = {"type": "message", "role": "assistant", "content": content}
            items.append(wire.apply(item, current_shape))
            current.clear()

    for n, part in enumerate(m.parts):
        hint = wire.hint(shape, n, part.kind)
        if isinstance(part, Text):
            item_shape = hint.get("item")
            if item_shape is not None or not current:
                close()
                current_shape = item_shape if isinstance(item_shape, Mapping) else {}
            current.append((n, part))
            continue
        close()
        if isinstance(part, Reasoning):
            # Reasoning of another provider is only valid with that provider: dropped.
            if part.provider == PROVIDER:
                items.append(_write_reasoning(part, hint))
        elif isinstance(part, Opaque):
            if part.format == FORMAT:  # another provider's own block means nothing here
                items.append(part.value())
        elif isinstance(part, ToolCall):
            call = {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": part.arguments,
            }
            items.append(wire.apply(call, hint))
        else:
            expected = "assistant parts: text, reasoning, tool calls"
            raise wire.misplaced(
                FORMAT, part, "an assistant message", index=i, n=n, expected=expected
            )
    close()
    return items


def _write_message(m: Message, i: int) -> list[dict[str, Any]]:
    plain = wire.text_protocol_wire(m)
    if plain is not None:
        return [{"type": "message", **plain}]
    shape = wire.meta_shape(m, META_KEY)
    if m.role == "assistant":
        return _write_assistant(m, i, shape)
    if m.role == "tool":
        out = []
        for n, result in wire.tool_results(m, i, FORMAT):
            hint = wire.hint(shape, n, "tool_result")
            output = _write_content(list(enumerate(result.content)), hint, i, False)
            item = {"type": "function_call_output", "call_id": result.call_id, "output": output}
            out.append(wire.apply(item, shape))
        return out
    parts: list[tuple[int, ResultContent]] = []
    for n, part in enumerate(m.parts):
        if isinstance(part, Opaque):
            if part.format == FORMAT:
                raise wire.misplaced(
                    FORMAT, part, f"a {m.role} message", index=i, n=n, expected="an item"
                )
            continue  # another provider's own block (an Anthropic container upload): dropped
        if not isinstance(part, Text | Image | File) or (
            m.role == "system" and not isinstance(part, Text)
        ):
            expected = (
                "system content: text"
                if m.role == "system"
                else "user content: text, images, files"
            )
            raise wire.misplaced(
                FORMAT, part, f"a {m.role} message", index=i, n=n, expected=expected
            )
        parts.append((n, part))
    role = "developer" if m.role == "system" and m.meta.get("developer") is True else m.role
    content = _write_content(parts, shape, i, False)
    return [wire.apply({"type": "message", "role": role, "content": content}, shape)]


def messages_to_responses(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Write core messages as OpenAI Responses input items (the inverse of the reader).

    An assistant message becomes its items in part order: consecutive text parts form one
    ``message`` item (``output_text`` parts), a ``Reasoning`` part with ``provider="openai"``
    a ``reasoning`` item, a tool call a ``function_call``. Reasoning of other providers is
    dropped (only its provider accepts it back); ``is_error`` has no field and is dropped; a tool
    message with several results gives several ``function_call_output`` items. Two consecutive
    assistant messages cannot be told apart once written (the reader groups them into one), and
    an assistant message with no parts writes no item.
    Parts with no place in the API (an image in an assistant message, a tool call outside one)
    raise ``FormatError`` naming the message index.

    Messages with ``meta["text_protocol"]`` (mini-swe-agent's bash blocks, whose tool steps were
    recovered from text) are written as the plain messages they were sent as, one ``message``
    item each with string content: the assistant message as its text alone (no
    ``function_call`` item), the observation as a ``user`` message (``meta["wire_role"]``) whose
    content is the observation text, or its placeholder once pruned.
    """
    return [item for i, m in wire.checked(messages, FORMAT) for item in _write_message(m, i)]
