"""The service under test: ``abridged.server`` under a real uvicorn on loopback (in a thread of
the test process), on SQLite and PostgreSQL, with the local provider (``ProviderServer``) as
its model; two tenants with their API keys."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from abridged.server.app import create_app
from abridged.server.config import ServiceConfig
from abridged.store import Store
from abridged.testing import ProviderServer, RecordedRequest, Reply
from tests.databases import BACKENDS, Postgres, backend_param, database_url

WINDOW = 8_192
MAX_OUTPUT = 1_024
TENANTS = ("acme", "globex")


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tool_replies(steps_per_turn: int = 3, lines: int = 60) -> Callable[[RecordedRequest], Reply]:
    """A model that answers each user message with ``steps_per_turn`` tool calls (each reading a
    record of ``lines`` lines, ~10 tokens a line) and then a short text."""

    def reply(record: RecordedRequest) -> Reply:
        messages = record.messages
        results = sum(1 for m in messages if m.role == "tool" or m.tool_results)
        last = messages[-1]
        if last.role == "user" and not last.tool_results:
            return Reply("", tool_calls=[("read_record", {"key": f"k{results}", "lines": lines})])
        done = sum(1 for m in reversed(messages) if m.tool_results)
        since_user = 0
        for m in reversed(messages):
            if m.role == "user" and not m.tool_results:
                break
            if m.tool_results:
                since_user += 1
        if since_user < steps_per_turn:
            return Reply("", tool_calls=[("read_record", {"key": f"k{results}", "lines": lines})])
        return Reply(f"Done: {done} results read, {results} in context.")

    return reply


@contextmanager
def serving(config: ServiceConfig) -> Iterator[str]:
    """The service of ``config`` under uvicorn in a thread; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, name=f"uvicorn:{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the service did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


async def make_keys(url: str, tenants: tuple[str, ...] = TENANTS) -> dict[str, str]:
    """One API key per tenant."""
    store = Store(url)
    try:
        return {t: (await store.create_api_key(t))[0] for t in tenants}
    finally:
        await store.close()


@dataclass
class RunningService:
    """A service under test: its URL, the tenants' keys, its model and database."""

    base_url: str
    keys: dict[str, str]
    provider: ProviderServer
    db_url: str
    model: str
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, tenant: str | None = "acme", **kwargs: Any) -> httpx.Client:
        """An HTTP client acting for ``tenant`` (``None``: no key)."""
        headers = {"Authorization": f"Bearer {self.keys[tenant]}"} if tenant else {}
        kwargs.setdefault("base_url", self.base_url)
        made = httpx.Client(headers=headers, timeout=120, **kwargs)
        self.clients.append(made)
        return made


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """``sqlite`` or ``postgresql``: the service tests run on both."""
    return backend_param(request)


@pytest.fixture
def service_db(backend: str, tmp_path: Path, postgres: Postgres | str) -> str:
    """An empty, migrated database of the backend under test."""
    return database_url(backend, tmp_path, postgres)


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderServer]:
    """The local provider: an 8k window, 1k output, a tool-using model."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ABRIDGED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ABRIDGED_API_KEY", "test-provider-key")
    with ProviderServer(context_window=WINDOW, max_output=MAX_OUTPUT, replies=tool_replies()) as p:
        yield p


def service_config(db: str, provider: ProviderServer, **changes: Any) -> ServiceConfig:
    """The config the tests run the service with (the demo tools, the provider's model)."""
    values: dict[str, Any] = {
        "db": db,
        "models": (provider.base_url + "/v1#gpt-test",),
        "context_window": WINDOW,
        "max_output_tokens": MAX_OUTPUT,
        "tools": "abridged.testing.tools:TOOLS",
        "lease_ttl": 5.0,
    }
    values.update(changes)
    return ServiceConfig(**values)


@pytest.fixture
def service(service_db: str, provider: ProviderServer) -> Iterator[RunningService]:
    """The service on the backend under test, with two tenants."""
    keys = asyncio.run(make_keys(service_db))
    config = service_config(service_db, provider)
    with serving(config) as url:
        running = RunningService(url, keys, provider, service_db, config.models[0])
        try:
            yield running
        finally:
            for client in running.clients:
                client.close()
