"""Tests for abridged.providers.anthropic: cache breakpoints where the design puts them, thinking
budgets, stream assembly, count_tokens, errors and keys, over HTTP against the ProviderServer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from abridged.core.model import Message, Reasoning, Text, ToolCall, ToolResult
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
from abridged.formats.anthropic_messages import messages_from_anthropic
from abridged.providers.anthropic import (
    THINKING_BUDGETS,
    AnthropicChatModel,
    cache_breakpoints,
)
from abridged.testing import ProviderServer, Reply

KEY = "sk-ant-test-SECRETSECRETSECRET-0123456789"
READ = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)
LONG = " ".join(f"line {i}: the quick brown fox jumps over the lazy dog." for i in range(300))
EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer(context_window=16_384, max_output=4_096) as s:
        yield s


def claude(server: ProviderServer, **kwargs: Any) -> AnthropicChatModel:
    kwargs.setdefault("api_key", KEY)
    return AnthropicChatModel("claude-test", base_url=server.base_url, **kwargs)


def offline(**kwargs: Any) -> AnthropicChatModel:
    return AnthropicChatModel("claude-test", api_key=KEY, **kwargs)


def conversation() -> list[Message]:
    """System, summary, a step whose first result was pruned, an answer and a new question."""
    return [
        Message.system("You are terse."),
        Message.user("Summary of earlier work: fixed the parser.", meta={"kind": "summary"}),
        Message.user("Now read both files."),
        Message.assistant(
            tool_calls=[
                ToolCall("c1", "read", '{"path": "a"}'),
                ToolCall("c2", "read", '{"path": "b"}'),
            ]
        ),
        Message(
            "tool",
            (ToolResult("c1", "read", (Text("[tool output pruned: 9 chars]"),)),),
            meta={"pruned": {"c1": {"chars": 9, "tokens": 3}}},
        ),
        Message("tool", (ToolResult("c2", "read", (Text("bbb"),)),)),
        Message.assistant("Both read."),
        Message.user("Next?"),
    ]


def marked(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Where ``cache_control`` is: ("system", -1, block) or ("messages", message, block)."""
    found: list[tuple[str, int, int]] = []
    system = body.get("system")
    for n, block in enumerate(system if isinstance(system, list) else []):
        if "cache_control" in block:
            found.append(("system", -1, n))
    for i, m in enumerate(body["messages"]):
        content = m["content"] if isinstance(m["content"], list) else []
        for n, block in enumerate(content):
            if "cache_control" in block:
                found.append(("messages", i, n))
            for inner in (
                block.get("content") or [] if isinstance(block.get("content"), list) else []
            ):
                assert "cache_control" not in inner
    for tool in body.get("tools") or []:
        assert "cache_control" not in tool
    return found


# -- breakpoints (no network) --------------------------------------------------------------------


def test_breakpoint_rule_system_summary_prune_boundary_last() -> None:
    assert cache_breakpoints(conversation()) == (0, 1, 4, 7)
    assert cache_breakpoints([]) == ()
    assert cache_breakpoints([Message.user("hi")]) == (0,)
    # a summary sent as a system message: the system breakpoint stays on the real system prompt
    ms = [
        Message.system("sys"),
        Message.system("summary", meta={"kind": "summary"}),
        Message.user("q"),
    ]
    assert cache_breakpoints(ms) == (0, 1, 2)
    # the prune boundary is the LAST pruned message
    ms = [
        Message.user("q"),
        Message.tool("a", "x", meta={"pruned": {"a": {}}}),
        Message.tool("b", "y", meta={"pruned": {"b": {}}}),
        Message.user("z"),
    ]
    assert cache_breakpoints(ms) == (2, 3)


def test_breakpoints_land_on_the_wire_where_the_design_says() -> None:
    body = offline().request(conversation(), [READ], 1_000)
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": EPHEMERAL}
    ]
    # wire: 0 summary, 1 "Now read", 2 assistant tool_use x2, 3 user tool_result x2, 4 answer,
    # 5 "Next?": the pruned result c1 is block 0 of message 3, not its sibling c2
    assert marked(body) == [
        ("system", -1, 0),
        ("messages", 0, 0),
        ("messages", 3, 0),
        ("messages", 5, 0),
    ]
    assert body["messages"][3]["content"][0]["tool_use_id"] == "c1"


