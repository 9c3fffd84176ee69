"""``ChatModel`` over the ``anthropic`` SDK: system blocks, tools, thinking, prompt caching.

``AnthropicChatModel("claude-sonnet-4-5")`` streams Anthropic Messages (``pip install
'abridged[anthropic]'``; the SDK is imported when a model is built). The key is ``api_key``, else
``ANTHROPIC_API_KEY``; the base URL ``base_url``, else ``ANTHROPIC_BASE_URL`` (read by the SDK).
The key is never in ``repr``, in errors, or logged.

**Streaming.** ``stream`` yields ``TextDelta``, ``ReasoningDelta`` (thinking) and
``ToolCallDelta`` (one index per ``tool_use`` block, in order), then one ``Completion`` whose
message keeps thinking blocks with their signatures (and redacted thinking) so they can be sent
back; ``complete`` consumes the same stream. ``message.meta["timing"]`` holds ``ttft_ms`` and
``total_ms``. Usage is normalised by :func:`abridged.formats.usage.usage_from_anthropic` (input,
cache read and cache write are separate), merged from ``message_start`` and ``message_delta``.

**Thinking.** ``thinking=None`` (off), an effort ``"low"``, ``"medium"``, ``"high"`` or a budget
in tokens (at least 1,024). Efforts map to :data:`THINKING_BUDGETS` (low 1,024, medium 4,096,
high 16,384 tokens). The thinking budget counts inside ``max_tokens``, so it is capped at half of
the call's ``max_tokens`` (the answer keeps at least the other half) and never below Anthropic's
minimum of 1,024: a call whose ``max_tokens`` is below 2,048 with thinking on raises
``SettingError``. With thinking on, ``temperature`` and ``top_k`` (which Anthropic rejects with
thinking) are not sent.

**Prompt caching** (``cache=True``, the default) places up to four ``cache_control`` breakpoints,
the design's rule (:func:`cache_breakpoints`):

1. the end of the system prompt (the last leading system message that is not a summary; the
   cached prefix then includes the tool definitions, which Anthropic puts before the system);
2. the end of the summary (the last message with ``meta["kind"] == "summary"``);
3. the prune boundary (the last message with ``meta["pruned"]``: everything before it is
   byte-stable until the next prune);
4. the last message (so the next call reads everything sent so far from the cache).

A breakpoint goes on the last block of its message that may carry one (not thinking blocks);
breakpoints that fall on the same block count once. With caching on, every message content and
the system prompt are sent as lists of blocks (never the string shorthand), so the bytes of a
message do not change when the breakpoint on it moves to a later message: between two calls only
the ``cache_control`` keys differ. The option ``cache_breakpoints`` (message
indices, at most four) replaces the computed ones for one call. Any ``cache_control`` already in
the messages (kept from an imported transcript) is removed first, so the request never holds more
than four. ``cache_ttl`` is ``"5m"`` (default) or ``"1h"``. ``cache=False`` sends no
``cache_control`` at all.

**Token counting.** :meth:`AnthropicChatModel.count_tokens` asks the SDK's count endpoint for the
exact input size of a request (same system, messages, tools and thinking), for the runtime's
check when its estimate is close to the limit.

**Errors** as in :mod:`abridged.providers.overflow`: ``ContextOverflowError(tokens=, limit=)`` for
"prompt is too long", ``ProviderError`` otherwise.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal

from abridged.core.model import Message
from abridged.core.protocols import (
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from abridged.errors import ProviderError, SettingError
from abridged.formats.anthropic_messages import (
    RAW_ARGUMENTS_KEY,
    completion_from_anthropic,
    messages_to_anthropic,
)
from abridged.providers.overflow import scrub
from abridged.providers.streaming import (
    StreamingModel,
    Timer,
    as_dict,
    close_stream,
    import_sdk,
    mapping_errors,
    safe_url,
    sdk_http_client,
    send_encodable,
    timed_completion,
    tool_choice_for_anthropic,
)

__all__ = [
    "ANTHROPIC_OPTIONS",
    "DEFAULT_MAX_TOKENS",
    "MAX_BREAKPOINTS",
    "MIN_THINKING_BUDGET",
    "THINKING_BUDGETS",
    "AnthropicChatModel",
    "cache_breakpoints",
    "place_breakpoints",
]

THINKING_BUDGETS: Mapping[str, int] = {"low": 1_024, "medium": 4_096, "high": 16_384}
"""Thinking budget (tokens) of each effort."""

MIN_THINKING_BUDGET = 1_024
"""Anthropic's smallest ``budget_tokens``."""

