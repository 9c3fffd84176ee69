"""Fixtures of the Conversation tests (none is autouse: the other runtime tests are left alone):
a SQLite store per test and the local provider server; both clear ambient API keys and close the
SDK clients a test made (``tests.runtime.support.make_model``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from abridged.store import Store
from abridged.testing import ProviderServer
from tests.runtime.support import MODELS


@pytest.fixture
async def runtime_env(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """No API key or base URL from the environment; the test's SDK clients closed after it."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ABRIDGED_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    yield
    while MODELS:
        client = getattr(MODELS.pop(), "_client", None)
        close = getattr(client, "close", None)
        if callable(close):
            await close()


@pytest.fixture
async def store(tmp_path: Path, runtime_env: None) -> AsyncIterator[Store]:
    """An open SQLite store in a file of its own."""
    s = Store(f"sqlite+aiosqlite:///{tmp_path / 'runtime.db'}")
    await s.open()
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def server(runtime_env: None) -> Iterator[ProviderServer]:
    """The local provider: a 16k window, 4k output, every reply a short text unless scripted."""
    with ProviderServer(context_window=16_384, max_output=4_096) as s:
        yield s