def test_caching_off_sends_no_cache_control_at_all() -> None:
    imported = messages_from_anthropic(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "old", "cache_control": EPHEMERAL}],
            }
        ],
        [{"type": "text", "text": "sys", "cache_control": EPHEMERAL}],
    )
    body = offline(cache=False).request(imported, [READ], 100)
    assert marked(body) == []
    assert "cache_control" not in json.dumps(body)
    # and per call
    body = offline().request(conversation(), None, 100, cache=False)
    assert "cache_control" not in json.dumps(body)


def test_stale_breakpoints_from_imported_messages_are_replaced() -> None:
    imported = messages_from_anthropic(
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "a", "cache_control": EPHEMERAL}],
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "b", "cache_control": EPHEMERAL}],
            },
            {
                "role": "user",
                "content": [{"type": "text", "text": "c", "cache_control": EPHEMERAL}],
            },
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "d", "cache_control": EPHEMERAL}],
            },
            {"role": "user", "content": "e"},
        ],
        [{"type": "text", "text": "sys", "cache_control": EPHEMERAL}],
    )
    body = offline().request(imported, None, 100)
    assert marked(body) == [("system", -1, 0), ("messages", 4, 0)]


def test_cache_ttl_and_explicit_breakpoints() -> None:
    body = offline(cache_ttl="1h").request(conversation(), None, 100, cache_breakpoints=[2, 6])
    assert marked(body) == [("messages", 1, 0), ("messages", 4, 0)]
    assert body["messages"][1]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    with pytest.raises(SettingError, match="cache_breakpoints"):
        offline().request(conversation(), None, 100, cache_breakpoints=[0, 1, 2, 3, 4])
    with pytest.raises(SettingError, match="cache_breakpoints"):
        offline().request(conversation(), None, 100, cache_breakpoints=[99])
    with pytest.raises(SettingError, match="cache_ttl"):
        offline(cache_ttl="10m")


def test_a_breakpoint_never_goes_on_a_thinking_block() -> None:
    last = Message(
        "assistant", (Text("answer"), Reasoning("why", signature="sig", provider="anthropic"))
    )
    body = offline().request([Message.user("q"), last], None, 100)
    blocks = body["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["text", "thinking"]
    assert "cache_control" in blocks[0] and "cache_control" not in blocks[1]


def test_a_system_only_request_marks_the_system_prompt() -> None:
    body = offline().request([Message.system("a"), Message.system("b")], None, 100)
    assert marked(body) == [("system", -1, 1)]


# -- thinking and options (no network) -----------------------------------------------------------


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
def test_thinking_efforts_map_to_budgets(effort: str) -> None:
    body = offline(thinking=effort).request([Message.user("q")], None, 64_000)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": THINKING_BUDGETS[effort]}


def test_thinking_budget_is_capped_at_half_of_max_tokens_and_drops_temperature() -> None:
    body = offline(thinking="high", temperature=0.3, top_k=5).request(
        [Message.user("q")], None, 5_000
    )
    assert body["thinking"]["budget_tokens"] == 2_500
    assert "temperature" not in body and "top_k" not in body
    assert offline(thinking=3_000).request([Message.user("q")], None, 10_000)["thinking"] == {
        "type": "enabled",
        "budget_tokens": 3_000,
    }
    with pytest.raises(SettingError, match="max_output_tokens"):
        offline(thinking="low").request([Message.user("q")], None, 2_000)
    for bad in ("extreme", 512, True):
        with pytest.raises(SettingError, match="thinking"):
            offline(thinking=bad)


def test_options_are_mapped_and_unknown_ones_ignored() -> None:
    body = offline(temperature=0.1).request(
        [Message.user("q")], [READ], 100, stop="END", tool_choice="required", seed=3
    )
    assert body["temperature"] == 0.1
    assert body["stop_sequences"] == ["END"]
    assert body["tool_choice"] == {"type": "any"}
    assert "seed" not in body
    assert body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": dict(READ.parameters)}
    ]
    assert body["max_tokens"] == 100
    assert offline().request([Message.user("q")])["max_tokens"] == 4_096


