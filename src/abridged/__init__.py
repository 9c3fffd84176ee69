"""abridged: keep long LLM conversations and agent sessions inside the model's context window.

Everything a user needs is importable from here, one name per use::

    from abridged import ContextManager        # your own agent loop: the context to send
    from abridged import Conversation, Store   # a durable chat with a tool-calling agent loop
    from abridged import chat_model_from_string, tool, errors

- messages: ``Message`` and its parts (``Text``, ``Reasoning``, ``ToolCall``, ``ToolResult``,
  ``Image``, ``File``), ``Usage``, ``assign_ids``;
- your own loop: ``ContextManager`` (its ``prepare`` returns a ``Prepared``);
- a durable chat: ``Conversation`` with ``ConversationSettings``, a ``Store`` (``Store(url)``
  opens SQLite or PostgreSQL, creating the schema on first use), tools (``@tool``, ``Tool``) and a
  ``ChatModel`` (``chat_model_from_string("openai/gpt-4.1")``);
- settings: ``Settings`` (every compaction knob, flat: ``ContextManager(model, **knobs)``), and
  the engine's forms ``BudgetSettings`` (window shares, switches), ``CompactionSettings``
  (pruning, pins, backoff), ``PruneSettings``;
- hooks: ``CompactionHooks`` (``before_compact`` returns a ``BeforeCompact``, ``after_compact``
  gets a ``CompactionResult``, ``on_event`` gets each ``Event``);
- summarizers: ``ExtractiveSummarizer`` (default, no model), ``LLMSummarizer``;
- events: the engine's (``CompactionStarted``, ``CompactionEnded``, ``Pruned``...; ``Event`` is
  their union), a conversation's (``Notice``, ``Retrying``, ``ToolStarted``, ``ToolFinished``,
  ``TurnResult``) and the stream's deltas (``TextDelta``, ``ReasoningDelta``, ``ToolCallDelta``);
- ``errors``: every error abridged raises derives from ``errors.AbridgedError``.

Layers, each importing only from those below it (``tests/test_layers.py`` enforces this): core
(pure types and functions), engine (pure decisions), edges (``formats``, ``providers``,
``store``), runtime, surfaces (``cli``).

Names are resolved on first use, so importing ``ContextManager`` loads no SQLAlchemy and no
provider SDK.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# The library's log (``abridged.runtime.tracing``) is silent until the application listens.
logging.getLogger("abridged").addHandler(logging.NullHandler())

_EXPORTS: dict[str, str] = {
    # messages
    "File": "abridged.core.model",
    "Image": "abridged.core.model",
    "Message": "abridged.core.model",
    "Reasoning": "abridged.core.model",
    "Opaque": "abridged.core.model",
    "Text": "abridged.core.model",
    "ToolCall": "abridged.core.model",
    "ToolResult": "abridged.core.model",
    "Usage": "abridged.core.model",
    "assign_ids": "abridged.core.model",
    # your own loop
    "ContextManager": "abridged.runtime.context_manager",
    "Prepared": "abridged.runtime.context_manager",
    # a durable chat
    "Conversation": "abridged.runtime.conversation",
    "ConversationSettings": "abridged.runtime.settings",
    "Settings": "abridged.runtime.settings",
    "Store": "abridged.store",
    "Tool": "abridged.runtime.tools",
    "tool": "abridged.runtime.tools",
    "ChatModel": "abridged.core.protocols",
    "chat_model_from_string": "abridged.providers.select",
    # settings
    "BudgetSettings": "abridged.core.budget",
    "CompactionSettings": "abridged.engine.compaction_settings",
    "PruneSettings": "abridged.engine.prune",
    # hooks
    "BeforeCompact": "abridged.engine.compaction",
    "CompactionHooks": "abridged.engine.compaction",
    "CompactionResult": "abridged.engine.compaction",
    # summarizers
    "ExtractiveSummarizer": "abridged.engine.summarize.extractive",
    "LLMSummarizer": "abridged.engine.summarize.llm",
    # events
    "CompactionBackoff": "abridged.events.engine",
    "CompactionCancelled": "abridged.events.engine",
    "CompactionEnded": "abridged.events.engine",
    "CompactionStarted": "abridged.events.engine",
    "Event": "abridged.events.engine",
    "HiddenPrefix": "abridged.events.engine",
    "OverflowRecovered": "abridged.events.engine",
    "Pruned": "abridged.events.engine",
    "SummarizerFallback": "abridged.events.engine",
    "UsageUpdated": "abridged.events.engine",
    "Notice": "abridged.events.runtime",
    "Retrying": "abridged.events.runtime",
    "ToolFinished": "abridged.events.runtime",
    "ToolStarted": "abridged.events.runtime",
    "TurnResult": "abridged.events.runtime",
    "ReasoningDelta": "abridged.core.protocols",
    "TextDelta": "abridged.core.protocols",
    "ToolCallDelta": "abridged.core.protocols",
}

#: Modules exported whole.
_MODULES: dict[str, str] = {"errors": "abridged.errors"}

if TYPE_CHECKING:
    from abridged import errors
    from abridged.core.budget import BudgetSettings
    from abridged.core.model import (
        File,
        Image,
        Message,
        Opaque,
        Reasoning,
        Text,
        ToolCall,
        ToolResult,
        Usage,
        assign_ids,
    )
    from abridged.core.protocols import ChatModel, ReasoningDelta, TextDelta, ToolCallDelta
    from abridged.engine.compaction import BeforeCompact, CompactionHooks, CompactionResult
    from abridged.engine.compaction_settings import CompactionSettings
    from abridged.engine.prune import PruneSettings
    from abridged.engine.summarize.extractive import ExtractiveSummarizer
    from abridged.engine.summarize.llm import LLMSummarizer
    from abridged.events.engine import (
        CompactionBackoff,
        CompactionCancelled,
        CompactionEnded,
        CompactionStarted,
        Event,
        HiddenPrefix,
        OverflowRecovered,
        Pruned,
        SummarizerFallback,
        UsageUpdated,
    )
    from abridged.events.runtime import Notice, Retrying, ToolFinished, ToolStarted, TurnResult
    from abridged.providers.select import chat_model_from_string
    from abridged.runtime.context_manager import ContextManager, Prepared
    from abridged.runtime.conversation import Conversation
    from abridged.runtime.settings import ConversationSettings, Settings
    from abridged.runtime.tools import Tool, tool
    from abridged.store import Store

__all__ = [
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


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value: Any = importlib.import_module(_MODULES[name])
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'abridged' has no attribute {name!r}")
    globals()[name] = value  # resolved once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
