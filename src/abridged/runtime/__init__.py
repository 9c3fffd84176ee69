"""The runtime: wires the engine to the caller's loop (ContextManager), stores and providers.

Names are resolved on first use, so ``from abridged.runtime import ContextManager`` does not load
the ``Conversation`` runtime and its store (SQLAlchemy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "ContextManager": "abridged.runtime.context_manager",
    "Prepared": "abridged.runtime.context_manager",
    "ReplayStep": "abridged.runtime.context_manager",
    "Settings": "abridged.runtime.settings",
    # The Conversation runtime (agent loop, commands, recovery, tools, sub-agents).
    "Status": "abridged.runtime.commands",
    "CallRecord": "abridged.runtime.conversation",
    "Conversation": "abridged.runtime.conversation",
    "ConversationSettings": "abridged.runtime.conversation",
    "Notice": "abridged.events.runtime",
    "Retrying": "abridged.events.runtime",
    "ToolFinished": "abridged.events.runtime",
    "ToolStarted": "abridged.events.runtime",
    "TurnResult": "abridged.events.runtime",
    "subagent_tool": "abridged.runtime.subagent",
    "Tool": "abridged.runtime.tools",
    "ToolContext": "abridged.runtime.tools",
    "ToolRegistry": "abridged.runtime.tools",
    "tool": "abridged.runtime.tools",
}

if TYPE_CHECKING:
    from abridged.events.runtime import Notice, Retrying, ToolFinished, ToolStarted, TurnResult
    from abridged.runtime.commands import Status
    from abridged.runtime.context_manager import ContextManager, Prepared, ReplayStep
    from abridged.runtime.conversation import CallRecord, Conversation, ConversationSettings
    from abridged.runtime.settings import Settings
    from abridged.runtime.subagent import subagent_tool
    from abridged.runtime.tools import Tool, ToolContext, ToolRegistry, tool

__all__ = [
    "CallRecord",
    "ContextManager",
    "Conversation",
    "ConversationSettings",
    "Notice",
    "Prepared",
    "ReplayStep",
    "Retrying",
    "Settings",
    "Status",
    "Tool",
    "ToolContext",
    "ToolFinished",
    "ToolRegistry",
    "ToolStarted",
    "TurnResult",
    "subagent_tool",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'abridged.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once; later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
