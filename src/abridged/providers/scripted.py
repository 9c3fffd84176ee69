"""A deterministic ``ChatModel`` for tests and examples: scripted replies, recorded calls.

``ScriptedModel(replies)`` answers each call with the next scripted reply:

- a ``Completion`` (returned as is, except for usage: see below);
- a ``str`` (an assistant message with that text, ``finish_reason="stop"``);
- a ``Message`` (an assistant message: ``finish_reason`` is ``"tool_calls"`` when it calls tools,
  else ``"stop"``);
- a callable ``(messages, tools) -> Completion | str | Message`` (computed from the call, for
  replies that depend on what was sent);
- an exception instance (or class), which the call raises.

Every call is recorded in ``calls`` (``ScriptedCall``: messages, tools, ``max_output_tokens``,
other options, and whether it streamed), before the reply is chosen, so a call that raises is
recorded too. When the script runs out, a call raises ``ProviderError`` unless ``default`` is set
(then every further call gets it).

**Usage.** A reply without usage gets one computed with abridged's own estimator (it is an
estimate, not a real count): ``input`` is ``estimate_context_tokens(messages, tools)``, ``output``
is the estimated tokens of the reply's content (its text, reasoning and tool calls, without the
per-message overhead). The assistant message carries the same usage when it had none.

**Output ceiling.** With ``enforce_max_output=True``, a reply longer than ``max_output_tokens``
(estimated) is cut there and its ``finish_reason`` becomes ``"length"``, as a real provider does.

**Streaming.** ``stream`` yields the reply's reasoning and text in chunks of ``chunk_chars``
characters (``ReasoningDelta`` / ``TextDelta``), then one ``ToolCallDelta`` per tool call, then
the ``Completion``.

It lives with the providers (an edge) because the engine never depends on a concrete model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias, cast

from abridged.core.model import Message, Reasoning, Text, ToolCall, Usage
from abridged.core.protocols import (
    Completion,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from abridged.core.tokens import (
    MESSAGE_OVERHEAD,
    estimate_context_tokens,
    estimate_message_tokens,
    estimate_text_tokens,
)
from abridged.errors import ProviderError

ReplyValue: TypeAlias = Completion | str | Message
ReplyFunction: TypeAlias = Callable[[Sequence[Message], Sequence[ToolSpec] | None], ReplyValue]
Reply: TypeAlias = ReplyValue | ReplyFunction | BaseException | type[BaseException]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One recorded call: what was sent and how."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] | None
    max_output_tokens: int | None
    options: dict[str, Any] = field(default_factory=dict)
    streamed: bool = False


def _tool_dicts(tools: Sequence[ToolSpec] | None) -> list[dict[str, Any]] | None:
    if not tools:
        return None
    return [
        {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
        for t in tools
    ]


class ScriptedModel:
    """A ``ChatModel`` whose replies are given in advance (see the module docstring)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        name: str = "scripted",
        default: Reply | None = None,
        chunk_chars: int = 8,
        enforce_max_output: bool = False,
    ) -> None:
        if chunk_chars < 1:
            raise ValueError(f"chunk_chars must be >= 1, got {chunk_chars}")
        self._name = name
        self._replies: list[Reply] = list(replies)
        self._next = 0
        self.default = default
        self.chunk_chars = chunk_chars
        self.enforce_max_output = enforce_max_output
        self.calls: list[ScriptedCall] = []

    @property
    def name(self) -> str:
        """The model's name."""
        return self._name

    @property
    def remaining(self) -> int:
        """How many scripted replies are left (``default`` not counted)."""
        return len(self._replies) - self._next

    def add(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._replies.extend(replies)

    # -- the protocol ------------------------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        """The next scripted reply as a ``Completion`` (or its scripted exception)."""
        return self._answer(messages, tools, max_output_tokens, options, streamed=False)

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        """The next scripted reply in chunks, ending with its ``Completion``."""
        completion = self._answer(messages, tools, max_output_tokens, options, streamed=True)
        for part in completion.message.parts:
            if isinstance(part, Reasoning) and part.text:
                for chunk in self._chunks(part.text):
                    yield ReasoningDelta(chunk)
        for part in completion.message.parts:
            if isinstance(part, Text):
                for chunk in self._chunks(part.text):
                    yield TextDelta(chunk)
        for index, call in enumerate(completion.message.tool_calls):
            yield ToolCallDelta(index=index, id=call.id, name=call.name, arguments=call.arguments)
        yield completion

    # -- internals ---------------------------------------------------------------------------

    def _chunks(self, text: str) -> list[str]:
        return [text[i : i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)]

    def _pop(self) -> Reply:
        if self._next < len(self._replies):
            reply = self._replies[self._next]
            self._next += 1
            return reply
        if self.default is not None:
            return self.default
        raise ProviderError(
            "the scripted model has no reply left", model=self.name, call=len(self.calls)
        )

    def _answer(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_output_tokens: int | None,
        options: dict[str, Any],
        *,
        streamed: bool,
    ) -> Completion:
        sent = tuple(messages)
        self.calls.append(
            ScriptedCall(
                messages=sent,
                tools=tuple(tools) if tools is not None else None,
                max_output_tokens=max_output_tokens,
                options=dict(options),
                streamed=streamed,
            )
        )
        reply = self._pop()
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, type) and issubclass(reply, BaseException):
            raise reply()
        value: ReplyValue
        if isinstance(reply, Completion | str | Message):
            value = reply
        else:
            value = cast(ReplyFunction, reply)(sent, tools)
        completion = _as_completion(value)
        if self.enforce_max_output and max_output_tokens is not None:
            completion = _cut(completion, max_output_tokens)
        return self._with_usage(completion, sent, tools)

    def _with_usage(
        self,
        completion: Completion,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
    ) -> Completion:
        usage = completion.usage
        if usage is None:
            output = max(0, estimate_message_tokens(completion.message) - MESSAGE_OVERHEAD)
            reasoning = sum(
                estimate_text_tokens(p.text)
                for p in completion.message.parts
                if isinstance(p, Reasoning)
            )
            usage = Usage(
                input=estimate_context_tokens(messages, _tool_dicts(tools)),
                output=output,
                reasoning=reasoning,
            )
        message = completion.message
        if message.usage is None:
            message = message.replace(usage=usage)
        return replace(
            completion, usage=usage, message=message, model=completion.model or self.name
        )