def test_missing_key_and_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProviderError, match="ANTHROPIC_API_KEY"):
        AnthropicChatModel("claude-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    model = AnthropicChatModel("claude-test", thinking="low")
    assert KEY not in repr(model)
    assert repr(model) == "AnthropicChatModel(model='claude-test', cache=True, thinking='low')"
    assert isinstance(model, ChatModel)


# -- over HTTP -------------------------------------------------------------------------------------


async def test_stream_text_usage_and_timing(server: ProviderServer) -> None:
    server.set_replies([Reply(text="Hello there, friend.")])
    events: list[StreamEvent] = [
        e async for e in claude(server).stream([Message.system("Be brief."), Message.user("hi")])
    ]
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there, friend."
    assert completion.message.text == "Hello there, friend."
    assert completion.finish_reason == "stop"
    recorded = server.requests[-1]
    assert recorded.api == "anthropic" and recorded.stream
    assert completion.usage is not None
    assert completion.usage.context_tokens == recorded.prompt_tokens
    assert completion.usage.output == recorded.output_tokens
    timing = completion.message.meta["timing"]
    assert 0 < timing["ttft_ms"] <= timing["total_ms"]
    assert "REDACTED" in (recorded.headers.get("x-api-key"), recorded.headers.get("authorization"))
    assert all(KEY not in value for value in recorded.headers.values())


async def test_thinking_signature_round_trips_with_parallel_tool_calls(
    server: ProviderServer,
) -> None:
    server.set_replies(
        [
            Reply(
                reasoning="Read both.",
                tool_calls=[("read", {"path": "a"}), ("read", {"path": "b"})],
            ),
            "Both read.",
        ]
    )
    model = claude(server, thinking="low")
    events = [
        e
        async for e in model.stream(
            [Message.user("read a and b")], tools=[READ], max_output_tokens=4_000
        )
    ]
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert completion.finish_reason == "tool_calls"
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Read both."
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    args: dict[int, str] = {}
    for d in deltas:
        args[d.index] = args.get(d.index, "") + d.arguments
    assert {i: json.loads(a) for i, a in args.items()} == {0: {"path": "a"}, 1: {"path": "b"}}
    thinking = completion.message.parts[0]
    assert isinstance(thinking, Reasoning) and thinking.signature
    assert server.requests[-1].body["thinking"] == {"type": "enabled", "budget_tokens": 1_024}
    calls = completion.message.tool_calls
    history = [
        Message.user("read a and b"),
        completion.message,
        *(Message("tool", (ToolResult(c.id, "read", (Text("x"),)),)) for c in calls),
    ]
    answer = await model.complete(history, tools=[READ], max_output_tokens=4_000)
    assert answer.message.text == "Both read."
    sent = server.requests[-1].body["messages"][1]["content"][0]
    assert sent["type"] == "thinking" and sent["signature"] == thinking.signature
    # a tampered thinking block is refused by the provider: the round trip above is what passes
    forged = completion.message.replace(
        parts=(
            Reasoning("Read both, changed.", signature=thinking.signature, provider="anthropic"),
            *completion.message.parts[1:],
        )
    )
    with pytest.raises(ProviderError, match="signature"):
        await model.complete(
            [history[0], forged, *history[2:]], tools=[READ], max_output_tokens=4_000
        )


async def test_cache_breakpoints_reach_the_server_and_reads_land_in_cache_read(
    server: ProviderServer,
) -> None:
    model = claude(server)
    history = [Message.system(LONG), Message.user("first question")]
    first = await model.complete(history)
    assert marked(server.requests[-1].body) == [("system", -1, 0), ("messages", 0, 0)]
    second = await model.complete([*history, first.message, Message.user("second question")])
    recorded = server.requests[-1]
    assert first.usage is not None and second.usage is not None
    assert first.usage.cache_write >= 1_024 and first.usage.cache_read == 0
    assert second.usage.cache_read == recorded.cached_tokens >= first.usage.cache_write
    assert second.usage.cache_write == recorded.cache_write_tokens
    assert second.usage.context_tokens == recorded.prompt_tokens


async def test_design_breakpoints_on_the_wire_and_the_switch(server: ProviderServer) -> None:
    await claude(server).complete(conversation(), tools=[READ])
    assert marked(server.requests[-1].body) == [
        ("system", -1, 0),
        ("messages", 0, 0),
        ("messages", 3, 0),
        ("messages", 5, 0),
    ]
    history = [Message.system(LONG), Message.user("q")]
    off = claude(server, cache=False)
    await off.complete(history)
    second = await off.complete([*history, Message.assistant("a"), Message.user("again")])
    assert "cache_control" not in json.dumps(server.requests[-1].body)
    assert server.requests[-1].cached_tokens == 0
    assert second.usage is not None and second.usage.cache_read == second.usage.cache_write == 0


async def test_count_tokens_matches_what_a_call_reads(server: ProviderServer) -> None:
    model = claude(server)
    history = conversation()
    counted = await model.count_tokens(history, [READ])
    assert server.requests[-1].api == "anthropic-count"
    await model.complete(history, tools=[READ])
    assert counted == server.requests[-1].prompt_tokens
    assert await model.count_tokens([Message.user("hi")]) < counted


async def test_prompt_too_long_raises_context_overflow_error() -> None:
    with ProviderServer(context_window=2_048, max_output=1_024) as s:
        with pytest.raises(ContextOverflowError) as caught:
            await claude(s).complete([Message.user(LONG)], max_output_tokens=256)
        prompt = s.requests[-1].prompt_tokens
    assert (caught.value.tokens, caught.value.limit) == (prompt, 2_048)
    assert caught.value.context["status"] == 400


async def test_input_plus_max_tokens_over_the_window_is_an_overflow_too() -> None:
    text = " ".join(f"word{i}" for i in range(700))
    with ProviderServer(context_window=2_048, max_output=1_024) as s:
        with pytest.raises(ContextOverflowError) as caught:
            await claude(s).complete([Message.user(text)], max_output_tokens=1_000)
        prompt = s.requests[-1].prompt_tokens
    assert prompt < 2_048 < prompt + 1_000
    assert caught.value.context["input_tokens"] == prompt
    assert caught.value.context["output_tokens"] == 1_000
    assert caught.value.limit == 2_048


async def test_max_tokens_above_the_models_ceiling_is_not_an_overflow(
    server: ProviderServer,
) -> None:
    with pytest.raises(ProviderError) as caught:
        await claude(server).complete([Message.user("hi")], max_output_tokens=50_000)
    assert not isinstance(caught.value, ContextOverflowError)
    assert caught.value.context["status"] == 400


async def test_the_key_is_never_in_errors(server: ProviderServer) -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": f"invalid x-api-key: {KEY}"},
    }
    server.set_replies([Reply(error=(401, body))])
    model = claude(server, max_retries=0)
    with pytest.raises(ProviderError) as caught:
        await model.complete([Message.user("hi")])
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert caught.value.context["status"] == 401
    assert caught.value.__cause__ is None
    assert KEY not in repr(model)


