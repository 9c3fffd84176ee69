"""The LangChain middleware with LangChain's real ``create_agent`` and ``ChatOpenAI`` over HTTP to
the local provider (8k window, real overflow and pairing checks): long tool-using runs fit, the
agent's state keeps every message, an overflow is recovered once, a restart resumes from the
store; and the message conversion both ways."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from abridged.core.validate import validate_messages
from abridged.errors import SettingError
from abridged.integrations.langchain import (
    AbridgedMiddleware,
    message_from_langchain,
    message_to_langchain,
    usage_from_langchain,
)
from abridged.store import Store
from abridged.testing import ProviderServer, RecordedRequest, Reply
from tests.integrations.support import WINDOW, record_text, scripted

KEY = "sk-langchain-test-0123456789abcdef"


@tool
def read_record(key: str) -> str:
    """Read a record (about 600 tokens)."""
    return record_text(key)


def calls_until(steps: int) -> Any:
    """A model that reads records until ``steps`` tool results are in its context's history."""

    def reply(request: RecordedRequest) -> Reply:
        done = sum(1 for m in request.messages for _ in m.tool_results)
        last = request.messages[-1] if request.messages else None
        if last is not None and last.role == "user" and "stop" in last.text:
            return Reply("Done.")
        key = f"k{len(request.body.get('messages', []))}-{done}"
        return Reply("", tool_calls=[("read_record", {"key": key})])

    return reply


@pytest.fixture
def provider() -> Iterator[ProviderServer]:
    with ProviderServer(
        context_window=WINDOW, max_output=1_024, replies=calls_until(10_000)
    ) as server:
        yield server


def model(provider: ProviderServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="gpt-test", base_url=provider.base_url + "/v1", api_key=KEY, max_retries=0
    )


def middleware(**kwargs: Any) -> AbridgedMiddleware:
    return AbridgedMiddleware(context_window=WINDOW, max_output_tokens=1_024, **kwargs)


def test_messages_convert_both_ways() -> None:
    ai = AIMessage(
        "reading", tool_calls=[{"id": "c1", "name": "read_record", "args": {"key": "a"}}], id="a1"
    )
    result = ToolMessage("contents", tool_call_id="c1", name="read_record", id="t1")
    core = [message_from_langchain(m) for m in (SystemMessage("s"), HumanMessage("q"), ai, result)]
    assert [m.role for m in core] == ["system", "user", "assistant", "tool"]
    assert core[2].tool_calls[0].parsed_arguments() == {"key": "a"} and core[2].id == "a1"
    assert core[3].tool_results[0].call_id == "c1" and core[3].tool_results[0].text == "contents"
    back = [message_to_langchain(m) for m in core]
    assert isinstance(back[2], AIMessage) and back[2].tool_calls[0]["args"] == {"key": "a"}
    assert isinstance(back[3], ToolMessage) and back[3].tool_call_id == "c1"
    usage = usage_from_langchain(
        AIMessage(
            "x",
            usage_metadata={
                "input_tokens": 100,
                "output_tokens": 7,
                "total_tokens": 107,
                "input_token_details": {"cache_read": 64},
            },
        )
    )
    assert usage is not None and (usage.input, usage.cache_read, usage.output) == (36, 64, 7)


def test_a_long_tool_run_fits_and_the_state_keeps_every_message(provider: ProviderServer) -> None:
    guard = middleware()
    agent = create_agent(
        model(provider), [read_record], system_prompt="You are an agent.", middleware=[guard]
    )
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [HumanMessage("Read every record.")]}, {"recursion_limit": 121})
    requests = provider.requests
    assert len(requests) >= 60
    assert all(r.status == 200 and r.error is None for r in requests)
    assert all(validate_messages(r.messages) == [] for r in requests)
    assert max(r.prompt_tokens for r in requests) <= WINDOW - 1_024
    manager = guard.manager()
    assert manager is not None and manager.state.compactions >= 1
    # the agent's history was never rewritten: the last request's model saw a summary, the
    # agent's own list holds every tool result
    assert len(manager.history) >= 2 * len(requests) - 1


def test_the_direct_run_overflows_without_the_middleware(provider: ProviderServer) -> None:
    import openai

    agent = create_agent(model(provider), [read_record], system_prompt="You are an agent.")
    with pytest.raises(openai.BadRequestError, match="maximum context length"):
        agent.invoke({"messages": [HumanMessage("Read every record.")]}, {"recursion_limit": 121})