def _as_completion(value: ReplyValue) -> Completion:
    if isinstance(value, Completion):
        return value
    if isinstance(value, str):
        return Completion(Message.assistant(value), finish_reason="stop")
    if isinstance(value, Message):
        reason = "tool_calls" if value.tool_calls else "stop"
        return Completion(value, finish_reason=reason)
    raise TypeError(f"a scripted reply must be a Completion, str or Message, not {type(value)}")


def _cut(completion: Completion, max_output_tokens: int) -> Completion:
    """The completion cut at ``max_output_tokens`` of text (tool calls dropped if over)."""
    message = completion.message
    text = message.text
    if estimate_text_tokens(text) <= max_output_tokens:
        return completion
    words = text.split(" ")
    lo, hi = 0, len(words)  # the most words whose text fits: bisect
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_text_tokens(" ".join(words[:mid])) <= max_output_tokens:
            lo = mid
        else:
            hi = mid - 1
    kept = words[:lo]
    parts = [p for p in message.parts if isinstance(p, Reasoning)]
    cut_message = Message("assistant", (*parts, Text(" ".join(kept))), meta=message.meta)
    return replace(completion, message=cut_message, finish_reason="length")


def tool_call(call_id: str, name: str, arguments: str = "{}") -> Message:
    """An assistant message that calls one tool (a convenience for scripts)."""
    return Message.assistant(tool_calls=[ToolCall(call_id, name, arguments)])
