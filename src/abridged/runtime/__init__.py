"""The runtime: wires the engine to the caller's loop (ContextManager), stores and providers."""

from abridged.runtime.context_manager import ContextManager, Prepared, ReplayStep

__all__ = ["ContextManager", "Prepared", "ReplayStep"]

# The Conversation runtime (agent loop, commands, recovery, tools, sub-agents).
from abridged.runtime.commands import Status
from abridged.runtime.conversation import (
    CallRecord,
    Conversation,
    ConversationSettings,
)
from abridged.runtime.events import (
    Notice,
    Retrying,
    ToolFinished,
    ToolStarted,
    TurnResult,
)
from abridged.runtime.subagent import subagent_tool
from abridged.runtime.tools import Tool, ToolContext, ToolRegistry, tool

__all__ += [
    "CallRecord",
    "Conversation",
    "ConversationSettings",
    "Notice",
    "Retrying",
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
