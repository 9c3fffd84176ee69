"""Retries in one place: a persistent 429 reaches the local provider exactly as many times as
README says (``max_retries`` + 1 for a turn's call, the summary's call likewise), through the
official SDKs over real HTTP with the adapters' defaults (the SDK's own retries off), for a
model made directly and for one made as the service and the CLI make theirs (a model string,
the SDK's aiohttp client)."""

from __future__ import annotations

from typing import Any

import pytest

from abridged.core.protocols import ChatModel
from abridged.errors import ProviderError
from abridged.providers.anthropic import AnthropicChatModel
from abridged.providers.openai import OpenAIChatModel
from abridged.providers.select import chat_model_from_string
from abridged.runtime import ContextManager, Conversation, ConversationSettings, Retrying
from abridged.store import Store
from abridged.testing import ProviderServer, RecordedRequest, Reply
from tests.runtime.support import ADAPTERS, ANTHROPIC_KEY, MODELS, OPENAI_KEY


def default_model(kind: str, server: ProviderServer, *, made: str = "adapter") -> ChatModel:
    """A model of the official SDK ``kind`` with the adapter's default retries: made by its
    adapter's class, or (``made="string"``) from a model string with the aiohttp client, as
    ``abridged.server.app.service_model`` and the CLI make theirs."""
    model: ChatModel
    if made == "string":
        spec, base, key = {
            "openai": ("openai/gpt-test", server.base_url + "/v1", OPENAI_KEY),
            "anthropic": ("anthropic/claude-test", server.base_url, ANTHROPIC_KEY),
        }[kind]
        model = chat_model_from_string(spec, base_url=base, api_key=key, http_client="aiohttp")
    elif kind == "openai":
        model = OpenAIChatModel("gpt-test", base_url=server.base_url + "/v1", api_key=OPENAI_KEY)
    else:
        model = AnthropicChatModel("claude-test", base_url=server.base_url, api_key=ANTHROPIC_KEY)
    MODELS.append(model)
    return model


def rate_limited(request: RecordedRequest) -> Reply:
    return Reply(error=(429, {"error": {"message": "slow down", "type": "rate_limit_error"}}))


@pytest.mark.parametrize("made", ["adapter", "string"])
@pytest.mark.parametrize("kind", ADAPTERS)
@pytest.mark.parametrize("retries", [0, 2])
async def test_persistent_429_is_tried_max_retries_plus_one_times(
    store: Store, server: ProviderServer, kind: str, retries: int, made: str
) -> None:
    server.set_replies(rate_limited)
    settings = ConversationSettings(max_retries=retries, retry_delay=0)
    seen: list[Any] = []
    convo = await Conversation.open(
        store,
        default_model(kind, server, made=made),
        settings=settings,
        on_event=seen.append,
        context_window=16_384,
        max_output_tokens=4_096,
    )
    with pytest.raises(ProviderError) as caught:
        await convo.send("hello")
    assert caught.value.context.get("status") == 429
    assert len(server.requests) == retries + 1
    assert len([e for e in seen if isinstance(e, Retrying)]) == retries
    await convo.close()


@pytest.mark.parametrize("kind", ADAPTERS)
async def test_summary_call_is_tried_three_times_then_falls_back(
    server: ProviderServer, kind: str
) -> None:
    """A summarizer model answering 429 is asked ``1 + 2`` times (the runtime's default), then
    the extractive summary stands in: the compaction still happens."""
    server.set_replies(rate_limited)
    model = default_model(kind, server)
    cm = ContextManager(context_window=16_384, max_output_tokens=4_096, summarizer=model)
    cm._summarizer.retry_delay = 0  # the default retries, without their waits (a test)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Start the migration."}]
    for i in range(40):
        history.append({"role": "assistant", "content": f"Step {i}: " + "done and noted. " * 40})
        history.append({"role": "user", "content": f"Go on with part {i}."})
    ctx = await cm.acompact(messages=history)
    assert ctx.state.summary is not None
    assert len(server.requests) == 3


async def test_changed_settings_reach_the_summary_calls(
    store: Store, server: ProviderServer
) -> None:
    """``update_settings(max_retries=...)`` applies to the summarizer's calls too: one layer,
    one setting."""
    server.set_replies(rate_limited)
    convo = await Conversation.open(
        store,
        default_model("openai", server),
        settings=ConversationSettings(max_retries=2, retry_delay=0),
        context_window=16_384,
        max_output_tokens=4_096,
    )
    convo.update_settings(max_retries=0)
    summarizer = convo._summarizers(convo.budget())
    model = getattr(summarizer, "model", None)
    assert model is not None and model.retries == 0
    await convo.close()


@pytest.mark.parametrize("kind", ADAPTERS)
@pytest.mark.parametrize(
    ("headers", "waits"),
    [
        ({"retry-after": "7"}, [7.0, 7.0]),
        ({"retry-after-ms": "1500"}, [1.5, 1.5]),
        ({"retry-after": "3600"}, [0.5, 1.0]),  # beyond MAX_RETRY_AFTER: the backoff
        ({}, [0.5, 1.0]),
    ],
)
async def test_retry_after_of_the_provider_is_the_wait(
    server: ProviderServer, kind: str, headers: dict[str, str], waits: list[float]
) -> None:
    """A 429 carrying ``Retry-After`` (seconds, or OpenAI's ``retry-after-ms``) is retried after
    the wait it asks for, read from the real SDK's response over HTTP; without one (or one too
    long), the backoff ``retry_delay * 2**n``. The waits are recorded, not slept."""
    from abridged.core.model import Message
    from abridged.runtime.recovery import with_retries

    server.set_replies(
        lambda _request: Reply(
            error=(429, {"error": {"message": "slow down", "type": "rate_limit_error"}}),
            headers=headers,
        )
    )
    model = default_model(kind, server)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    with pytest.raises(ProviderError) as caught:
        await with_retries(
            lambda: model.complete([Message.user("hello")]), retries=2, delay=0.5, sleep=sleep
        )
    assert caught.value.context.get("status") == 429
    assert slept == waits
    assert len(server.requests) == 3
