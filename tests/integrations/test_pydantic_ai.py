"""The pydantic-ai capability with pydantic-ai's real ``Agent`` and ``OpenAIChatModel`` over HTTP to
the local provider (8k window, real overflow and pairing checks): long tool-using runs fit, the
run's history keeps every message, an overflow is recovered once, a restart resumes from the
store; and the message conversion both ways."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RequestUsage

from abridged.core.validate import validate_messages
from abridged.integrations.pydantic_ai import (
    AbridgedCapability,
    message_to_pydantic_ai,
    messages_from_pydantic_ai,
)
from abridged.store import Store
from abridged.testing import ProviderServer
from tests.integrations.support import WINDOW, record_text

KEY = "sk-pydantic-ai-test-0123456789abcdef"


def read_record(key: str) -> str:
    """Read a record (about 600 tokens)."""
    return record_text(key)


def agent(provider: ProviderServer, *capabilities: Any) -> Agent[None, str]:
    model = OpenAIChatModel(
        "gpt-test", provider=OpenAIProvider(base_url=provider.base_url + "/v1", api_key=KEY)
    )
    made: Agent[None, str] = Agent(
        model,
        instructions="You are an agent.",
        tools=[read_record],
        capabilities=list(capabilities),
        retries=0,
    )
    return made


def capability(**kwargs: Any) -> AbridgedCapability:
    return AbridgedCapability(context_window=WINDOW, max_output_tokens=1_024, **kwargs)


def test_messages_convert_both_ways() -> None:
    request = ModelRequest(
        parts=[
            SystemPromptPart("be brief"),
            UserPromptPart("read a"),
        ]
    )
    response = ModelResponse(
        parts=[TextPart("reading"), ToolCallPart("read_record", {"key": "a"}, "c1")],
        usage=RequestUsage(input_tokens=100, output_tokens=7, cache_read_tokens=64),
    )
    returned = ModelRequest(parts=[ToolReturnPart("read_record", "contents", "c1")])
    core = [m for msg in (request, response, returned) for m in messages_from_pydantic_ai(msg)]
    assert [m.role for m in core] == ["system", "user", "assistant", "tool"]
    assert core[2].tool_calls[0].parsed_arguments() == {"key": "a"}
    assert core[2].usage is not None and core[2].usage.cache_read == 64
    assert core[2].usage.input == 36
    assert core[3].tool_results[0].text == "contents"
    back = message_to_pydantic_ai(core[2])
    assert isinstance(back, ModelResponse) and back.parts[1].args_as_dict() == {"key": "a"}


def test_a_long_tool_run_fits_and_the_history_keeps_every_message(
    provider: ProviderServer,
) -> None:
    guard = capability()
    result = agent(provider, guard).run_sync("Read every record.")
    assert result.output == "Done."
    requests = provider.requests
    assert len(requests) == 41
    assert all(r.status == 200 and r.error is None for r in requests)
    assert all(validate_messages(r.messages) == [] for r in requests)
    assert max(r.prompt_tokens for r in requests) <= WINDOW - 1_024
    manager = guard.manager()
    assert manager is not None and manager.state.compactions >= 1
    # the run's own history was never rewritten: 1 request, 40 calls and returns, the answer
    assert len(result.all_messages()) == 1 + 2 * 40 + 1
    returns = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(returns) == 40 and all(p.content.startswith("record ") for p in returns)


def test_the_same_run_without_it_overflows(provider: ProviderServer) -> None:
    with pytest.raises(ModelHTTPError, match="maximum context length"):
        agent(provider).run_sync("Read every record.")


def test_an_overflow_is_recovered_once(provider: ProviderServer) -> None:
    # told a window 4x larger than the provider's: the provider says "too long", the
    # emergency path runs and the request is made again
    guard = AbridgedCapability(context_window=4 * WINDOW, max_output_tokens=1_024)
    result = agent(provider, guard).run_sync("Read every record.")
    assert result.output == "Done."
    rejected = [r for r in provider.requests if r.status != 200]
    assert rejected and all(r.status == 400 for r in rejected)
    for r in rejected:
        assert provider.requests[r.index + 1].status == 200


def test_a_store_keeps_the_conversation_and_a_restart_resumes(
    provider: ProviderServer, calls: dict[str, int], tmp_path: Path
) -> None:
    db = tmp_path / "pa.db"

    async def run(prompt: str, history: Any) -> tuple[AbridgedCapability, Any]:
        async with Store(db) as store:
            guard = capability(store=store)
            result = await agent(provider, guard).run(
                prompt, message_history=history, conversation_id="conv-1"
            )
            return guard, result

    async def both() -> tuple[AbridgedCapability, int, AbridgedCapability, Any]:
        first, result = await run("Read every record.", None)
        count = len(provider.requests)
        calls["left"] = 15
        second, again = await run("Read fifteen more.", result.all_messages())
        return first, count, second, again

    first, count, second, again = asyncio.run(both())
    before = first.manager("conv-1")
    assert before is not None and before.state.compactions >= 1
    after = second.manager("conv-1")
    assert after is not None and after.state.cut > 0
    resumed = provider.requests[count:]
    assert len(resumed) == 16 and all(r.status == 200 for r in resumed)
    assert all(validate_messages(r.messages) == [] for r in resumed)
    assert max(r.prompt_tokens for r in resumed) <= WINDOW - 1_024
    assert len(resumed[0].messages) < 40  # the stored summary and a short tail
    assert len(again.all_messages()) == (1 + 2 * 40 + 1) + (1 + 2 * 15 + 1)