DEFAULT_MAX_TOKENS = 4_096
"""``max_tokens`` of a call that gives no ``max_output_tokens`` (Anthropic requires one)."""

MAX_BREAKPOINTS = 4
"""Anthropic accepts at most four ``cache_control`` blocks per request."""

ANTHROPIC_OPTIONS: frozenset[str] = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "tool_choice",
        "metadata",
        "service_tier",
        "output_config",
        "extra_headers",
        "extra_query",
        "extra_body",
        "timeout",
    }
)
"""Options passed to Messages (``stop`` is sent as ``stop_sequences``; others are ignored)."""

_NO_CACHE_BLOCKS = ("thinking", "redacted_thinking")


def cache_breakpoints(messages: Sequence[Message]) -> tuple[int, ...]:
    """The message indices that get a cache breakpoint by the design's rule (sorted, unique).

    End of the system prompt (last leading non-summary system message), end of the summary
    (last ``kind == "summary"`` message), the prune boundary (last message with
    ``meta["pruned"]``), the last message. At most four by construction.

    >>> from abridged.core.model import Message
    >>> ms = [Message.system("sys"), Message.user("a", meta={"kind": "summary"}),
    ...       Message.user("b"), Message.assistant("c")]
    >>> cache_breakpoints(ms)
    (0, 1, 3)
    """
    if not messages:
        return ()
    points: set[int] = set()
    start = 0
    while start < len(messages) and messages[start].role == "system":
        start += 1
    system = [i for i in range(start) if not messages[i].is_summary]
    if system:
        points.add(system[-1])
    summaries = [i for i, m in enumerate(messages) if m.is_summary]
    if summaries:
        points.add(summaries[-1])
    pruned = [i for i, m in enumerate(messages) if m.meta.get("pruned")]
    if pruned:
        points.add(pruned[-1])
    points.add(len(messages) - 1)
    return tuple(sorted(points))


def _system_blocks(system: str | list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    if system is None:
        return []
    if isinstance(system, str):
        return [{"type": "text", "text": system}]
    return system


def _content_list(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = [{"type": "text", "text": content}]
    elif not isinstance(content, list):
        message["content"] = []
    result: list[dict[str, Any]] = message["content"]
    return result


def _strip_cache_control(blocks: Sequence[Any]) -> None:
    for block in blocks:
        if isinstance(block, dict):
            block.pop("cache_control", None)
            nested = block.get("content")
            if isinstance(nested, list):
                _strip_cache_control(nested)


def _mark(blocks: list[dict[str, Any]], upto: int, control: Mapping[str, Any]) -> bool:
    """Put ``control`` on the last block at or before ``upto`` that may carry one."""
    for n in range(min(upto, len(blocks) - 1), -1, -1):
        block = blocks[n]
        if block.get("type") in _NO_CACHE_BLOCKS:
            continue
        if block.get("type") == "text" and not block.get("text"):
            continue
        block["cache_control"] = dict(control)
        return True
    return False


def place_breakpoints(
    messages: Sequence[Message],
    system: str | list[dict[str, Any]] | None,
    wire: list[dict[str, Any]],
    indices: Sequence[int],
    control: Mapping[str, Any] | None,
) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]]]:
    """``(system blocks, wire messages)`` with every old ``cache_control`` removed and
    ``control`` placed at the end of each message of ``indices`` (none when ``control`` is
    ``None``). ``system``/``wire`` are what ``messages_to_anthropic(messages)`` returned; they
    are copied, not changed."""
    blocks = copy.deepcopy(_system_blocks(system))
    out = copy.deepcopy(wire)
    _strip_cache_control(blocks)
    for m in out:
        if isinstance(m.get("content"), list):
            _strip_cache_control(m["content"])
        elif control is not None:
            # With caching on, every content is a list of blocks, so that a message keeps its
            # bytes when the breakpoint on it moves on (only the cache_control key changes).
            _content_list(m)
    if control is not None:
        for index in sorted(set(indices)):
            if not 0 <= index < len(messages):
                raise SettingError(
                    "cache_breakpoints",
                    list(indices),
                    f"message indices in [0, {len(messages) - 1}]",
                )
            _place_one(messages, index, blocks, out, control)
    return (blocks or None), out


