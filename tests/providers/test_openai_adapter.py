"""Tests for abridged.providers.openai: request bodies, stream assembly, keys, and the real SDK
over HTTP against the local ProviderServer (Chat Completions and Responses)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from abridged.core.model import Message, Reasoning, Text, ToolResult
from abridged.core.protocols import (
    ChatModel,
    Completion,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from abridged.errors import ContextOverflowError, ProviderError, SettingError
from abridged.providers.openai import ChatStreamAssembler, OpenAIChatModel
from abridged.testing import ProviderServer, Reply

KEY = "sk-test-SECRETSECRETSECRET-0123456789"
READ = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)
LONG = " ".join(f"line {i}: the quick brown fox jumps over the lazy dog." for i in range(300))


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer(context_window=16_384, max_output=4_096) as s:
        yield s


def chat_model(server: ProviderServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("api_key", KEY)
    return OpenAIChatModel("gpt-test", base_url=server.base_url + "/v1", **kwargs)


async def collect(model: ChatModel, messages: list[Message], **kwargs: Any) -> list[StreamEvent]:
    return [event async for event in model.stream(messages, **kwargs)]


# -- stream assembly (no network) ----------------------------------------------------------------


def test_assembler_joins_interleaved_parallel_tool_calls_by_index() -> None:
    a = ChatStreamAssembler()
    chunks: list[dict[str, Any]] = [
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "read", "arguments": ""},
                            }
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "grep", "arguments": '{"q":'},
                            }
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a"}'}}]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 1, "function": {"arguments": '"x"}'}}]},
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}},
    ]
    events = [e for c in chunks for e in a.feed(c)]
    assert [e.index for e in events if isinstance(e, ToolCallDelta)] == [0, 1, 0, 1]
    calls = a.response()["choices"][0]["message"]["tool_calls"]
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("call_a", "read", '{"path": "a"}'),
        ("call_b", "grep", '{"q":"x"}'),
    ]
    assert a.response()["usage"]["prompt_tokens"] == 10
    assert a.response()["choices"][0]["message"]["content"] is None


def test_assembler_handles_servers_without_index_or_reusing_one() -> None:
    a = ChatStreamAssembler()
    a.feed(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"id": "x1", "function": {"name": "read", "arguments": "{}"}}
                        ]
                    }
                }
            ]
        }
    )
    a.feed(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [{"id": "x2", "function": {"name": "ls", "arguments": "{"}}]
                    }
                }
            ]
        }
    )
    a.feed({"choices": [{"delta": {"tool_calls": [{"function": {"arguments": "}"}}]}}]})
    # Gemini-style: every call under index 0, told apart by their ids
    a.feed(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "x3", "function": {"name": "cat", "arguments": "{}"}}
                        ]
                    }
                }
            ]
        }
    )
    a.feed(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "x4", "function": {"name": "rm", "arguments": "{}"}}
                        ]
                    }
                }
            ]
        }
    )
    calls = a.response()["choices"][0]["message"]["tool_calls"]
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [
        ("x1", "{}"),
        ("x2", "{}"),
        ("x3", "{}"),
        ("x4", "{}"),
    ]


def test_assembler_keeps_reasoning_under_the_key_the_server_used() -> None:
    a = ChatStreamAssembler()
    events = a.feed({"choices": [{"delta": {"reasoning": "hmm"}}]})
    events += a.feed({"choices": [{"delta": {"content": "ok"}}]})
    assert events == [ReasoningDelta("hmm"), TextDelta("ok")]
    assert a.response()["choices"][0]["message"]["reasoning"] == "hmm"


# -- requests and keys (no network) --------------------------------------------------------------


class _FakeStream:
    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        self.chunks = chunks
        self.closed = False

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        async def gen() -> AsyncIterator[dict[str, Any]]:
            for c in self.chunks:
                yield c

        return gen()

    async def close(self) -> None:
        self.closed = True


class _FakeClient:
    def __init__(self, chunks: list[dict[str, Any]]) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.stream = _FakeStream(chunks)
        self.chat = self
        self.completions = self

    async def create(self, **body: Any) -> _FakeStream:
        self.bodies.append(body)
        return self.stream


def test_official_endpoint_gets_max_completion_tokens_and_compatible_ones_max_tokens() -> None:
    official = OpenAIChatModel("gpt-4.1", api_key=KEY)
    local = OpenAIChatModel("llama", base_url="http://localhost:8000/v1")
    assert official.chat_request([Message.user("hi")], None, 50)["max_completion_tokens"] == 50
    assert local.chat_request([Message.user("hi")], None, 50)["max_tokens"] == 50
    forced = OpenAIChatModel("m", base_url="http://x/v1", max_tokens_param="max_completion_tokens")
    assert "max_completion_tokens" in forced.chat_request([Message.user("hi")], None, 5)
    assert official.provider == "openai" and local.provider == "openai-compatible"


def test_known_options_are_sent_unknown_ones_ignored_and_call_options_win() -> None:
    model = OpenAIChatModel("m", base_url="http://x/v1", temperature=0.2, seed=7)
    body = model.chat_request(
        [Message.user("hi")], [READ], None, temperature=0.9, cache_breakpoints=[0], nonsense=1
    )
    assert body["temperature"] == 0.9 and body["seed"] == 7
    assert "cache_breakpoints" not in body and "nonsense" not in body
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file",
            "parameters": dict(READ.parameters),
        },
    }


def test_responses_request_is_stateless_with_encrypted_reasoning() -> None:
    model = OpenAIChatModel(
        "o4-mini", api_key=KEY, api="responses", reasoning_effort="low", reasoning_summary="auto"
    )
    body = model.responses_request([Message.user("hi")], [READ], 300)
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["max_output_tokens"] == 300
    assert body["tools"][0]["type"] == "function" and body["tools"][0]["name"] == "read"


def test_missing_key_for_openai_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-4.1")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    assert OpenAIChatModel("gpt-4.1")._client.api_key == KEY


def test_the_openai_key_from_the_environment_never_goes_to_another_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    model = OpenAIChatModel("llama", base_url="https://someone-elses-server.example/v1")
    assert model._client.api_key != KEY
    # OPENAI_BASE_URL is the user's own pairing with OPENAI_API_KEY
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    paired = OpenAIChatModel("llama")
    assert paired._client.api_key == KEY
    assert paired.base_url == "http://localhost:8000/v1"


def test_azure_uses_the_azure_client_and_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    model = OpenAIChatModel(
        "my-deployment", azure_endpoint="https://res.openai.azure.com", api_version="2024-10-21"
    )
    assert type(model._client).__name__ == "AsyncAzureOpenAI"
    assert model.provider == "azure-openai"
    assert model.max_tokens_param == "max_completion_tokens"
    assert KEY not in repr(model)


def test_azure_without_api_version_is_a_provider_error_without_the_key() -> None:
    with pytest.raises(ProviderError, match="api_version") as caught:
        OpenAIChatModel("dep", azure_endpoint="https://res.openai.azure.com", api_key=KEY)
    assert KEY not in str(caught.value)


def test_repr_has_no_key_nor_url_credentials() -> None:
    model = OpenAIChatModel(
        "m", base_url=f"https://user:{KEY}@host.example/v1?key={KEY}", api_key=KEY
    )
    assert KEY not in repr(model) and KEY not in str(model)
    assert (
        repr(model) == "OpenAIChatModel(model='m', api='chat', base_url='https://host.example/v1')"
    )


def test_invalid_settings_raise() -> None:
    with pytest.raises(SettingError):
        OpenAIChatModel("m", base_url="http://x", api="completions")  # type: ignore[arg-type]
    with pytest.raises(SettingError):
        OpenAIChatModel("", base_url="http://x")
    with pytest.raises(SettingError):
        OpenAIChatModel("m", base_url="http://x", timeout=0)


async def test_the_sdk_stream_is_closed_when_the_consumer_stops_early() -> None:
    client = _FakeClient([{"choices": [{"delta": {"content": c}}]} for c in "abcdef"])
    model = OpenAIChatModel("m", client=client)
    stream = model.stream([Message.user("hi")])
    async for event in stream:
        assert event == TextDelta("a")
        break
    await stream.aclose()  # type: ignore[attr-defined]
    assert client.stream.closed
    assert client.bodies[0]["stream"] is True
    assert client.bodies[0]["stream_options"] == {"include_usage": True}


async def test_finish_reason_is_normalised_and_stop_with_tool_calls_means_tool_calls() -> None:
    client = _FakeClient(
        [
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c",
                                    "function": {"name": "read", "arguments": "{}"},
                                }
                            ]
                        }
                    }
                ]
            },
            {"choices": [{"delta": {}, "finish_reason": "stop"}]},  # Ollama says "stop"
        ]
    )
    completion = await OpenAIChatModel("m", client=client, stream_usage=False).complete(
        [Message.user("hi")]
    )
    assert completion.finish_reason == "tool_calls"
    assert completion.usage is None
    assert "stream_options" not in client.bodies[0]


# -- Chat Completions over HTTP ------------------------------------------------------------------


async def test_chat_stream_text_reasoning_usage_and_timing(server: ProviderServer) -> None:
    server.set_replies([Reply(text="Hello there, friend.", reasoning="The user greets me.")])
    events = await collect(chat_model(server), [Message.system("Be brief."), Message.user("hi")])
    completion = events[-1]
    assert isinstance(completion, Completion)
    deltas = events[:-1]
    assert "".join(e.text for e in deltas if isinstance(e, TextDelta)) == "Hello there, friend."
    assert "".join(e.text for e in deltas if isinstance(e, ReasoningDelta)) == "The user greets me."
    assert completion.message.text == "Hello there, friend."
    assert completion.message.parts[0] == Reasoning("The user greets me.")
    assert completion.finish_reason == "stop"
    recorded = server.requests[-1]
    assert recorded.api == "openai-chat" and recorded.stream
    assert completion.usage is not None
    assert completion.usage.context_tokens == recorded.prompt_tokens
    assert completion.usage.output == recorded.output_tokens
    timing = completion.message.meta["timing"]
    assert 0 < timing["ttft_ms"] <= timing["total_ms"]
    assert recorded.headers["authorization"] == "REDACTED"


async def test_chat_ttft_is_the_first_token_not_the_whole_reply() -> None:
    with ProviderServer(
        stream_delay=0.05, replies=[Reply(text="one two three four five six")]
    ) as s:
        completion = await chat_model(s).complete([Message.user("count")])
    timing = completion.message.meta["timing"]
    assert timing["total_ms"] - timing["ttft_ms"] >= 100  # several delayed events after the first


async def test_chat_parallel_tool_calls_and_their_results_go_back(server: ProviderServer) -> None:
    server.set_replies(
        [Reply(tool_calls=[("read", {"path": "a.py"}), ("read", {"path": "b.py"})]), "Done."]
    )
    model = chat_model(server)
    history = [Message.user("read both")]
    events = await collect(model, history, tools=[READ])
    completion = events[-1]
    assert isinstance(completion, Completion)
    calls = completion.message.tool_calls
    assert [json.loads(c.arguments) for c in calls] == [{"path": "a.py"}, {"path": "b.py"}]
    assert completion.finish_reason == "tool_calls"
    call_deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {e.index for e in call_deltas} == {0, 1}
    assert [e.id for e in call_deltas if e.id] == [c.id for c in calls]
    history += [completion.message] + [Message.tool(c.id, "contents", name="read") for c in calls]
    answer = await model.complete(history, tools=[READ])
    assert answer.message.text == "Done."
    sent = server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in sent[2:]] == [c.id for c in calls]


async def test_chat_reasoning_content_is_sent_back(server: ProviderServer) -> None:
    server.set_replies([Reply(text="4", reasoning="2+2 is 4")])
    model = chat_model(server)
    first = await model.complete([Message.user("2+2?")])
    await model.complete([Message.user("2+2?"), first.message, Message.user("sure?")])
    assistant = server.requests[-1].body["messages"][1]
    assert assistant["reasoning_content"] == "2+2 is 4"
    assert assistant["content"] == "4"


async def test_chat_cached_tokens_land_in_cache_read(server: ProviderServer) -> None:
    model = chat_model(server)
    history = [Message.system(LONG), Message.user("first question")]
    first = await model.complete(history)
    second = await model.complete([*history, first.message, Message.user("second question")])
    recorded = server.requests[-1]
    assert recorded.cached_tokens >= 1_024
    assert second.usage is not None and first.usage is not None
    assert first.usage.cache_read == 0
    assert second.usage.cache_read == recorded.cached_tokens
    assert second.usage.input == recorded.prompt_tokens - recorded.cached_tokens


async def test_chat_overflow_raises_context_overflow_error_with_sizes() -> None:
    with ProviderServer(context_window=2_048, max_output=512) as s:
        with pytest.raises(ContextOverflowError) as caught:
            await chat_model(s).complete([Message.user(LONG)], max_output_tokens=256)
        recorded = s.requests[-1]
    error = caught.value
    assert error.limit == 2_048
    assert error.tokens == recorded.prompt_tokens + 256
    assert error.context["input_tokens"] == recorded.prompt_tokens
    assert error.context["status"] == 400
    assert error.__cause__ is None


async def test_chat_other_400s_are_provider_errors(server: ProviderServer) -> None:
    body = {
        "error": {
            "message": "Invalid schema for function 'read': In context=('properties', "
            "'path'), array schema missing items.",
            "type": "invalid_request_error",
            "param": "tools[0]",
            "code": "invalid_function_parameters",
        }
    }
    server.set_replies([Reply(error=(400, body))])
    with pytest.raises(ProviderError) as caught:
        await chat_model(server).complete([Message.user("hi")], tools=[READ])
    assert not isinstance(caught.value, ContextOverflowError)
    assert caught.value.context["status"] == 400
    assert caught.value.context["code"] == "invalid_function_parameters"


async def test_chat_output_ceiling_error_is_not_an_overflow(server: ProviderServer) -> None:
    with pytest.raises(ProviderError) as caught:
        await chat_model(server).complete([Message.user("hi")], max_output_tokens=100_000)
    assert not isinstance(caught.value, ContextOverflowError)
    assert "max_tokens is too large" in str(caught.value)


async def test_chat_unpaired_tool_result_gets_the_servers_400(server: ProviderServer) -> None:
    orphan = Message("tool", (ToolResult("call_missing", "read", (Text("x"),)),))
    with pytest.raises(ProviderError) as caught:
        await chat_model(server).complete([Message.user("hi"), orphan])
    assert caught.value.context["status"] == 400
    assert not isinstance(caught.value, ContextOverflowError)


async def test_the_key_is_never_in_repr_or_errors(server: ProviderServer) -> None:
    body = {
        "error": {
            "message": f"Incorrect API key provided: {KEY}. You can find your API key "
            "at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        }
    }
    server.set_replies([Reply(error=(401, body))])
    model = chat_model(server, max_retries=0)
    assert KEY not in repr(model)
    with pytest.raises(ProviderError) as caught:
        await model.complete([Message.user("hi")])
    error = caught.value
    assert KEY not in str(error) and KEY not in repr(error)
    assert all(KEY not in str(v) for v in error.context.values())
    assert error.context["status"] == 401
    assert error.__cause__ is None and error.__suppress_context__


async def test_a_timeout_is_a_clear_provider_error() -> None:
    with ProviderServer(latency=2.0) as s:
        model = chat_model(s, timeout=0.3, max_retries=0)
        with pytest.raises(ProviderError, match=r"timed out after 0\.3 s") as caught:
            await model.complete([Message.user("hi")])
    assert caught.value.context["timeout"] is True


# -- Responses over HTTP ---------------------------------------------------------------------------


async def test_responses_reasoning_is_kept_encrypted_and_sent_back(server: ProviderServer) -> None:
    server.set_replies([Reply(text="Paris.", reasoning="Capital of France.", signature="enc-abc")])
    model = chat_model(server, api="responses")
    events = await collect(model, [Message.user("capital of France?")])
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert completion.message.text == "Paris."
    reasoning = completion.message.parts[0]
    assert isinstance(reasoning, Reasoning)
    assert reasoning.encrypted == "enc-abc" and reasoning.provider == "openai"
    assert any(isinstance(e, ReasoningDelta) for e in events)
    first = server.requests[-1].body
    assert first["store"] is False and first["include"] == ["reasoning.encrypted_content"]
    await model.complete(
        [Message.user("capital of France?"), completion.message, Message.user("and Spain?")]
    )
    items = server.requests[-1].body["input"]
    sent = [i for i in items if i.get("type") == "reasoning"]
    assert sent and sent[0]["encrypted_content"] == "enc-abc"
    assert completion.usage is not None
    assert completion.usage.context_tokens == server.requests[0].prompt_tokens
    assert completion.message.meta["timing"]["ttft_ms"] is not None


async def test_responses_parallel_tool_calls(server: ProviderServer) -> None:
    server.set_replies([Reply(tool_calls=[("read", {"path": "a"}), ("read", {"path": "b"})]), "ok"])
    model = chat_model(server, api="responses")
    events = await collect(model, [Message.user("read")], tools=[READ])
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert completion.finish_reason == "tool_calls"
    calls = completion.message.tool_calls
    assert [json.loads(c.arguments) for c in calls] == [{"path": "a"}, {"path": "b"}]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    by_index: dict[int, str] = {}
    for d in deltas:
        by_index[d.index] = by_index.get(d.index, "") + d.arguments
    assert {i: json.loads(a) for i, a in by_index.items()} == {0: {"path": "a"}, 1: {"path": "b"}}
    results = [Message("tool", (ToolResult(c.id, "read", (Text("x"),)),)) for c in calls]
    answer = await model.complete(
        [Message.user("read"), completion.message, *results], tools=[READ]
    )
    assert answer.message.text == "ok"


async def test_responses_length_and_overflow() -> None:
    with ProviderServer(context_window=2_048, max_output=512, replies=[Reply(text=LONG)]) as s:
        model = chat_model(s, api="responses")
        cut = await model.complete([Message.user("talk")], max_output_tokens=20)
        assert cut.finish_reason == "length"
        with pytest.raises(ContextOverflowError) as caught:
            await model.complete([Message.user(LONG)])
    assert caught.value.context["rule"] in {
        "openai-responses-context-window",
        "code-context-length-exceeded",
    }


def test_model_satisfies_the_protocol() -> None:
    model = OpenAIChatModel("m", base_url="http://x/v1")
    assert isinstance(model, ChatModel)
    assert model.name == "m"


async def test_over_the_sdks_aiohttp_client_the_stream_and_errors_are_the_same() -> None:
    """``http_client="aiohttp"`` (what the service uses): the SDK's own aiohttp-backed client,
    the same events and the same typed overflow error; ``aclose`` closes it."""
    import openai

    with ProviderServer(context_window=2_048, max_output=512) as s:
        model = chat_model(s, http_client="aiohttp")
        assert isinstance(model._client._client, openai.DefaultAioHttpClient)
        s.set_replies([Reply(text="Hello over aiohttp.")])
        events = await collect(model, [Message.user("hi")])
        completion = events[-1]
        assert isinstance(completion, Completion)
        assert completion.message.text == "Hello over aiohttp."
        assert completion.usage is not None
        assert completion.usage.context_tokens == s.requests[-1].prompt_tokens
        with pytest.raises(ContextOverflowError) as caught:
            await model.complete([Message.user(LONG)], max_output_tokens=256)
        assert caught.value.limit == 2_048
        await model.aclose()
        assert model._client.is_closed()


async def test_aclose_leaves_a_callers_client_open(server: ProviderServer) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=server.base_url + "/v1", api_key=KEY)
    model = OpenAIChatModel("gpt-test", client=client)
    await model.aclose()
    assert not client.is_closed()
    await client.close()


# -- the request body, built once per message ------------------------------------------------


async def test_the_body_sent_is_the_sdks_encoding_of_chat_request(server: ProviderServer) -> None:
    """The body joined from each message's JSON is byte for byte what the SDK would send for
    ``chat_request``'s (a prompt cache sees the same prefix either way)."""
    from openai._utils._json import openapi_dumps  # the SDK's own encoder of a JSON body

    server.set_replies([Reply(tool_calls=[("read", {"path": "ü.py"})]), "Done — ok."])
    model = chat_model(server, temperature=0.5, seed=7)
    history = [Message.system("Be brief. ✓"), Message.user("read ü.py")]
    first = await model.complete(history, tools=[READ], max_output_tokens=300)
    call = first.message.tool_calls[0]
    history += [first.message, Message.tool(call.id, "x = 1\n" * 3, name="read")]
    await model.complete(history, tools=[READ], max_output_tokens=300, top_p=0.9)
    expected = model.chat_request(history, [READ], 300, top_p=0.9)
    expected["stream"] = True
    expected["stream_options"] = {"include_usage": True}
    assert server.requests[-1].raw_body == openapi_dumps(expected)


