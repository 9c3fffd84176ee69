"""The wire formats a ContextManager speaks: read the caller's items, write contexts back.

Four formats: ``"openai"`` (Chat Completions message dicts), ``"responses"`` (OpenAI Responses
input items: ``response.output`` items appended as they come), ``"anthropic"`` (Messages API
dicts, with the system prompt passed separately) and ``"abridged"`` (``Message`` objects). Items
are read as they are appended (a call costs O(new items)); consecutive assistant-side Responses
items appended together (reasoning, function calls, messages, built-in tools' items) are read
as one assistant message, as one response produced them; tool results are named after their
calls across items, as the whole-list readers do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, get_args

from abridged.core.model import (
    File,
    Image,
    Message,
    Opaque,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    Usage,
)
from abridged.core.protocols import ToolSpec
from abridged.core.tokens import (
    ENCRYPTED_CHARS_PER_TOKEN,
    FILE_TOKENS_DEFAULT,
    MESSAGE_OVERHEAD,
    TOOL_CALL_OVERHEAD,
    TOOL_RESULT_OVERHEAD,
    ImageProvider,
    estimate_image_tokens,
)
from abridged.errors import FormatError, SettingError
from abridged.formats.anthropic_messages import messages_from_anthropic, messages_to_anthropic
from abridged.formats.openai_chat import messages_from_openai, messages_to_openai
from abridged.formats.openai_responses import messages_from_responses, messages_to_responses
from abridged.formats.usage import usage_from_anthropic, usage_from_openai

Format: TypeAlias = Literal["openai", "responses", "anthropic", "abridged"]
FORMATS: tuple[Format, ...] = get_args(Format)

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_RESPONSES_PARTS = frozenset({"input_text", "output_text", "input_image", "input_file", "refusal"})


def check_format(value: object) -> Format | None:
    """``value`` as a format (``None`` for ``"auto"``); ``SettingError`` otherwise."""
    if value == "auto":
        return None
    if value not in FORMATS:
        raise SettingError("format", value, "one of auto, " + ", ".join(FORMATS))
    return value


def detect_format(items: Sequence[Any], *, system: object = None) -> tuple[Format, bool]:
    """The format of ``items`` and whether the guess is certain.

    ``Message`` items are abridged's; a separate ``system`` prompt, or Anthropic-only content
    blocks (``tool_use``, ``tool_result``, thinking), mean Anthropic; an item with a ``type``
    (``function_call``, ``reasoning``, a built-in tool's item) or ``input_text``/``output_text``
    parts mean Responses; a ``tool`` role or ``tool_calls`` mean OpenAI. Plain text messages
    (system and developer ones too: both OpenAI APIs take them) are ambiguous: OpenAI, uncertain.
    """
    if any(isinstance(item, Message) for item in items):
        return "abridged", True
    if system is not None:
        return "anthropic", True
    for raw in items:
        item = plain(raw)
        if not isinstance(item, Mapping):
            continue
        if isinstance(item.get("type"), str):
            return "responses", True
        if item.get("role") == "tool" or "tool_calls" in item:
            return "openai", True
        content = item.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping):
                    kind = block.get("type")
                    if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in block):
                        return "anthropic", True
                    if kind in ("image_url", "input_audio"):
                        return "openai", True
                    if kind in _RESPONSES_PARTS:
                        return "responses", True
    return "openai", False


def _named(messages: list[Message], names: dict[str, str]) -> list[Message]:
    """Name tool results after their calls (seen in earlier items), remember new calls."""
    out: list[Message] = []
    for message in messages:
        if message.role == "assistant":
            for call in message.tool_calls:
                names.setdefault(call.id, call.name)
        if not any(isinstance(p, ToolResult) and not p.name for p in message.parts):
            out.append(message)
            continue
        parts = tuple(
            ToolResult(p.call_id, names.get(p.call_id, ""), p.content, p.is_error)
            if isinstance(p, ToolResult) and not p.name
            else p
            for p in message.parts
        )
        derived = message.id == "m" + message.fingerprint[:20]
        out.append(message.replace(parts=parts, id="" if derived else message.id))
    return out


def _reindex(error: FormatError, index: int) -> FormatError:
    return FormatError(
        f"{error.message} (item {index} of the list)",
        format=error.format,
        index=index,
        expected=error.expected,
        field=error.context.get("field"),
    )


def plain(value: Any) -> Any:
    """``value`` with every SDK object in it (anything with pydantic's ``model_dump``, such as
    ``resp.choices[0].message`` or the blocks of an Anthropic ``resp.content``) turned into the
    dict it stands for; plain dicts and lists come back as they are (the same object) when they
    hold none.

    >>> plain({"role": "user", "content": "hi"})
    {'role': 'user', 'content': 'hi'}
    """
    if isinstance(value, str | int | float | bool | Message) or value is None:
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, Mapping):
        return plain(dump(exclude_none=True))
    if isinstance(value, Mapping):
        changed = {k: plain(v) for k, v in value.items()}
        if all(changed[k] is v for k, v in value.items()):
            return value
        return changed
    if isinstance(value, list | tuple):
        items = [plain(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items
    return value


def _holds_objects(item: Any) -> bool:
    """Whether ``item`` is, or holds at its first two levels, something that is not plain JSON
    (where the SDKs' objects sit: the item itself, or the blocks of its content); cheap, so that
    plain dicts, the common case, are read without a copy."""
    if not isinstance(item, Mapping):
        return True
    for value in item.values():
        if value is None or isinstance(value, str | int | float | bool | Mapping):
            continue
        if not isinstance(value, list):
            return True
        for element in value:
            if not isinstance(element, Mapping | str):
                return True
    return False


def responses_assistant_side(item: Any) -> bool:
    """Whether a Responses item is one of those a response produces together (reasoning,
    function calls, assistant messages, built-in tools' items): consecutive ones are read as one
    assistant message, so that a cut or a pairing check never separates them."""
    if not isinstance(item, Mapping):
        item = plain(item)
        if not isinstance(item, Mapping):
            return False
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return item.get("role") == "assistant"
    return isinstance(kind, str) and kind not in ("function_call_output", "")


def read_items(
    fmt: Format, items: Sequence[Any], index: int, names: dict[str, str]
) -> list[Message]:
    """The messages of ``items``, consecutive items of the caller's list starting at ``index``
    (for Responses: assistant-side items to be read as one message; else one item)."""
    if fmt != "responses":
        return [m for k, item in enumerate(items) for m in read_item(fmt, item, index + k, names)]
    dicts = [plain(item) if _holds_objects(item) else item for item in items]
    try:
        messages = messages_from_responses(dicts)
    except FormatError as error:
        at = error.context.get("index")
        raise _reindex(error, index + (at if isinstance(at, int) else 0)) from error
    return _named(messages, names)


def read_item(fmt: Format, item: Any, index: int, names: dict[str, str]) -> list[Message]:
    """The messages of one item of the caller's list (Anthropic items may give several); SDK
    objects are read as the dicts they stand for (``plain``)."""
    if fmt == "responses":
        return read_items(fmt, [item], index, names)
    if fmt == "abridged":
        if not isinstance(item, Message):
            raise FormatError(
                f"item {index} is a {type(item).__name__}, not a Message",
                format="abridged",
                index=index,
                expected="abridged.core.model.Message",
            )
        return _named([item], names)
    if _holds_objects(item):
        item = plain(item)
    try:
        if fmt == "openai":
            messages = messages_from_openai([item])
        else:
            messages = messages_from_anthropic([item])
    except FormatError as error:
        raise _reindex(error, index) from error
    return _named(messages, names)


def read_system(fmt: Format, system: Any) -> list[Message]:
    """The leading system message(s) of a separately passed system prompt (Anthropic)."""
    if system is None:
        return []
    if fmt == "anthropic":
        return messages_from_anthropic([], system)
    if isinstance(system, str):
        return [Message.system(system)]
    raise FormatError(
        "a separate system prompt is only read for the anthropic format (or as a string)",
        format=fmt,
        expected="system=None, or a string",
    )


def write_messages(fmt: Format, messages: Sequence[Message]) -> list[Any]:
    """``messages`` (no leading system messages for Anthropic) in the wire format."""
    if fmt == "openai":
        return messages_to_openai(messages)
    if fmt == "responses":
        return messages_to_responses(messages)
    if fmt == "anthropic":
        system, out = messages_to_anthropic(messages)
        if system is not None:
            raise FormatError(
                "a system message inside the conversation cannot be written for anthropic",
                format="anthropic",
                expected="system prompt passed separately",
            )
        return out
    return list(messages)


def read_usage(fmt: Format | None, usage: Any) -> Usage | None:
    """A provider's usage report as ``Usage``: a ``Usage``, a dict (OpenAI or Anthropic shape),
    or an SDK object with ``model_dump()``."""
    if usage is None or isinstance(usage, Usage):
        return usage
    dump = getattr(usage, "model_dump", None)
    if callable(dump):
        usage = dump()
    if not isinstance(usage, Mapping):
        raise FormatError(
            f"usage is a {type(usage).__name__}",
            format=fmt or "usage",
            expected="a Usage, a usage dict, or an SDK usage object",
        )
    anthropic = "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage
    if anthropic or (fmt == "anthropic" and "prompt_tokens" not in usage):
        return usage_from_anthropic(usage)
    return usage_from_openai(usage)


def tool_specs(tools: Iterable[Any]) -> tuple[ToolSpec, ...]:
    """Tool definitions (``ToolSpec``, OpenAI function tools, Anthropic tools, plain dicts with
    ``name`` and ``parameters``) as ``ToolSpec``s; other entries (built-in tools) are skipped."""
    out: list[ToolSpec] = []
    for tool in tools:
        if isinstance(tool, ToolSpec):
            out.append(tool)
            continue
        if not isinstance(tool, Mapping):
            continue
        function = tool.get("function")
        spec: Mapping[str, Any] = function if isinstance(function, Mapping) else tool
        name = spec.get("name")
        if not isinstance(name, str):
            continue
        schema = spec.get("parameters", spec.get("input_schema", {"type": "object"}))
        description = spec.get("description") or ""
        out.append(
            ToolSpec(
                name,
                str(description),
                schema if isinstance(schema, Mapping) else {"type": "object"},
            )
        )
    return tuple(out)


def tool_definitions(tools: Iterable[Any]) -> list[Mapping[str, Any]]:
    """Tool definitions as dicts, for the estimator: wire dicts as given, specs as plain dicts."""
    out: list[Mapping[str, Any]] = []
    for tool in tools:
        if isinstance(tool, ToolSpec):
            out.append(
                {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
            )
        elif isinstance(tool, Mapping):
            out.append(tool)
    return out


# -- a cheap upper bound of a message's tokens ------------------------------------------------


def _text_bound(text: str) -> int:
    # The estimator charges at most ~1.9 tokens per character (a non-ASCII symbol); a byte-level
    # tokenizer at most one per byte: 1 per ASCII character, 4 per other character.
    return 2 * len(text) if text.isascii() else 4 * len(text)


def _media_bound(part: Image | File, provider: ImageProvider) -> int:
    if isinstance(part, Image):
        size = estimate_image_tokens(part.width, part.height, provider=provider, detail=part.detail)
        return size + 1
    return FILE_TOKENS_DEFAULT + 1


def token_upper_bound(message: Message, *, image_provider: ImageProvider = "openai") -> int:
    """An upper bound of the tokens of ``message`` for any counter abridged uses, in O(parts)
    with no tokenizing: 2 per ASCII character, 4 per other one, plus the fixed costs.

    It lets a caller far below the trigger skip estimating new messages until it matters.

    >>> from abridged.core.tokens import estimate_message_tokens
    >>> m = Message.user("Hello, world!")
    >>> token_upper_bound(m) >= estimate_message_tokens(m)
    True
    """
    total = MESSAGE_OVERHEAD
    for part in message.parts:
        if isinstance(part, Text):
            total += _text_bound(part.text)
        elif isinstance(part, ToolCall):
            total += TOOL_CALL_OVERHEAD + _text_bound(part.id + part.name + part.arguments)
        elif isinstance(part, ToolResult):
            total += TOOL_RESULT_OVERHEAD + _text_bound(part.call_id + part.name)
            for item in part.content:
                if isinstance(item, Text):
                    total += _text_bound(item.text)
                else:
                    total += _media_bound(item, image_provider)
        elif isinstance(part, Reasoning):
            total += _text_bound(part.text) + sum(_text_bound(s) for s in part.summary)
            if part.encrypted:
                total += int(len(part.encrypted) / ENCRYPTED_CHARS_PER_TOKEN) + 1
        elif isinstance(part, Opaque):
            total += _text_bound(part.data)
        else:
            total += _media_bound(part, image_provider)
    return total
