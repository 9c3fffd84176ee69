"""Tests of the caller formats: format detection, per-item reading (SDK objects too), usage,
tools, upper bound."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from abridged.core.model import Image, Message, Reasoning, Text, ToolCall, ToolResult, Usage
from abridged.core.protocols import ToolSpec
from abridged.core.tokens import TokenCounter, estimate_message_tokens
from abridged.errors import FormatError, SettingError
from abridged.formats.openai_chat import messages_from_openai
from abridged.runtime.caller_formats import (
    check_format,
    detect_format,
    read_item,
    read_usage,
    token_upper_bound,
    tool_definitions,
    tool_specs,
)
from tests.strategies import conversations

CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "list files"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
]


def test_formats_are_detected() -> None:
    assert detect_format([Message.user("x")]) == ("abridged", True)
    assert detect_format([{"role": "user", "content": "x"}], system="s") == ("anthropic", True)
    assert detect_format(CHAT) == ("openai", True)
    blocks = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]
    assert detect_format(blocks) == ("anthropic", True)
    assert detect_format([{"role": "user", "content": "hi"}]) == ("openai", False)
    assert check_format("auto") is None and check_format("anthropic") == "anthropic"
    with pytest.raises(SettingError, match="format"):
        check_format("xml")


def test_items_read_one_by_one_match_the_whole_list_reader() -> None:
    names: dict[str, str] = {}
    one_by_one = [m for i, item in enumerate(CHAT) for m in read_item("openai", item, i, names)]
    assert one_by_one == messages_from_openai(CHAT)
    assert one_by_one[3].tool_results[0].name == "ls"


def test_a_bad_item_names_its_index() -> None:
    with pytest.raises(FormatError) as caught:
        read_item("openai", {"role": "alien"}, 7, {})
    assert caught.value.index == 7
    with pytest.raises(FormatError):
        read_item("abridged", {"role": "user"}, 0, {})


def test_usage_in_every_shape() -> None:
    assert read_usage(None, Usage(input=5)) == Usage(input=5)
    openai = read_usage("openai", {"prompt_tokens": 100, "completion_tokens": 5})
    assert openai is not None and openai.context_tokens == 100
    anthropic = read_usage(
        None, {"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": 5}
    )
    assert anthropic is not None and anthropic.context_tokens == 100

    class SDKUsage:
        def model_dump(self) -> dict[str, int]:
            return {"prompt_tokens": 42, "completion_tokens": 1}

    dumped = read_usage("openai", SDKUsage())
    assert dumped is not None and dumped.context_tokens == 42
    with pytest.raises(FormatError):
        read_usage("openai", 42)


def test_tools_in_every_shape() -> None:
    openai = {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}
    anthropic = {"name": "cat", "description": "read", "input_schema": {"type": "object"}}
    specs = tool_specs([openai, anthropic, ToolSpec("grep"), {"type": "web_search"}])
    assert [s.name for s in specs] == ["ls", "cat", "grep"]
    assert specs[1].description == "read"
    assert tool_definitions([ToolSpec("grep")])[0]["name"] == "grep"


@settings(max_examples=25)
@given(conversations())
def test_the_upper_bound_bounds_the_estimate(messages: list[Message]) -> None:
    counter = TokenCounter()
    for message in messages:
        bound = token_upper_bound(message)
        assert bound >= estimate_message_tokens(message)
        assert bound >= counter.message_tokens(message)


@given(st.text(max_size=200))
def test_the_upper_bound_holds_for_any_text(text: str) -> None:
    messages = [
        Message.user(text),
        Message.assistant(text, tool_calls=[ToolCall("c" + text[:5], text[:8], text)]),
        Message("tool", (ToolResult("c", text, (Text(text), Image(width=10, height=10))),)),
        Message("assistant", (Reasoning(text, summary=(text,), encrypted=text * 3),)),
    ]
    for message in messages:
        assert token_upper_bound(message) >= estimate_message_tokens(message)


# -- SDK objects: what the official SDKs return, appended as they are --------------------------

TOOL = {
    "type": "function",
    "function": {
        "name": "read_log",
        "description": "Read part of the log.",
        "parameters": {"type": "object", "properties": {"part": {"type": "integer"}}},
    },
}


def test_an_openai_agent_loop_appends_the_sdks_own_messages() -> None:
    """``messages.append(resp.choices[0].message)``, as the OpenAI docs do: real HTTP to the
    local provider, the SDK's objects in the list, the context sent back accepted."""
    import openai

    from abridged.runtime import ContextManager
    from abridged.testing import ProviderServer, Reply

    with ProviderServer(context_window=16_384, max_output=4_096) as server:
        server.set_replies(
            [Reply(tool_calls=[("read_log", {"part": k})]) for k in range(40)] + ["Found it."]
        )
        client = openai.OpenAI(base_url=server.base_url + "/v1", api_key="sk-test", max_retries=0)
        cm = ContextManager(context_window=16_384, max_output_tokens=4_096, tools=[TOOL])
        messages: list[Any] = [
            {"role": "system", "content": "You are an operations agent."},
            {"role": "user", "content": "Find out why the queue backs up."},
        ]
        while True:
            ctx = cm.prepare(messages)
            resp = client.chat.completions.create(
                model="gpt-test", messages=ctx.messages, tools=[TOOL]
            )
            cm.record_usage(resp.usage)
            message = resp.choices[0].message
            messages.append(message)  # the SDK object itself
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                log = f"INFO part {call.function.arguments} ok\n" * 300
                messages.append({"role": "tool", "tool_call_id": call.id, "content": log})
        assert message.content == "Found it."
        assert cm.state.compactions + len(cm.state.pruned) >= 1  # it did have to shrink
        assert all(r.status == 200 for r in server.requests)
        assert isinstance(messages[2], openai.types.chat.ChatCompletionMessage)
        assert cm.history[2].tool_calls[0].name == "read_log"


def test_anthropic_content_blocks_from_the_sdk_are_read() -> None:
    """``{"role": "assistant", "content": resp.content}``, as the Anthropic docs do: the blocks
    are the SDK's objects (text, tool use), read as the dicts they stand for."""
    import anthropic

    from abridged.testing import ProviderServer, Reply

    with ProviderServer(context_window=16_384, max_output=4_096) as server:
        server.set_replies([Reply("Reading it.", tool_calls=[("read_log", {"part": 1})])])
        client = anthropic.Anthropic(base_url=server.base_url, api_key="sk-ant-test", max_retries=0)
        resp = client.messages.create(
            model="claude-test",
            max_tokens=256,
            messages=[{"role": "user", "content": "Read part 1."}],
        )
    item = {"role": "assistant", "content": resp.content}
    assert detect_format([{"role": "user", "content": "Read part 1."}, item]) == (
        "anthropic",
        True,
    )
    (message,) = read_item("anthropic", item, 1, {})
    assert message.text == "Reading it."
    (call,) = message.tool_calls
    assert call.name == "read_log" and json.loads(call.arguments) == {"part": 1}
    # an SDK object that is a whole message reads the same as its dict
    assert read_item("anthropic", resp, 1, {})[0].tool_calls == message.tool_calls