async def test_each_message_is_encoded_once_across_calls(server: ProviderServer) -> None:
    server.set_replies(["one", "two", "three"])
    model = chat_model(server)
    history = [Message.system("s"), Message.user("a")]
    for text in ("b", "c"):
        reply = await model.complete(history)
        history += [reply.message, Message.user(text)]
    await model.complete(history)
    # 2 messages, then 2 new ones, then 2 new ones: none encoded twice
    assert model._encoded.encoded == len(history) == 6
    assert [m["content"] for m in server.requests[-1].body["messages"]] == [
        "s",
        "a",
        "one",
        "b",
        "two",
        "c",
    ]


async def test_a_message_equal_to_a_cached_one_but_another_object_is_encoded_anew(
    server: ProviderServer,
) -> None:
    """The cache is by identity: a rebuilt (pruned, clipped) message is never sent stale."""
    server.set_replies(["ok", "ok"])
    model = chat_model(server)
    await model.complete([Message.user("long text", id="m1")])
    await model.complete([Message.user("short", id="m1")])
    assert server.requests[-1].body["messages"] == [{"role": "user", "content": "short"}]


async def test_extra_body_and_invalid_utf8_still_go_through_the_sdk_body(
    server: ProviderServer,
) -> None:
    server.set_replies(["ok", "ok"])
    model = chat_model(server)
    await model.complete([Message.user("hi")], extra_body={"x_tag": "t1"})
    assert server.requests[-1].body["x_tag"] == "t1"
    await model.complete([Message.user("broken \ud800 text")])  # a lone surrogate, repaired
    assert server.requests[-1].body["messages"][0]["content"].startswith("broken ")
