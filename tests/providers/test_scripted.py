"""Tests of the scripted model: replies in order, recorded calls, exceptions, streaming, usage."""

from __future__ import annotations

import pytest

from abridged.core.model import Message, Reasoning, Text, ToolCall, Usage
from abridged.core.protocols import (
    ChatModel,
    Completion,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from abridged.core.tokens import MESSAGE_OVERHEAD, estimate_context_tokens, estimate_message_tokens
from abridged.errors import ProviderError
from abridged.providers.scripted import ScriptedModel, tool_call

TOOLS = (ToolSpec("bash", "Run a shell command.", {"type": "object"}),)


def test_it_is_a_chat_model() -> None:
    model = ScriptedModel(name="fake-1")
    assert isinstance(model, ChatModel)
    assert model.name == "fake-1"


async def test_replies_come_in_order_in_every_form() -> None:
    given = Completion(
        Message.assistant("three"), usage=Usage(input=1, output=2), finish_reason="stop"
    )
    model = ScriptedModel(
        [
            "one",
            Message.assistant("two"),
            given,
            tool_call("c1", "bash", '{"command": "ls"}'),
            lambda messages, tools: f"seen {len(messages)} messages, {len(tools or ())} tools",
        ]
    )
    history = [Message.user("hi")]
    first = await model.complete(history)
    assert first.message.text == "one" and first.finish_reason == "stop"
    assert (await model.complete(history)).message.text == "two"
    third = await model.complete(history)
    assert third.usage == Usage(input=1, output=2) and third.message.text == "three"
    fourth = await model.complete(history, tools=TOOLS)
    assert fourth.finish_reason == "tool_calls"
    assert fourth.message.tool_calls == (ToolCall("c1", "bash", '{"command": "ls"}'),)
    fifth = await model.complete([*history, Message.assistant("x")], tools=TOOLS)
    assert fifth.message.text == "seen 2 messages, 1 tools"
    assert model.remaining == 0


async def test_every_call_is_recorded() -> None:
    model = ScriptedModel(["a", "b"])
    await model.complete([Message.user("one")], tools=TOOLS, max_output_tokens=100, temperature=0)
    await model.complete([Message.user("two")])
    first, second = model.calls
    assert first.messages == (Message.user("one"),)
    assert first.tools == TOOLS
    assert first.max_output_tokens == 100
    assert first.options == {"temperature": 0}
    assert not first.streamed
    assert second.tools is None and second.max_output_tokens is None and second.options == {}


@pytest.mark.parametrize("error", [RuntimeError("rate limited"), TimeoutError])
async def test_a_scripted_exception_is_raised_and_the_call_recorded(
    error: BaseException | type[BaseException],
) -> None:
    model = ScriptedModel([error, "after"])
    expected = error if isinstance(error, type) else type(error)
    with pytest.raises(expected):
        await model.complete([Message.user("hi")])
    assert len(model.calls) == 1
    assert (await model.complete([Message.user("again")])).message.text == "after"


async def test_running_out_raises_unless_there_is_a_default() -> None:
    model = ScriptedModel(["only"])
    await model.complete([Message.user("1")])
    with pytest.raises(ProviderError):
        await model.complete([Message.user("2")])
    model.default = "again"
    assert (await model.complete([Message.user("3")])).message.text == "again"
    model.add("added")
    assert (await model.complete([Message.user("4")])).message.text == "added"


async def test_usage_is_estimated_when_not_given() -> None:
    model = ScriptedModel(["The answer is 42."])
    messages = [Message.system("Be brief."), Message.user("What is the answer?")]
    completion = await model.complete(messages, tools=TOOLS)
    tools = [
        {"name": "bash", "description": "Run a shell command.", "parameters": {"type": "object"}}
    ]
    assert completion.usage == Usage(
        input=estimate_context_tokens(messages, tools),
        output=estimate_message_tokens(Message.assistant("The answer is 42.")) - MESSAGE_OVERHEAD,
    )
    assert completion.message.usage == completion.usage
    assert completion.model == "scripted"


async def test_reasoning_tokens_are_counted_in_the_estimated_usage() -> None:
    reply = Message.assistant("ok", reasoning=[Reasoning("let me think about it")])
    completion = await ScriptedModel([reply]).complete([Message.user("q")])
    assert completion.usage is not None and completion.usage.reasoning > 0
    assert completion.usage.output >= completion.usage.reasoning


async def test_streaming_yields_chunks_then_the_completion() -> None:
    reply = Message(
        "assistant",
        (
            Reasoning("thinking hard"),
            Text("Hello, streaming world!"),
            ToolCall("c9", "bash", '{"command": "pwd"}'),
        ),
    )
    model = ScriptedModel([reply], chunk_chars=5)
    events: list[StreamEvent] = [e async for e in model.stream([Message.user("hi")], tools=TOOLS)]
    assert isinstance(events[-1], Completion)
    assert sum(isinstance(e, Completion) for e in events) == 1
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(texts) == "Hello, streaming world!"
    assert all(len(t) <= 5 for t in texts) and len(texts) == 5
    thoughts = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert thoughts == "thinking hard"
    calls = [e for e in events if isinstance(e, ToolCallDelta)]
    assert calls == [ToolCallDelta(index=0, id="c9", name="bash", arguments='{"command": "pwd"}')]
    assert events[-1].message.text == "Hello, streaming world!"  # type: ignore[union-attr]
    assert model.calls[0].streamed


async def test_streaming_raises_a_scripted_exception() -> None:
    model = ScriptedModel([ValueError("bad request")])
    with pytest.raises(ValueError, match="bad request"):
        async for _ in model.stream([Message.user("hi")]):
            pass


async def test_the_output_ceiling_can_be_enforced() -> None:
    long_text = "word " * 500
    model = ScriptedModel([long_text, long_text], enforce_max_output=True)
    cut = await model.complete([Message.user("q")], max_output_tokens=20)
    assert cut.finish_reason == "length"
    assert long_text.startswith(cut.message.text)
    assert 0 < len(cut.message.text) < len(long_text)
    whole = await model.complete([Message.user("q")])
    assert whole.finish_reason == "stop" and whole.message.text == long_text
    lenient = ScriptedModel([long_text])
    assert (
        await lenient.complete([Message.user("q")], max_output_tokens=20)
    ).finish_reason == "stop"


def test_chunk_size_is_validated() -> None:
    with pytest.raises(ValueError):
        ScriptedModel(chunk_chars=0)
