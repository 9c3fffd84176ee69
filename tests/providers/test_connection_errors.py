"""A provider that refuses connections is ``ProviderConnectionError`` with the system's words
(through the official SDKs, over httpx and over aiohttp, against a closed port on loopback);
the runtime's retries keep it so; a real timeout stays a timeout."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from abridged.core.model import Message
from abridged.errors import ProviderConnectionError, ProviderError
from abridged.providers.anthropic import AnthropicChatModel
from abridged.providers.openai import OpenAIChatModel
from abridged.providers.overflow import error_from_exception
from abridged.runtime.recovery import with_retries


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _models(port: int, http_client: str | None) -> list[OpenAIChatModel | AnthropicChatModel]:
    return [
        OpenAIChatModel(
            "gpt-test",
            base_url=f"http://127.0.0.1:{port}/v1",
            api_key="sk-test-key-0123456789",
            max_retries=1,
            http_client=http_client,
        ),
        AnthropicChatModel(
            "claude-test",
            base_url=f"http://127.0.0.1:{port}",
            api_key="sk-ant-test-key-0123456789",
            max_retries=1,
            http_client=http_client,
        ),
    ]


@pytest.mark.parametrize("http_client", [None, "aiohttp"])
async def test_a_refused_connection_is_a_connection_error_not_a_timeout(
    http_client: str | None,
) -> None:
    for model in _models(_closed_port(), http_client):
        try:
            with pytest.raises(ProviderConnectionError) as caught:
                await model.complete([Message.user("hi")])
        finally:
            await model.aclose()
        error = caught.value
        assert "ConnectionRefusedError" in error.cause, error
        assert not error.context.get("timeout") and "timed out" not in str(error)
        assert error.context["retryable"] is True
        assert "sk-" not in str(error)


async def test_the_runtimes_retries_keep_the_cause() -> None:
    model = _models(_closed_port(), "aiohttp")[0]
    retried: list[str] = []
    try:
        with pytest.raises(ProviderConnectionError) as caught:
            await with_retries(
                lambda: model.complete([Message.user("hi")]),
                retries=2,
                delay=0.01,
                on_retry=lambda r: retried.append(str(r)),
            )
    finally:
        await model.aclose()
    assert len(retried) == 2
    assert "timed out" not in str(caught.value) + "".join(retried)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A server that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        yield int(server.getsockname()[1])
    finally:
        server.close()


async def test_a_real_timeout_stays_a_timeout(silent_port: int) -> None:
    model = OpenAIChatModel(
        "gpt-test",
        base_url=f"http://127.0.0.1:{silent_port}/v1",
        api_key="sk-test",
        max_retries=0,
        timeout=0.5,
    )
    try:
        with pytest.raises(ProviderError) as caught:
            await model.complete([Message.user("hi")])
    finally:
        await model.aclose()
    assert not isinstance(caught.value, ProviderConnectionError)
    assert caught.value.context.get("timeout") is True


def test_litellms_connection_error_without_a_chained_cause() -> None:
    """LiteLLM is not installed here: an exception of its shape (a class named
    ``APIConnectionError`` in its module, nothing chained) stands in for it."""
    fake = type("APIConnectionError", (Exception,), {"__module__": "litellm.exceptions"})
    mapped = error_from_exception(
        fake("litellm.APIConnectionError: Connection refused sk-abcdef0123456789"),
        provider="litellm",
        secrets=(),
    )
    assert isinstance(mapped, ProviderConnectionError)
    assert "Connection refused" in mapped.cause and "sk-abc" not in str(mapped)


def test_a_refused_connection_inside_a_timeout_is_found() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except ConnectionRefusedError as inner:
            raise TimeoutError("Request timed out.") from inner
    except TimeoutError as outer:
        error = outer
    fake = type("APITimeoutError", (Exception,), {"__module__": "openai"})
    wrapped = fake("Request timed out.")
    wrapped.__cause__ = error
    mapped = error_from_exception(wrapped, provider="p", timeout=600)
    assert isinstance(mapped, ProviderConnectionError) and "600" not in str(mapped)