async def test_max_tokens_cut_is_length(server: ProviderServer) -> None:
    server.set_replies([Reply(text=LONG)])
    completion = await claude(server).complete([Message.user("talk")], max_output_tokens=20)
    assert completion.finish_reason == "length"
    assert completion.usage is not None and completion.usage.output <= 20


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value


def test_the_sent_prefix_keeps_its_bytes_when_the_last_breakpoint_moves_on() -> None:
    model = offline()
    history = conversation()
    first = model.request(history, [READ], 1_000)
    second = model.request(
        [*history, Message.assistant("Done."), Message.user("More?")], [READ], 1_000
    )
    a, b = _without_cache_control(first), _without_cache_control(second)
    assert a["system"] == b["system"] and a["tools"] == b["tools"]
    n = len(a["messages"])
    assert json.dumps(a["messages"]) == json.dumps(b["messages"][:n])
    assert first["messages"][-1]["content"][0]["cache_control"] == EPHEMERAL
    assert "cache_control" not in second["messages"][n - 1]["content"][0]


async def test_over_the_sdks_aiohttp_client_the_stream_is_the_same(server: ProviderServer) -> None:
    import anthropic

    model = claude(server, http_client="aiohttp")
    assert isinstance(model._client._client, anthropic.DefaultAioHttpClient)
    server.set_replies([Reply(text="Hello over aiohttp.")])
    completion = await model.complete([Message.user("hi")])
    assert completion.message.text == "Hello over aiohttp."
    assert completion.usage is not None
    assert completion.usage.context_tokens == server.requests[-1].prompt_tokens
    await model.aclose()
    assert model._client.is_closed()