def _place_one(
    messages: Sequence[Message],
    index: int,
    blocks: list[dict[str, Any]],
    out: list[dict[str, Any]],
    control: Mapping[str, Any],
) -> None:
    """Mark the last wire block written for ``messages[index]``.

    Converting the prefix ``messages[: index + 1]`` gives the wire up to that message: its last
    message and block count locate the message's last block in the full wire, whatever was
    merged (tool results join one user message; a system message joins the system prompt)."""
    prefix_system: list[dict[str, Any]]
    prefix: list[dict[str, Any]]
    if index == len(messages) - 1:
        prefix_system, prefix = blocks, out
    else:
        sys_part, prefix = messages_to_anthropic(messages[: index + 1])
        prefix_system = _system_blocks(sys_part)
    if messages[index].role == "system":
        if prefix_system:
            _mark(blocks, len(prefix_system) - 1, control)
        return
    if not prefix or not out:
        return
    position = len(prefix) - 1
    last = prefix[-1].get("content")
    count = 1 if isinstance(last, str) else len(last) if isinstance(last, list) else 0
    if count == 0:
        return
    _mark(_content_list(out[position]), count - 1, control)


def _thinking_budget(thinking: str | int | None) -> int | None:
    if thinking is None:
        return None
    if isinstance(thinking, bool):
        raise SettingError("thinking", thinking, 'None, "low", "medium", "high" or a budget')
    if isinstance(thinking, str):
        if thinking not in THINKING_BUDGETS:
            raise SettingError(
                "thinking", thinking, 'None, "low", "medium", "high" or a token budget'
            )
        return THINKING_BUDGETS[thinking]
    if isinstance(thinking, int) and thinking >= MIN_THINKING_BUDGET:
        return thinking
    raise SettingError("thinking", thinking, f"a budget of at least {MIN_THINKING_BUDGET} tokens")


