"""Helpers of the Conversation tests: models on both official SDKs talking to the local
provider server over real HTTP, request inspection, summarizers that wait or record.

The fixtures themselves (``store``, ``server``) are in ``conftest.py``; they are not autouse, so
the other runtime tests of this directory are not touched by them."""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from abridged.core.model import Message
from abridged.core.protocols import ChatModel, Summary, SummaryRequest
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.providers.anthropic import AnthropicChatModel
from abridged.providers.openai import OpenAIChatModel
from abridged.testing import ProviderServer, RecordedRequest

OPENAI_KEY = "sk-test-runtime-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-runtime-0123456789abcdef"
ADAPTERS = ["openai", "anthropic"]
#: Seconds a test waits for what must happen before it calls it a hang: a guard, never a
#: speed bound (a worker process's first SDK call, which imports its resources, took more
#: than 5 s on a loaded machine).
HANG_GUARD = 60.0


MODELS: list[Any] = []
"""Models made by ``make_model``, whose SDK clients the fixtures close after each test."""


def make_model(kind: str, server: ProviderServer, **kwargs: Any) -> ChatModel:
    """A model of the official SDK ``kind`` (``openai`` or ``anthropic``) on the server."""
    kwargs.setdefault("max_retries", 0)
    model: ChatModel
    if kind == "openai":
        model = OpenAIChatModel(
            "gpt-test", base_url=server.base_url + "/v1", api_key=OPENAI_KEY, **kwargs
        )
    else:
        model = AnthropicChatModel(
            "claude-test", base_url=server.base_url, api_key=ANTHROPIC_KEY, **kwargs
        )
    MODELS.append(model)
    return model


def agent_requests(server: ProviderServer) -> list[RecordedRequest]:
    """The message requests the server answered (token counts left out)."""
    return [r for r in server.requests if r.api != "anthropic-count"]


def wire_messages(request: RecordedRequest) -> list[Any]:
    """The request's messages as sent, without Anthropic's ``cache_control`` keys (the only
    bytes that move between two calls of one prefix)."""
    body = copy.deepcopy(request.body)
    messages = body.get("messages") or body.get("input") or []
    _strip(messages)
    return list(messages)


def wire_prefix(request: RecordedRequest) -> str:
    """Everything of a request before its messages (system, tools, model), as JSON."""
    body = copy.deepcopy(request.body)
    system = body.get("system")
    _strip(system)
    return json.dumps(
        {"system": system, "tools": body.get("tools"), "model": body.get("model")},
        sort_keys=True,
    )


def _strip(value: Any) -> None:
    if isinstance(value, dict):
        value.pop("cache_control", None)
        for item in value.values():
            _strip(item)
    elif isinstance(value, list):
        for item in value:
            _strip(item)


def texts_sent(request: RecordedRequest) -> list[str]:
    """The text of every core message of a request, in order."""
    return [m.text for m in request.messages]


def request_text(request: RecordedRequest) -> str:
    """The whole request body as JSON text (to look for a string anywhere in it)."""
    return json.dumps(request.body, ensure_ascii=False)


class SlowSummarizer:
    """A summarizer that waits for ``release`` (or ``delay`` seconds) before summarizing."""

    def __init__(self, delay: float | None = None) -> None:
        self.delay = delay
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.requests: list[SummaryRequest] = []
        self.inner = ExtractiveSummarizer()

    @property
    def name(self) -> str:
        return "slow"

    async def summarize(self, request: SummaryRequest) -> Summary:
        self.requests.append(request)
        self.started.set()
        if self.delay is not None:
            await asyncio.sleep(self.delay)
        else:
            await self.release.wait()
        return await self.inner.summarize(request)


class RecordingSummarizer:
    """The extractive summarizer, recording each request."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []
        self.inner = ExtractiveSummarizer()

    @property
    def name(self) -> str:
        return "recording"

    async def summarize(self, request: SummaryRequest) -> Summary:
        self.requests.append(request)
        return await self.inner.summarize(request)


def is_summary_request(request: RecordedRequest) -> bool:
    """Whether the request is an LLM summarizer's (not the agent's)."""
    text = request_text(request)
    return "<conversation>" in text or "## User intent and requests" in text


def last_user_text(messages: Sequence[Message]) -> str:
    """The text of the last user message of a request."""
    for message in reversed(messages):
        if message.role == "user" and message.text:
            return message.text
    return ""


ReplyFunction = Callable[[RecordedRequest], Any]


class HeldReplies:
    """Replies that wait for the test: the first ``held`` requests block until ``release()``,
    so a test sees a turn in flight for as long as it needs, on any machine, instead of
    outrunning a ``latency``. Set it with ``server.set_replies(held)``.

    The reply runs under the provider server's lock: while a request is held, do not read
    ``server.requests`` (wait on ``started`` instead)."""

    def __init__(self, replies: Sequence[str], held: int = 1) -> None:
        self.replies = list(replies)
        self.held = held
        self.started = threading.Event()
        self._released = threading.Event()
        self._count = 0

    def release(self) -> None:
        self._released.set()

    async def wait_started(self) -> None:
        """Until the first held request has reached the server."""
        async with asyncio.timeout(HANG_GUARD):
            while not self.started.is_set():
                await asyncio.sleep(0.005)

    def __call__(self, request: RecordedRequest) -> str:
        index = self._count
        self._count += 1
        if index < self.held:
            self.started.set()
            if not self._released.wait(HANG_GUARD):
                raise TimeoutError("the test never released the held reply")
        return self.replies[index] if index < len(self.replies) else f"reply {index + 1}"
