"""Tests for abridged.providers.litellm: the clear error without LiteLLM, and the adapter's logic
against a stand-in ``litellm`` module (LiteLLM itself is an optional extra, not installed here)."""

from __future__ import annotations

import sys
import types
from collections.abc import AsyncIterator
from typing import Any

import pytest

from abridged.core.model import Message
from abridged.core.protocols import Completion, TextDelta, ToolCallDelta, ToolSpec
from abridged.errors import ContextOverflowError, ProviderError
from abridged.providers.litellm import LiteLLMChatModel

KEY = "gm-SECRETSECRETSECRET-0123456789"


def test_without_litellm_construction_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)  # import litellm -> ImportError
    with pytest.raises(ProviderError) as caught:
        LiteLLMChatModel("gemini/gemini-2.5-pro", api_key=KEY)
    assert "pip install 'abridged[litellm]'" in str(caught.value)
    assert KEY not in str(caught.value)


class _Chunk:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self) -> dict[str, Any]:
        return self.data


class ContextWindowExceededError(Exception):
    """Shaped like litellm's: a status code, a message naming the provider's words."""

    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


ContextWindowExceededError.__module__ = "litellm.exceptions"


def _fake_litellm(chunks: list[dict[str, Any]], calls: list[dict[str, Any]]) -> types.ModuleType:
    module = types.ModuleType("litellm")

    async def acompletion(**kwargs: Any) -> AsyncIterator[_Chunk]:
        calls.append(kwargs)
        if kwargs["messages"][-1]["content"] == "overflow":
            raise ContextWindowExceededError(
                "litellm.ContextWindowExceededError: GeminiException - The input token count "
                "(1200293) exceeds the maximum number of tokens allowed (1048576)."
            )

        async def gen() -> AsyncIterator[_Chunk]:
            for c in chunks:
                yield _Chunk(c)

        return gen()

    module.acompletion = acompletion  # type: ignore[attr-defined]
    return module


async def test_the_adapter_streams_through_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks: list[dict[str, Any]] = [
        {
            "id": "x",
            "model": "gemini-2.5-pro",
            "choices": [{"index": 0, "delta": {"content": "Hi"}}],
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "function": {"name": "read", "arguments": '{"p": 1}'},
                            }
                        ]
                    },
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 50,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 32},
            },
        },
    ]
    calls: list[dict[str, Any]] = []
    monkeypatch.setitem(sys.modules, "litellm", _fake_litellm(chunks, calls))
    model = LiteLLMChatModel("gemini/gemini-2.5-pro", api_key=KEY, temperature=0)
    assert KEY not in repr(model)
    events = [
        e
        async for e in model.stream(
            [Message.user("hi")], tools=[ToolSpec("read")], max_output_tokens=99
        )
    ]
    assert events[0] == TextDelta("Hi")
    assert isinstance(events[1], ToolCallDelta) and events[1].name == "read"
    completion = events[-1]
    assert isinstance(completion, Completion)
    assert completion.finish_reason == "tool_calls"
    assert completion.message.tool_calls[0].arguments == '{"p": 1}'
    assert completion.usage is not None
    assert (completion.usage.input, completion.usage.cache_read) == (18, 32)
    assert "timing" in completion.message.meta
    sent = calls[0]
    assert sent["api_key"] == KEY and sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    assert sent["max_tokens"] == 99 and sent["temperature"] == 0
    assert sent["tools"][0]["function"]["name"] == "read"


async def test_litellm_context_window_error_is_an_overflow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", _fake_litellm([], []))
    model = LiteLLMChatModel("gemini/gemini-2.5-pro", api_key=KEY)
    with pytest.raises(ContextOverflowError) as caught:
        await model.complete([Message.user("overflow")])
    assert (caught.value.tokens, caught.value.limit) == (1200293, 1048576)
    assert caught.value.context["provider"] == "litellm"
