"""The OpenAI Agents SDK adapters with the SDK's real ``Runner`` and ``OpenAIResponsesModel`` over
HTTP to the local provider (8k window, real overflow and pairing checks): the session keeps every
item in abridged's store (popped and cleared ones too), the input filter keeps every call inside
the window, a restarted process resumes the session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import openai
import pytest
from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool
from agents.tracing import set_tracing_disabled

from abridged.core.validate import validate_messages
from abridged.integrations.openai_agents import AbridgedInputFilter, AbridgedSession
from abridged.store import Store
from abridged.testing import ProviderServer
from tests.integrations.support import WINDOW, record_text

KEY = "sk-agents-test-0123456789abcdef"
set_tracing_disabled(True)  # the SDK would otherwise export traces to OpenAI


@function_tool
def read_record(key: str) -> str:
    """Read a record (about 600 tokens)."""
    return record_text(key)


def make_agent(provider: ProviderServer) -> Agent[Any]:
    client = openai.AsyncOpenAI(base_url=provider.base_url + "/v1", api_key=KEY, max_retries=0)
    model = OpenAIResponsesModel(model="gpt-test", openai_client=client)
    return Agent(name="reader", instructions="You are an agent.", model=model, tools=[read_record])


def config(guard: AbridgedInputFilter | None = None) -> RunConfig:
    if guard is None:
        guard = AbridgedInputFilter(context_window=WINDOW, max_output_tokens=1_024)
    return RunConfig(call_model_input_filter=guard, tracing_disabled=True)


def test_the_session_keeps_items_exactly_and_deletes_nothing(tmp_path: Path) -> None:
    items = [
        {"role": "user", "content": "hi"},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "read_record",
            "arguments": '{"key": "a"}',
            "id": "fc_1",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "c1", "output": "contents"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
    ]

    async def run() -> None:
        async with Store(tmp_path / "s.db") as store:
            session = AbridgedSession("user-1", store)
            assert await session.get_items() == []
            await session.add_items(items)
            assert await session.get_items() == items
            assert await session.get_items(limit=2) == items[-2:]
            assert await session.pop_item() == items[-1]
            assert await session.get_items() == items[:-1]
            await session.clear_session()
            assert await session.get_items() == []
            await session.add_items([{"role": "user", "content": "again"}])
            # a restarted process reads the same session
            again = AbridgedSession("user-1", store)
            assert await again.get_items() == [{"role": "user", "content": "again"}]
            # nothing was deleted: every item, the popped one's two versions, both sessions
            stored = await store.stored_messages(again.conversation_id, all_versions=True)
            assert len(stored) == len(items) + 1 + 1
            assert len(await store.list_sessions(again.conversation_id)) == 2

    asyncio.run(run())


def test_a_long_run_fits_and_the_session_keeps_every_item(
    provider: ProviderServer, tmp_path: Path
) -> None:
    guard = AbridgedInputFilter(context_window=WINDOW, max_output_tokens=1_024)

    async def run() -> list[Any]:
        async with Store(tmp_path / "a.db") as store:
            session = AbridgedSession("run-1", store)
            result = await Runner.run(
                make_agent(provider),
                "Read every record.",
                session=session,
                run_config=config(guard),
                max_turns=100,
            )
            assert result.final_output == "Done."
            return await session.get_items()

    items = asyncio.run(run())
    requests = provider.requests
    assert len(requests) == 41
    assert all(r.status == 200 and r.error is None for r in requests)
    assert all(validate_messages(r.messages) == [] for r in requests)
    assert max(r.prompt_tokens for r in requests) <= WINDOW - 1_024
    calls = [i for i in items if i.get("type") == "function_call"]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert len(calls) == len(outputs) == 40  # the session holds every item
    # the same call as the other integrations' guards: manager() is the one that compacted
    assert guard.manager().state.compactions >= 1


def test_the_same_run_without_the_filter_overflows(provider: ProviderServer) -> None:
    with pytest.raises(openai.BadRequestError, match="context window"):
        asyncio.run(
            Runner.run(
                make_agent(provider),
                "Read every record.",
                run_config=RunConfig(tracing_disabled=True),
                max_turns=100,
            )
        )


def test_a_restarted_process_resumes_the_session(
    provider: ProviderServer, calls: dict[str, int], tmp_path: Path
) -> None:
    db = tmp_path / "r.db"

    async def run(prompt: str) -> None:
        async with Store(db) as store:
            await Runner.run(
                make_agent(provider),
                prompt,
                session=AbridgedSession("run-2", store),
                run_config=config(),  # a new filter: a new process knows nothing yet
                max_turns=100,
            )

    asyncio.run(run("Read every record."))
    count = len(provider.requests)
    calls["left"] = 15
    asyncio.run(run("Read fifteen more."))
    resumed = provider.requests[count:]
    assert len(resumed) == 16 and all(r.status == 200 for r in resumed)
    assert all(validate_messages(r.messages) == [] for r in resumed)
    assert max(r.prompt_tokens for r in resumed) <= WINDOW - 1_024
    # the first call after the restart saw the whole stored history and compacted it
    assert len(resumed[0].messages) < 40