class _Assembler:
    """Anthropic stream events (as dicts) into deltas and a final ``message`` object."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.json: dict[int, list[str]] = {}
        self.call_index: dict[int, int] = {}
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, Mapping):
                self.message = {k: message[k] for k in ("id", "model") if k in message}
                if isinstance(message.get("usage"), Mapping):
                    self._usage(message["usage"])
            return []
        if kind == "content_block_start":
            index = int(event.get("index", len(self.blocks)))
            block = event.get("content_block")
            if not isinstance(block, Mapping):
                return []
            self.blocks[index] = dict(block)
            if block.get("type") == "tool_use":
                position = len(self.call_index)
                self.call_index[index] = position
                self.json[index] = []
                return [ToolCallDelta(index=position, id=block.get("id"), name=block.get("name"))]
            if block.get("type") == "text" and block.get("text"):
                return [TextDelta(str(block["text"]))]
            if block.get("type") == "thinking" and block.get("thinking"):
                return [ReasoningDelta(str(block["thinking"]))]
            return []
        if kind == "content_block_delta":
            index = int(event.get("index", -1))
            delta = event.get("delta")
            block = self.blocks.get(index)
            if not isinstance(delta, Mapping) or block is None:
                return []
            dtype = delta.get("type")
            if dtype == "text_delta" and isinstance(delta.get("text"), str):
                block["text"] = str(block.get("text", "")) + delta["text"]
                return [TextDelta(delta["text"])] if delta["text"] else []
            if dtype == "thinking_delta" and isinstance(delta.get("thinking"), str):
                block["thinking"] = str(block.get("thinking", "")) + delta["thinking"]
                return [ReasoningDelta(delta["thinking"])] if delta["thinking"] else []
            if dtype == "signature_delta" and isinstance(delta.get("signature"), str):
                block["signature"] = str(block.get("signature") or "") + delta["signature"]
                return []
            if dtype == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                self.json.setdefault(index, []).append(delta["partial_json"])
                if not delta["partial_json"]:
                    return []
                return [
                    ToolCallDelta(
                        index=self.call_index.get(index, 0), arguments=delta["partial_json"]
                    )
                ]
            if dtype == "citations_delta" and isinstance(delta.get("citation"), Mapping):
                block.setdefault("citations", []).append(dict(delta["citation"]))
            return []
        if kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, Mapping):
                if isinstance(delta.get("stop_reason"), str):
                    self.stop_reason = delta["stop_reason"]
                if isinstance(delta.get("stop_sequence"), str):
                    self.stop_sequence = delta["stop_sequence"]
            if isinstance(event.get("usage"), Mapping):
                self._usage(event["usage"])
        return []

    def _usage(self, usage: Mapping[str, Any]) -> None:
        for key, value in usage.items():
            if value is not None:
                self.usage[key] = value

    def response(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            kind = block.get("type")
            if kind == "text":
                if not block.get("text"):
                    continue  # Anthropic rejects empty text blocks sent back
                text = {"type": "text", "text": block["text"]}
                if block.get("citations"):
                    text["citations"] = block["citations"]
                content.append(text)
            elif kind == "thinking":
                thinking = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
                if block.get("signature"):
                    thinking["signature"] = block["signature"]
                content.append(thinking)
            elif kind == "redacted_thinking":
                content.append({"type": "redacted_thinking", "data": str(block.get("data", ""))})
            elif kind == "tool_use":
                raw = "".join(self.json.get(index, ()))
                arguments: Any
                if raw.strip():
                    try:
                        arguments = json.loads(raw)
                    except ValueError:
                        arguments = None
                    if not isinstance(arguments, dict):
                        arguments = {RAW_ARGUMENTS_KEY: raw}  # kept verbatim (cut off, invalid)
                else:
                    given = block.get("input")
                    arguments = dict(given) if isinstance(given, Mapping) else {}
                content.append(
                    {
                        "type": "tool_use",
                        "id": block.get("id"),
                        "name": block.get("name"),
                        "input": arguments,
                    }
                )
            # server tool blocks have no place in the core model: not kept
        out: dict[str, Any] = {"type": "message", "role": "assistant", "content": content}
        out.update(self.message)
        if self.stop_reason is not None:
            out["stop_reason"] = self.stop_reason
        if self.usage:
            out["usage"] = dict(self.usage)
        return out


class AnthropicChatModel(StreamingModel):
    """A ``ChatModel`` for Anthropic Messages (see the module docstring).

    ``max_output_tokens`` is the default ``max_tokens`` when a call gives none
    (:data:`DEFAULT_MAX_TOKENS`). ``client`` replaces the SDK client (tests, custom transports).
    ``max_retries`` (default 0) goes to the SDK: abridged's runtime does the retrying
    (``ConversationSettings.max_retries``); set it only for a model used outside the runtime.
    ``http_client``: ``"aiohttp"`` for the SDK's aiohttp-backed client (see
    ``sdk_http_client``; close it with ``aclose``), or an HTTP client for the SDK; default, the
    SDK's own. Extra keyword arguments are default options of every call.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        thinking: Literal["low", "medium", "high"] | int | None = None,
        cache: bool = True,
        cache_ttl: Literal["5m", "1h"] = "5m",
        max_output_tokens: int = DEFAULT_MAX_TOKENS,
        client: Any = None,
        timeout: float = 600.0,
        max_retries: int = 0,
        default_headers: Mapping[str, str] | None = None,
        http_client: Any = None,
        **defaults: Any,
    ) -> None:
        if not model or not isinstance(model, str):
            raise SettingError("model", model, "a model name")
        if cache_ttl not in ("5m", "1h"):
            raise SettingError("cache_ttl", cache_ttl, '"5m" or "1h"')
        if max_output_tokens < 1:
            raise SettingError("max_output_tokens", max_output_tokens, "at least 1")
        if timeout <= 0:
            raise SettingError("timeout", timeout, "a positive number of seconds")
        self._model = model
        self.thinking = thinking
        self.thinking_budget = _thinking_budget(thinking)
        self.cache = bool(cache)
        self.cache_ttl = cache_ttl
        self.max_output_tokens = max_output_tokens
        self.timeout = timeout
        self.defaults: dict[str, Any] = dict(defaults)
        self.provider = "anthropic"
        key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        self._secrets: tuple[str, ...] = (key,) if key else ()
        self.base_url = safe_url(base_url or os.environ.get("ANTHROPIC_BASE_URL"))
        self._own_client = client is None
        if client is not None:
            self._client = client
            return
        sdk = import_sdk("anthropic", "anthropic")
        if key is None:
            raise ProviderError(
                "no API key for anthropic: pass api_key or set ANTHROPIC_API_KEY",
                provider=self.provider,
            )
        try:
            self._client = sdk.AsyncAnthropic(
                api_key=key,
                base_url=base_url,
                timeout=timeout,
                max_retries=max_retries,
                default_headers=dict(default_headers) if default_headers else None,
                **sdk_http_client(sdk, http_client),
            )
        except Exception as e:
            raise ProviderError(
                "could not create the anthropic client: " + scrub(str(e), self._secrets),
                provider=self.provider,
            ) from None

    def __repr__(self) -> str:
        base = f", base_url={self.base_url!r}" if self.base_url else ""
        extra = f", thinking={self.thinking!r}" if self.thinking is not None else ""
        return f"AnthropicChatModel(model={self._model!r}, cache={self.cache}{extra}{base})"

    # -- requests -------------------------------------------------------------------------------

    def _control(self) -> dict[str, Any]:
        control: dict[str, Any] = {"type": "ephemeral"}
        if self.cache_ttl != "5m":
            control["ttl"] = self.cache_ttl
        return control

    def request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The Messages request body (without ``stream``), as it will be sent.

        Options: those of :data:`ANTHROPIC_OPTIONS`; ``stop`` (as ``stop_sequences``);
        ``cache`` (bool, this call only); ``cache_breakpoints`` (message indices, this call).
        """
        merged = {**self.defaults, **options}
        max_tokens = max_output_tokens if max_output_tokens is not None else self.max_output_tokens
        system, wire = messages_to_anthropic(messages)
        cache = bool(merged.get("cache", self.cache))
        points = merged.get("cache_breakpoints")
        if points is None:
            indices: Sequence[int] = cache_breakpoints(messages)
        else:
            indices = [int(i) for i in points]
            if len(set(indices)) > MAX_BREAKPOINTS:
                raise SettingError(
                    "cache_breakpoints", list(points), f"at most {MAX_BREAKPOINTS} indices"
                )
        blocks, wire = place_breakpoints(
            messages, system, wire, indices, self._control() if cache else None
        )
        body: dict[str, Any] = {"model": self._model, "max_tokens": max_tokens, "messages": wire}
        if blocks is not None:
            # a plain system prompt stays a string when caching is off (as the converter wrote it)
            body["system"] = system if isinstance(system, str) and not cache else blocks
        if tools:
            body["tools"] = [
                {
                    "name": t.name,
                    **({"description": t.description} if t.description else {}),
                    "input_schema": dict(t.parameters),
                }
                for t in tools
            ]
        for key, value in merged.items():
            if value is None:
                continue
            if key == "stop":
                body["stop_sequences"] = [value] if isinstance(value, str) else list(value)
            elif key == "tool_choice":
                body["tool_choice"] = tool_choice_for_anthropic(value)
            elif key in ANTHROPIC_OPTIONS:
                body[key] = value
        budget = self.thinking_budget
        if budget is not None:
            cap = max_tokens // 2
            if cap < MIN_THINKING_BUDGET:
                raise SettingError(
                    "max_output_tokens",
                    max_tokens,
                    f"at least {2 * MIN_THINKING_BUDGET} with thinking on (the budget of at "
                    f"least {MIN_THINKING_BUDGET} tokens is capped at half of max_tokens)",
                )
            body["thinking"] = {"type": "enabled", "budget_tokens": min(budget, cap)}
            body.pop("temperature", None)
            body.pop("top_k", None)
        return body

    # -- the protocol ---------------------------------------------------------------------------

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Call the model once, yielding deltas as they arrive, then the ``Completion``."""
        body = self.request(messages, tools, max_output_tokens, **options)
        body["stream"] = True
        timer = Timer()
        assembler = _Assembler()
        with self._mapping_errors():
            stream = await send_encodable(self._client.messages.create, body)
        try:
            with self._mapping_errors():
                async for raw in stream:
                    for event in assembler.feed(as_dict(raw, "event")):
                        timer.token()
                        yield event
        finally:
            await close_stream(stream)
        yield timed_completion(
            completion_from_anthropic(assembler.response()),
            timer,
            assembler.stop_reason,
            str(assembler.message.get("model") or self._model),
        )

    async def count_tokens(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        **options: Any,
    ) -> int:
        """The exact input tokens of a request with ``messages`` and ``tools`` (count endpoint).

        The request is the one :meth:`stream` would send (system, messages, tools, thinking,
        cache breakpoints), without ``max_tokens`` and sampling options.
        """
        body = self.request(messages, tools, None, **options)
        counted = {
            k: v
            for k, v in body.items()
            if k
            in ("model", "messages", "system", "tools", "thinking", "tool_choice", "extra_headers")
        }
        with self._mapping_errors():
            result = await send_encodable(self._client.messages.count_tokens, counted)
        tokens = getattr(result, "input_tokens", None)
        if tokens is None and isinstance(result, Mapping):
            tokens = result.get("input_tokens")
        if not isinstance(tokens, int):
            raise ProviderError(
                "the count_tokens answer has no input_tokens", provider=self.provider
            )
        return tokens

    def _mapping_errors(self) -> AbstractContextManager[None]:
        return mapping_errors(
            provider=self.provider, model=self._model, secrets=self._secrets, timeout=self.timeout
        )
