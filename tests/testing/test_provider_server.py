"""The local provider through the official SDKs over real HTTP: replies, streaming, tool calls,
pairing, overflow, prompt cache, token counting, models, errors, timing and concurrency."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import httpx
import openai
import pytest
import toktok

from abridged.providers.probe import probe_model_limits
from abridged.testing import ProviderServer, RecordedRequest, Reply
from abridged.testing.counting import MESSAGE_OVERHEAD, REPLY_PRIMING, TOOL_CALL_OVERHEAD, canonical
from abridged.testing.errors import sign_thinking

OPENAI_KEY = "sk-test-openai-secret"
ANTHROPIC_KEY = "sk-ant-test-secret"


def n(text: str) -> int:
    return int(toktok.batch_count([text], "o200k_base")[0])


WORDS = {"w": "water river", "s": "summer table", "t": "house table"}


def words(count: int, seed: str = "w") -> str:
    """A text of ``count`` tokens in o200k (each of these words is one token)."""
    vocabulary = WORDS[seed].split()
    return " ".join(vocabulary[i % len(vocabulary)] for i in range(count))


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        yield s


def oai(server: ProviderServer, **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.base_url + "/v1", api_key=OPENAI_KEY, max_retries=0, **kwargs
    )


def ant(server: ProviderServer, **kwargs: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.base_url, api_key=ANTHROPIC_KEY, max_retries=0, **kwargs
    )


USER: Any = [{"role": "user", "content": "Hello there"}]
TOOLS: Any = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


# -- OpenAI Chat Completions ----------------------------------------------------------------------


def test_chat_completion_counts_and_records(server: ProviderServer) -> None:
    server.set_replies([Reply("Hi! How can I help?")])
    response = oai(server).chat.completions.create(model="gpt-test", messages=USER)
    assert response.choices[0].message.content == "Hi! How can I help?"
    assert response.choices[0].finish_reason == "stop"
    assert response.usage is not None
    assert response.usage.prompt_tokens == n("Hello there") + MESSAGE_OVERHEAD + REPLY_PRIMING
    assert response.usage.completion_tokens == n("Hi! How can I help?")
    assert response.usage.prompt_tokens_details is not None
    assert response.usage.prompt_tokens_details.cached_tokens == 0
    (record,) = server.requests
    assert record.api == "openai-chat" and record.path == "/v1/chat/completions"
    assert record.status == 200 and record.error is None and not record.stream
    assert record.prompt_tokens == response.usage.prompt_tokens
    assert record.body["messages"] == USER
    assert [m.text for m in record.messages] == ["Hello there"]
    assert record.headers["authorization"] == "REDACTED"
    assert OPENAI_KEY not in json.dumps(record.headers)


def test_chat_completion_stream_with_usage_chunk(server: ProviderServer) -> None:
    text = "Streaming works in small pieces, one after another."
    server.set_replies([Reply(text), Reply(text)])
    client = oai(server)
    chunks = list(
        client.chat.completions.create(
            model="gpt-test", messages=USER, stream=True, stream_options={"include_usage": True}
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == n(text)
    plain = list(client.chat.completions.create(model="gpt-test", messages=USER, stream=True))
    assert all(c.usage is None for c in plain) and plain[-1].choices[0].finish_reason == "stop"
    assert [r.stream for r in server.requests] == [True, True]


def test_chat_tool_call_round_trip_passes_pairing(server: ProviderServer) -> None:
    server.set_replies([Reply(tool_calls=[("read_file", {"path": "a.py"})]), Reply("It is empty.")])
    client = oai(server)
    messages: list[Any] = [{"role": "user", "content": "What is in a.py?"}]
    first = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
    message = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls" and message.content is None
    assert message.tool_calls is not None
    (call,) = message.tool_calls
    assert call.function.name == "read_file" and json.loads(call.function.arguments) == {
        "path": "a.py"
    }
    assert call.id.startswith("call_")
    messages += [
        message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": ""},
    ]
    second = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
    assert second.choices[0].message.content == "It is empty."
    record = server.requests[1]
    assert record.status == 200
    assert [m.role for m in record.messages] == ["user", "assistant", "tool"]
    assert record.messages[2].tool_results[0].call_id == call.id
    # the whole request is counted: the tool definition and the call included
    tool_call = n(f"read_file {call.function.arguments}") + TOOL_CALL_OVERHEAD
    assert record.prompt_tokens == (
        n(canonical(TOOLS[0]))
        + n("What is in a.py?")
        + tool_call
        + n("")
        + 3 * MESSAGE_OVERHEAD
        + REPLY_PRIMING
    )


def test_tool_call_ids_are_deterministic() -> None:
    ids = []
    for _ in range(2):
        with ProviderServer(replies=[Reply(tool_calls=[("a", {}), ("b", "{}")])]) as s:
            message = oai(s).chat.completions.create(model="m", messages=USER).choices[0].message
            assert message.tool_calls is not None
            ids.append([c.id for c in message.tool_calls])
    assert ids[0] == ids[1] and len(set(ids[0])) == 2


def test_chat_stream_helper_accumulates_tool_calls(server: ProviderServer) -> None:
    server.set_replies([Reply("Let me look.", tool_calls=[("read_file", {"path": "b.py"})])])
    with oai(server).chat.completions.stream(model="gpt-test", messages=USER, tools=TOOLS) as s:
        for _ in s:
            pass
        final = s.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Let me look."
    assert message.tool_calls is not None
    assert json.loads(message.tool_calls[0].function.arguments) == {"path": "b.py"}


def test_orphan_tool_result_gets_the_real_400(server: ProviderServer) -> None:
    server.set_replies([Reply("first scripted reply")])
    client = oai(server)
    orphan = [USER[0], {"role": "tool", "tool_call_id": "call_gone", "content": "stale output"}]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-test", messages=orphan)
    assert caught.value.status_code == 400
    assert caught.value.body == {
        "message": "Invalid parameter: messages with role 'tool' must be a response to a "
        "preceeding message with 'tool_calls'.",
        "type": "invalid_request_error",
        "param": "messages.[1].role",
        "code": None,
    }
    record = server.requests[0]
    assert record.status == 400 and record.reply is None
    assert record.error_message is not None and "preceeding message" in record.error_message
    # a rejected request consumes no reply
    ok = client.chat.completions.create(model="gpt-test", messages=USER)
    assert ok.choices[0].message.content == "first scripted reply"


def test_call_without_result_gets_the_real_400(server: ProviderServer) -> None:
    calls = [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    messages = [USER[0], {"role": "assistant", "content": None, "tool_calls": calls}, USER[0]]
    with pytest.raises(openai.BadRequestError, match="did not have response messages: call_1"):
        oai(server).chat.completions.create(model="gpt-test", messages=messages)


def test_chat_overflow_with_the_real_error() -> None:
    with ProviderServer(context_window=2_000, max_output=500) as s:
        client = oai(s)
        big = [{"role": "user", "content": words(2_100)}]
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="gpt-test", messages=big)
        prompt = s.requests[0].prompt_tokens
        assert prompt == n(words(2_100)) + MESSAGE_OVERHEAD + REPLY_PRIMING
        assert caught.value.code == "context_length_exceeded"
        assert caught.value.body == {
            "message": f"This model's maximum context length is 2000 tokens. However, your "
            f"messages resulted in {prompt} tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
        fits = [{"role": "user", "content": words(1_700)}]
        client.chat.completions.create(model="gpt-test", messages=fits)
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="gpt-test", messages=fits, max_tokens=400)
        assert caught.value.code == "context_length_exceeded"
        assert "in the messages, 400 in the completion)" in caught.value.message
        with pytest.raises(openai.BadRequestError, match="max_tokens is too large: 600"):
            client.chat.completions.create(model="gpt-test", messages=USER, max_tokens=600)
        assert [r.status for r in s.requests] == [400, 200, 400, 400]


def test_reply_longer_than_max_tokens_is_cut(server: ProviderServer) -> None:
    text = "This reply is much longer than the five tokens the caller allowed for it."
    server.set_replies([Reply(text, tool_calls=[("f", {})])])
    response = oai(server).chat.completions.create(
        model="gpt-test", messages=USER, max_completion_tokens=5
    )
    choice = response.choices[0]
    assert choice.finish_reason == "length" and choice.message.tool_calls is None
    assert choice.message.content == toktok.truncate(text, 5, "o200k_base")[0]
    assert response.usage is not None and response.usage.completion_tokens == 5


def test_openai_prompt_cache_follows_the_prefix_rule(server: ProviderServer) -> None:
    client = oai(server)
    system = words(1_500, "s")
    first: list[Any] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "First question?"},
    ]
    one = client.chat.completions.create(model="gpt-test", messages=first)
    assert one.usage is not None and one.usage.prompt_tokens_details is not None
    assert one.usage.prompt_tokens_details.cached_tokens == 0
    second = [
        *first,
        {"role": "assistant", "content": one.choices[0].message.content},
        {"role": "user", "content": "Second question?"},
    ]
    two = client.chat.completions.create(model="gpt-test", messages=second)
    common = n(system) + n("First question?") + 2 * MESSAGE_OVERHEAD
    assert common >= 1_024
    assert two.usage is not None and two.usage.prompt_tokens_details is not None
    assert two.usage.prompt_tokens_details.cached_tokens == common // 128 * 128
    assert server.requests[1].cached_tokens == common // 128 * 128
    # a shared prefix below 1,024 tokens is not cached
    short = [{"role": "system", "content": words(600, "t")}, USER[0]]
    client.chat.completions.create(model="gpt-test", messages=short)
    three = client.chat.completions.create(model="gpt-test", messages=[*short, USER[0]])
    assert three.usage is not None and three.usage.prompt_tokens_details is not None
    assert three.usage.prompt_tokens_details.cached_tokens == 0
    server.reset()
    assert server.requests == []
    again = client.chat.completions.create(model="gpt-test", messages=second)
    assert again.usage is not None and again.usage.prompt_tokens_details is not None
    assert again.usage.prompt_tokens_details.cached_tokens == 0


# -- OpenAI Responses -----------------------------------------------------------------------------


def test_responses_non_stream_and_function_call_round_trip(server: ProviderServer) -> None:
    server.set_replies(
        [Reply(tool_calls=[("ls", {"dir": "."})], reasoning="List first."), Reply("Two files.")]
    )
    client = oai(server)
    tools: Any = [{"type": "function", "name": "ls", "parameters": {"type": "object"}}]
    items: list[Any] = [{"role": "user", "content": "What is here?"}]
    first = client.responses.create(model="gpt-test", input=items, tools=tools)
    kinds = [item.type for item in first.output]
    assert kinds == ["reasoning", "function_call"]
    call = first.output[1]
    assert call.type == "function_call" and call.name == "ls"
    assert first.usage is not None and first.usage.input_tokens == server.requests[0].prompt_tokens
    items += [item.model_dump(exclude_none=True) for item in first.output]
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "a b"})
    second = client.responses.create(model="gpt-test", input=items, tools=tools)
    assert second.output_text == "Two files." and second.status == "completed"
    record = server.requests[1]
    assert record.status == 200 and record.api == "openai-responses"
    assert [m.role for m in record.messages] == ["user", "assistant", "tool"]


def test_responses_stream_events_and_final_response(server: ProviderServer) -> None:
    server.set_replies([Reply("Streamed answer, in pieces.", reasoning="Think briefly.")])
    with oai(server).responses.stream(
        model="gpt-test", input="Hi", instructions="Be brief."
    ) as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert types[:2] == ["response.created", "response.in_progress"]
    assert "response.reasoning_summary_text.delta" in types
    assert "response.output_text.delta" in types and types[-1] == "response.completed"
    assert final.output_text == "Streamed answer, in pieces."
    assert final.usage is not None
    assert final.usage.input_tokens == (
        n("Be brief.") + n("Hi") + 2 * MESSAGE_OVERHEAD + REPLY_PRIMING
    )
    assert final.usage.output_tokens_details.reasoning_tokens == n("Think briefly.")


def test_responses_stream_function_call(server: ProviderServer) -> None:
    server.set_replies([Reply(tool_calls=[("ls", '{"dir": "src"}')])])
    with oai(server).responses.stream(model="gpt-test", input="Go") as stream:
        types = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.function_call_arguments.delta" in types
    (call,) = final.output
    assert call.type == "function_call" and call.arguments == '{"dir": "src"}'


def test_responses_pairing_and_overflow_errors() -> None:
    with ProviderServer(context_window=1_000, max_output=200) as s:
        client = oai(s)
        orphan: Any = [
            {"role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "call_9", "output": "x"},
        ]
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model="gpt-test", input=orphan)
        assert caught.value.body == {
            "message": "No tool call found for function call output with call_id call_9.",
            "type": "invalid_request_error",
            "param": "input",
            "code": None,
        }
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model="gpt-test", input=words(1_100))
        assert caught.value.code == "context_length_exceeded"
        assert caught.value.body["message"] == (
            "Your input exceeds the context window of this model. Please adjust your input and "
            "try again."
        )
        cut = client.responses.create(model="gpt-test", input="hi", max_output_tokens=2)
        assert cut.status == "incomplete" and cut.incomplete_details is not None
        assert cut.incomplete_details.reason == "max_output_tokens"


# -- Anthropic Messages ---------------------------------------------------------------------------


def test_anthropic_message_counts_and_records(server: ProviderServer) -> None:
    server.set_replies([Reply("Hello from the test server.")])
    message = ant(server).messages.create(
        model="claude-test", max_tokens=200, system="Be kind.", messages=USER
    )
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello from the test server."
    assert message.stop_reason == "end_turn"
    expected = n("Be kind.") + n("Hello there") + 2 * MESSAGE_OVERHEAD + REPLY_PRIMING
    assert message.usage.input_tokens == expected
    assert message.usage.cache_read_input_tokens == 0
    assert message.usage.output_tokens == n("Hello from the test server.")
    (record,) = server.requests
    assert record.api == "anthropic" and record.max_tokens == 200
    # this SDK sends the key as a bearer token; x-api-key is redacted too (see below)
    assert "REDACTED" in (record.headers.get("x-api-key"), record.headers.get("authorization"))
    assert ANTHROPIC_KEY not in json.dumps(record.headers)
    assert [m.role for m in record.messages] == ["system", "user"]


def test_anthropic_thinking_streamed_with_signature_and_sent_back(server: ProviderServer) -> None:
    thinking = "The user wants the file; read it first."
    server.set_replies(
        [Reply("Reading.", reasoning=thinking, tool_calls=[("read", {"path": "a.py"})]), "Done."]
    )
    client = ant(server)
    messages: list[Any] = [{"role": "user", "content": "Open a.py"}]
    with client.messages.stream(model="claude-test", max_tokens=500, messages=messages) as stream:
        deltas = [e.delta.type for e in stream if e.type == "content_block_delta"]
        final = stream.get_final_message()
    assert "thinking_delta" in deltas and "signature_delta" in deltas
    assert "input_json_delta" in deltas
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    block = final.content[0]
    assert block.type == "thinking" and block.thinking == thinking
    assert block.signature == sign_thinking(thinking)
    use = final.content[2]
    assert use.type == "tool_use" and use.input == {"path": "a.py"} and use.id.startswith("toolu_")
    assert final.stop_reason == "tool_use"
    result = {"type": "tool_result", "tool_use_id": use.id, "content": "print(1)"}
    assistant = {"role": "assistant", "content": [b.model_dump() for b in final.content]}
    messages += [assistant, {"role": "user", "content": [result]}]
    after = client.messages.create(model="claude-test", max_tokens=500, messages=messages)
    assert after.content[0].type == "text" and after.content[0].text == "Done."
    # a thinking block changed on the way back is rejected like Anthropic does
    assistant["content"][0] = {**assistant["content"][0], "thinking": thinking + " (edited)"}
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model="claude-test", max_tokens=500, messages=messages)
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.1.content.0: Invalid `signature` in `thinking` block",
        },
    }


def test_anthropic_orphan_tool_result_gets_the_real_400(server: ProviderServer) -> None:
    messages: Any = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello."},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x"}],
        },
    ]
    with pytest.raises(anthropic.BadRequestError) as caught:
        ant(server).messages.create(model="claude-test", max_tokens=10, messages=messages)
    assert caught.value.status_code == 400
    assert caught.value.body["error"]["message"] == (
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_gone. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message."
    )


def test_anthropic_overflow_with_the_real_errors() -> None:
    with ProviderServer(context_window=2_000, max_output=1_000) as s:
        client = ant(s)
        big = [{"role": "user", "content": words(2_100)}]
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model="claude-test", max_tokens=100, messages=big)
        prompt = s.requests[0].prompt_tokens
        assert caught.value.body["error"] == {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {prompt} tokens > 2000 maximum",
        }
        fits = [{"role": "user", "content": words(1_500)}]
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(model="claude-test", max_tokens=900, messages=fits)
        prompt = s.requests[1].prompt_tokens
        assert caught.value.body["error"]["message"] == (
            f"input length and `max_tokens` exceed context limit: {prompt} + 900 > 2000, "
            "decrease input length or `max_tokens` and try again"
        )
        with pytest.raises(anthropic.BadRequestError, match="max_tokens: 1001 > 1000"):
            client.messages.create(model="claude-test", max_tokens=1_001, messages=USER)
        ok = client.messages.create(model="claude-test", max_tokens=400, messages=fits)
        assert ok.stop_reason == "end_turn"


def test_anthropic_cache_control_writes_then_reads(server: ProviderServer) -> None:
    client = ant(server)
    system: Any = [
        {"type": "text", "text": words(1_300, "s"), "cache_control": {"type": "ephemeral"}}
    ]
    prefix = n(words(1_300, "s")) + MESSAGE_OVERHEAD
    first = client.messages.create(
        model="claude-test", max_tokens=100, system=system, messages=USER
    )
    assert first.usage.cache_creation_input_tokens == prefix
    assert first.usage.cache_read_input_tokens == 0
    assert first.usage.input_tokens == n("Hello there") + MESSAGE_OVERHEAD + REPLY_PRIMING
    second = client.messages.create(
        model="claude-test", max_tokens=100, system=system, messages=USER
    )
    assert second.usage.cache_read_input_tokens == prefix
    assert second.usage.cache_creation_input_tokens == 0
    # the breakpoint moves to the last message; the earlier prefix is found by the look-back
    turn: Any = [
        USER[0],
        {"role": "assistant", "content": "Hi."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "And now?", "cache_control": {"type": "ephemeral"}}
            ],
        },
    ]
    third = client.messages.create(
        model="claude-test", max_tokens=100, system=system, messages=turn
    )
    tail = n("Hello there") + n("Hi.") + n("And now?") + 3 * MESSAGE_OVERHEAD
    assert third.usage.cache_read_input_tokens == prefix
    assert third.usage.cache_creation_input_tokens == tail
    assert third.usage.input_tokens == REPLY_PRIMING
    record = server.requests[2]
    assert (record.cached_tokens, record.cache_write_tokens) == (prefix, tail)
    assert record.prompt_tokens == prefix + tail + REPLY_PRIMING


def test_anthropic_small_breakpoint_and_too_many_breakpoints(server: ProviderServer) -> None:
    client = ant(server)
    cc = {"cache_control": {"type": "ephemeral"}}
    small: Any = [{"type": "text", "text": "Short system.", **cc}]
    for _ in range(2):
        message = client.messages.create(
            model="claude-test", max_tokens=10, system=small, messages=USER
        )
        assert message.usage.cache_creation_input_tokens == 0
        assert message.usage.cache_read_input_tokens == 0
    five: Any = [{"type": "text", "text": str(i), **cc} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks with cache_control"):
        client.messages.create(model="claude-test", max_tokens=10, system=five, messages=USER)


def test_count_tokens_matches_the_messages_call(server: ProviderServer) -> None:
    client = ant(server)
    tools: Any = [{"name": "grep", "description": "Search.", "input_schema": {"type": "object"}}]
    counted = client.messages.count_tokens(
        model="claude-test", system="Rules.", tools=tools, messages=USER
    )
    message = client.messages.create(
        model="claude-test", max_tokens=50, system="Rules.", tools=tools, messages=USER
    )
    assert counted.input_tokens == message.usage.input_tokens
    assert counted.input_tokens == (
        n(canonical(tools[0])) + n("Rules.") + n("Hello there") + 2 * MESSAGE_OVERHEAD + 3
    )
    assert [r.api for r in server.requests] == ["anthropic-count", "anthropic"]
    assert server.requests[1].reply is not None  # count_tokens consumed no reply
    assert server.requests[1].reply.text == "Received 2 messages."


def test_default_reply_echoes_the_number_of_messages(server: ProviderServer) -> None:
    text = oai(server).chat.completions.create(model="m", messages=USER).choices[0].message.content
    assert text == "Received 1 message."


# -- models ---------------------------------------------------------------------------------------


def test_models_listing_for_both_sdks() -> None:
    with ProviderServer(context_window=32_768, max_output=2_048, model="my-model") as s:
        listed = oai(s).models.list().data
        assert [m.id for m in listed] == ["my-model"]
        extra = listed[0].model_extra or {}
        assert extra["max_model_len"] == 32_768 and extra["context_length"] == 32_768
        oai(s).chat.completions.create(model="other-model", messages=USER)
        assert [m.id for m in oai(s).models.list().data] == ["my-model", "other-model"]
        info = ant(s).models.list().data[0]
        assert (info.id, info.max_input_tokens, info.max_tokens) == ("my-model", 32_768, 2_048)
        probe = asyncio.run(probe_model_limits(s.base_url + "/v1", "my-model", use_cache=False))
        assert probe.limits is not None and probe.limits.context_window == 32_768


# -- scripted errors, callables, timing, concurrency ----------------------------------------------


def test_scripted_error_replies(server: ProviderServer) -> None:
    rate = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit"}}
    overloaded = {"type": "error", "error": {"type": "api_error", "message": "Internal"}}
    server.set_replies([Reply(error=(429, rate)), Reply(error=(500, overloaded)), "fine"])
    with pytest.raises(openai.RateLimitError, match="Rate limit reached"):
        oai(server).chat.completions.create(model="m", messages=USER)
    with pytest.raises(anthropic.InternalServerError):
        ant(server).messages.create(model="c", max_tokens=10, messages=USER)
    after = oai(server).chat.completions.create(model="m", messages=USER)
    assert after.choices[0].message.content == "fine"
    assert [r.status for r in server.requests] == [429, 500, 200]


def test_callable_replies_see_the_request(server: ProviderServer) -> None:
    def echo(request: RecordedRequest) -> Reply | str:
        return f"{request.api} #{request.index}: {request.messages[-1].text}"

    server.set_replies(echo)
    content = oai(server).chat.completions.create(model="m", messages=USER).choices[0]
    assert content.message.content == "openai-chat #0: Hello there"
    server.set_replies([lambda r: Reply(text=str(r.prompt_tokens))])
    message = ant(server).messages.create(model="c", max_tokens=10, messages=USER)
    assert message.content[0].type == "text"
    assert message.content[0].text == str(message.usage.input_tokens)


def _request_threads() -> set[threading.Thread]:
    """The threads handling a request (``ThreadingHTTPServer`` names them by their target)."""
    return {t for t in threading.enumerate() if "process_request_thread" in t.name}


def test_latency_makes_the_client_time_out_and_stop_ends_the_wait() -> None:
    before = _request_threads()  # other tests' servers may still be ending theirs
    with ProviderServer(latency=3600.0) as s:  # a latency no test could sit through
        client = oai(s, timeout=0.3)
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="m", messages=USER)
        waiting = _request_threads() - before
        assert waiting and all(t.is_alive() for t in waiting)  # still waiting out the latency
    for thread in waiting:  # stopped, the server ends the wait: the join is a guard, not a bound
        thread.join(timeout=60)
        assert not thread.is_alive()
    assert len(s.requests) == 1 and s.requests[0].status == 200


def test_abort_mid_stream_is_recorded() -> None:
    with ProviderServer(stream_delay=0.02, replies=[Reply(words(400))]) as s:
        stream = oai(s).chat.completions.create(model="m", messages=USER, stream=True)
        next(iter(stream))
        stream.close()
        deadline = time.monotonic() + 3.0
        while not s.requests[0].aborted and time.monotonic() < deadline:
            time.sleep(0.02)
        assert s.requests[0].aborted


async def test_async_clients() -> None:
    with ProviderServer(replies=["one", "two", "three"]) as s:
        client = openai.AsyncOpenAI(base_url=s.base_url + "/v1", api_key="k", max_retries=0)
        response = await client.chat.completions.create(model="m", messages=USER)
        assert response.choices[0].message.content == "one"
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        assert "".join(pieces) == "two"
        claude = anthropic.AsyncAnthropic(base_url=s.base_url, api_key="k", max_retries=0)
        message = await claude.messages.create(model="c", max_tokens=10, messages=USER)
        assert message.content[0].type == "text" and message.content[0].text == "three"
        await client.close()
        await claude.close()


def test_concurrent_requests_are_all_recorded(server: ProviderServer) -> None:
    client = oai(server)

    def ask(i: int) -> str:
        messages = [{"role": "user", "content": f"question {i}"}]
        return client.chat.completions.create(model="m", messages=messages).id

    with ThreadPoolExecutor(max_workers=8) as pool:
        ids = list(pool.map(ask, range(24)))
    records = server.requests
    assert len(records) == 24 and len(set(ids)) == 24
    assert sorted(r.index for r in records) == list(range(24))
    assert {r.messages[0].text for r in records} == {f"question {i}" for i in range(24)}


def test_bad_requests_get_provider_shaped_errors(server: ProviderServer) -> None:
    with httpx.Client(base_url=server.base_url) as http:
        bad = http.post("/v1/chat/completions", content=b"{not json")
        assert bad.status_code == 400 and "parse the JSON body" in bad.json()["error"]["message"]
        missing = http.post(
            "/v1/messages",
            json={"model": "c", "messages": USER},
            headers={"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"},
        )
        assert missing.json() == {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
        }
        unknown = http.post("/v1/embeddings", json={})
        assert unknown.status_code == 404 and "Invalid URL" in unknown.json()["error"]["message"]
    assert [r.status for r in server.requests] == [400, 400]
    assert server.requests[1].headers["x-api-key"] == "REDACTED"


def test_ids_stay_unique_across_reset(server: ProviderServer) -> None:
    server.set_replies([Reply(tool_calls=[("f", {})]), Reply(tool_calls=[("f", {})])])
    client = oai(server)
    first = client.chat.completions.create(model="m", messages=USER).choices[0].message
    server.reset()
    second = client.chat.completions.create(model="m", messages=USER).choices[0].message
    assert first.tool_calls is not None and second.tool_calls is not None
    assert first.tool_calls[0].id != second.tool_calls[0].id
    assert [r.index for r in server.requests] == [0]


def test_an_invalid_scripted_reply_is_a_recorded_500(server: ProviderServer) -> None:
    server.set_replies([Reply(tool_calls=[("f", "[1, 2]")]), "after"])
    client = ant(server)
    with pytest.raises(anthropic.InternalServerError, match="not a JSON object"):
        client.messages.create(model="c", max_tokens=10, messages=USER)
    assert server.requests[0].status == 500
    message = client.messages.create(model="c", max_tokens=10, messages=USER)
    assert message.content[0].type == "text" and message.content[0].text == "after"
