"""The framework tests' local provider: an 8k window that answers with tool calls while a
budget of calls lasts, then with a final answer (``tests.integrations.support``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from abridged.testing import ProviderServer
from tests.integrations.support import WINDOW, scripted


@pytest.fixture
def calls() -> dict[str, int]:
    """The tool calls the provider makes before it answers (set it again for a second run)."""
    return {"left": 40}


@pytest.fixture
def provider(calls: dict[str, int]) -> Iterator[ProviderServer]:
    with ProviderServer(context_window=WINDOW, max_output=1_024, replies=scripted(calls)) as s:
        yield s
