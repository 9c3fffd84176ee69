"""The public surface: ``from abridged import X`` for one name per use, resolved lazily, and
importing ``ContextManager`` loads no SQLAlchemy and no provider SDK."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import types

import pytest

import abridged
import abridged.runtime

PUBLIC = [
    "BeforeCompact",
    "BudgetSettings",
    "ChatModel",
    "CompactionBackoff",
    "CompactionCancelled",
    "CompactionEnded",
    "CompactionHooks",
    "CompactionResult",
    "CompactionSettings",
    "CompactionStarted",
    "ContextManager",
    "Conversation",
    "ConversationSettings",
    "Event",
    "ExtractiveSummarizer",
    "File",
    "HiddenPrefix",
    "Image",
    "LLMSummarizer",
    "Message",
    "Notice",
    "Opaque",
    "OverflowRecovered",
    "Prepared",
    "PruneSettings",
    "Pruned",
    "Reasoning",
    "ReasoningDelta",
    "Retrying",
    "Settings",
    "Store",
    "SummarizerFallback",
    "Text",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolFinished",
    "ToolResult",
    "ToolStarted",
    "TurnResult",
    "Usage",
    "UsageUpdated",
    "__version__",
    "assign_ids",
    "chat_model_from_string",
    "errors",
    "tool",
]

#: Packages that ``from abridged import ContextManager`` must not load.
HEAVY = ("sqlalchemy", "openai", "anthropic")


def test_all_is_pinned() -> None:
    # A change here is a change of the public API: make it on purpose, and in the README.
    assert abridged.__all__ == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves_to_its_definition(name: str) -> None:
    value = getattr(abridged, name)
    assert value is not None
    if name == "errors":
        assert isinstance(value, types.ModuleType) and value.__name__ == "abridged.errors"
    elif name in abridged._EXPORTS:
        assert value is getattr(importlib.import_module(abridged._EXPORTS[name]), name)
    assert getattr(abridged, name) is value  # cached: the same object on the next lookup


def test_from_import_works() -> None:
    from abridged import ContextManager, Conversation, Store, errors, tool  # noqa: F401

    assert issubclass(errors.ContextOverflowError, errors.AbridgedError)


def test_dir_is_the_public_surface() -> None:
    assert dir(abridged) == sorted(abridged.__all__)
    assert dir(abridged.runtime) == sorted(abridged.runtime.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = abridged.no_such_name
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = abridged.runtime.no_such_name


@pytest.mark.parametrize("name", abridged.runtime.__all__)
def test_every_runtime_name_resolves(name: str) -> None:
    assert getattr(abridged.runtime, name) is not None


def _imported_packages(statement: str) -> set[str]:
    """The top-level packages a fresh interpreter imports to run ``statement``."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    names = re.findall(r"^import time:\s*\d+ \|\s*\d+ \|\s*(\S+)", out.stderr, flags=re.MULTILINE)
    assert names, out.stderr
    return {name.split(".")[0] for name in names}


@pytest.mark.parametrize(
    "statement",
    ["from abridged import ContextManager", "from abridged.runtime import ContextManager"],
)
def test_importing_the_context_manager_loads_no_database_and_no_provider_sdk(
    statement: str,
) -> None:
    loaded = _imported_packages(statement)
    assert "abridged" in loaded
    assert not loaded & set(HEAVY)