def test_an_overflow_is_recovered_once(provider: ProviderServer) -> None:
    # The middleware believes the window is 4x larger than it is: the provider says "too long",
    # the emergency path runs, the call is made again and succeeds.
    guard = AbridgedMiddleware(context_window=4 * WINDOW, max_output_tokens=1_024)
    agent = create_agent(model(provider), [read_record], middleware=[guard])
    # (the run ends when the recursion limit is reached, or when a context left no room for
    # the reply: the middleware was told the wrong window)
    with contextlib.suppress(GraphRecursionError):
        agent.invoke({"messages": [HumanMessage("Read every record.")]}, {"recursion_limit": 61})
    rejected = [r for r in provider.requests if r.status != 200]
    assert rejected, "the provider never said too long"
    assert all(r.status == 400 for r in rejected)
    after = [
        provider.requests[r.index + 1] for r in rejected if r.index + 1 < len(provider.requests)
    ]
    assert after and all(r.status == 200 for r in after)


def test_a_store_keeps_the_thread_and_a_restart_resumes(tmp_path: Path) -> None:
    calls = {"left": 40}
    db = tmp_path / "lc.db"
    config = {"configurable": {"thread_id": "thread-1"}, "recursion_limit": 200}
    saver = InMemorySaver()
    with ProviderServer(
        context_window=WINDOW, max_output=1_024, replies=scripted(calls)
    ) as provider:

        async def run(text: str) -> AbridgedMiddleware:
            async with Store(db) as store:
                guard = middleware(store=store)
                agent = create_agent(
                    model(provider), [read_record], middleware=[guard], checkpointer=saver
                )
                await agent.ainvoke({"messages": [HumanMessage(text)]}, config)
                return guard

        async def both() -> tuple[AbridgedMiddleware, int, AbridgedMiddleware]:
            # one event loop for both (langchain-openai caches its async HTTP client per
            # process); the second run has a new middleware and a new Store on the same file,
            # as a new process would
            first = await run("Read every record.")
            count = len(provider.requests)
            calls["left"] = 15
            return first, count, await run("Read fifteen more.")

        first, count, second = asyncio.run(both())
        requests = provider.requests
    before = first.manager("thread-1")
    assert before is not None and before.state.compactions >= 1
    after = second.manager("thread-1")
    assert after is not None
    # the first call after the restart already knew the compaction (no context over budget)
    resumed = requests[count:]
    assert len(resumed) == 16 and all(r.status == 200 for r in resumed)
    assert all(validate_messages(r.messages) == [] for r in resumed)
    assert max(r.prompt_tokens for r in resumed) <= WINDOW - 1_024
    # ... because it sent the stored summary and a short tail, not the 80-odd messages held
    assert len(resumed[0].messages) < 40
    assert after.state.cut > 0
    # the model's last call saw, through the manager, every message of both runs: task, 40
    # steps, "Done.", the second task and 15 steps (the agent's state was never rewritten)
    assert len(after.history) == 1 + 2 * 40 + 1 + 1 + 2 * 15


def test_a_sync_agent_with_a_store_is_refused_clearly(
    provider: ProviderServer, tmp_path: Path
) -> None:
    async def make() -> Store:
        return Store(tmp_path / "s.db")

    store = asyncio.run(make())
    agent = create_agent(model(provider), [read_record], middleware=[middleware(store=store)])
    with pytest.raises(SettingError, match="async"):
        agent.invoke({"messages": [HumanMessage("hi")]})


def test_a_run_stopped_between_a_call_and_its_result_does_not_break_the_next(
    provider: ProviderServer,
) -> None:
    """A recursion limit stops a run after the model asked for a tool: the checkpointed state
    ends with a call and no result. The next run's request gets an error result for it in what
    is sent (the provider would refuse the history otherwise); the state is not changed."""
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 3}
    agent = create_agent(
        model(provider), [read_record], middleware=[middleware()], checkpointer=InMemorySaver()
    )
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [HumanMessage("Read one record.")]}, config)
    state = agent.get_state(config).values["messages"]
    assert (
        isinstance(state[-1], AIMessage) and state[-1].tool_calls
    )  # dangling, as LangGraph left it
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [HumanMessage("Go on.")]}, config)
    sent = provider.requests[-1]
    assert sent.status == 200 and validate_messages(sent.messages) == []
    closed = [r for m in sent.messages for r in m.tool_results if "stopped before" in r.text]
    assert len(closed) == 1  # (Chat Completions has no error flag: the text says it)
    direct = create_agent(model(provider), [read_record], checkpointer=InMemorySaver())
    with pytest.raises(GraphRecursionError):
        direct.invoke({"messages": [HumanMessage("Read one record.")]}, config)
    with pytest.raises(Exception, match="tool_call"):  # without abridged: the provider refuses
        direct.invoke({"messages": [HumanMessage("Go on.")]}, config)
