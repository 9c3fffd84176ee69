"""What the framework adapters share: the store's ids of their conversations and the manager
options."""

from __future__ import annotations

import pytest

from abridged.errors import SettingError
from abridged.integrations.managers import ManagerOptions, stored_conversation_id


def test_ids_are_prefixed_and_long_keys_digested_to_what_the_store_takes() -> None:
    assert stored_conversation_id("langchain", "thread-1") == "langchain-thread-1"
    long = stored_conversation_id("agents", "k" * 200)
    assert long.startswith("agents-") and len(long) <= 64
    assert long == stored_conversation_id("agents", "k" * 200)
    assert long != stored_conversation_id("agents", "k" * 199 + "j")


def test_options_make_managers_and_are_checked() -> None:
    manager = ManagerOptions(context_window=16_384, max_output_tokens=4_096).manager("responses")
    assert manager.budget.context_window == 16_384 and manager.format == "responses"
    with pytest.raises(SettingError):
        ManagerOptions(context_window=100).manager("abridged")
