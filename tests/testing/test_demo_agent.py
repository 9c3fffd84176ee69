"""The demo agent model behind ``abridged demo``, through the official SDKs and real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from abridged.testing import ProviderServer
from abridged.testing.demo_agent import LONG_WORDS, READS_PER_TURN, demo_reply

TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("read_record", "search_records")
]


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer(replies=demo_reply, model="demo-agent") as running:
        yield running


def _openai(server: ProviderServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url + "/v1", api_key="demo", max_retries=0)


def _run_turn(client: openai.OpenAI, text: str, tools: list[Any]) -> list[Any]:
    """One user turn to its end, answering every tool call; the assistant messages."""
    messages: list[Any] = [{"role": "user", "content": text}]
    answers = []
    for _ in range(10):
        reply = client.chat.completions.create(
            model="demo-agent", messages=messages, tools=tools
        ).choices[0]
        answers.append(reply.message)
        messages.append(reply.message.model_dump(exclude_none=True))
        if not reply.message.tool_calls:
            return answers
        for call in reply.message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "rows " * 40})
    pytest.fail("the demo agent never finished its turn")


def test_with_the_demo_tools_a_turn_searches_reads_and_reports(server: ProviderServer) -> None:
    answers = _run_turn(_openai(server), "find the budget records", TOOLS)
    calls = [call.function.name for a in answers for call in a.tool_calls or ()]
    assert calls == ["search_records"] + ["read_record"] * READS_PER_TURN
    final = answers[-1].content
    assert final.startswith('For "find the budget records" I searched 1 time and read rec-')
    assert f"I was sent {1 + 2 * (1 + READS_PER_TURN)} messages" in final


def test_without_tools_it_answers_at_once(server: ProviderServer) -> None:
    answers = _run_turn(_openai(server), "hello there", [])
    assert len(answers) == 1
    assert answers[0].content.startswith('You said: "hello there".')


def test_asked_for_something_long_it_writes_a_long_answer(server: ProviderServer) -> None:
    reply = _openai(server).chat.completions.create(
        model="demo-agent", messages=[{"role": "user", "content": "write a long essay"}]
    )
    text = reply.choices[0].message.content or ""
    assert len(text.split()) >= LONG_WORDS
    assert reply.usage is not None and reply.usage.completion_tokens > LONG_WORDS
    again = _openai(server).chat.completions.create(
        model="demo-agent", messages=[{"role": "user", "content": "write a long essay"}]
    )
    assert again.choices[0].message.content == text  # deterministic


def test_it_speaks_anthropic_too_and_streams(server: ProviderServer) -> None:
    client = anthropic.Anthropic(base_url=server.base_url, api_key="demo", max_retries=0)
    tools: Any = [
        {"name": n, "input_schema": {"type": "object"}} for n in ("read_record", "search_records")
    ]
    with client.messages.stream(
        model="demo-agent",
        max_tokens=1024,
        messages=[{"role": "user", "content": "look up the owners"}],
        tools=tools,
    ) as stream:
        message = stream.get_final_message()
    uses = [b for b in message.content if b.type == "tool_use"]
    assert [u.name for u in uses] == ["search_records"]
    assert uses[0].input == {"query": "look up the owners"}
