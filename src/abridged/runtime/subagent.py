"""Sub-agents: a tool that runs a child conversation with its own budget and the same recovery.

::

    research = subagent_tool(store, cheap_model, name="research", context_window=32_768,
                             system="You research one question and answer it briefly.",
                             tools=[search_web])
    convo = await Conversation.open(store, model, tools=[research, ...])

Each call of the tool opens a fresh child ``Conversation`` in the same store (a conversation of
its own, whose messages and compactions are kept there), sends it the ``task``, and returns the
child's final answer to the parent as the tool's result. The child compacts and recovers from
overflows like any conversation, within its own window: the parent only ever sees the answer.
``Conversation.as_tool`` does the same with one long-lived child.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from abridged.core.protocols import ChatModel, Summarizer
from abridged.core.windows import ModelLimits
from abridged.events.runtime import ConversationEvent
from abridged.runtime.conversation import Conversation, ConversationSettings
from abridged.runtime.tools import Tool, ToolContext, ToolRegistry
from abridged.store import Store

__all__ = ["subagent_tool"]

_SCHEMA = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "The task, in full: the sub-agent sees nothing else.",
        }
    },
    "required": ["task"],
}


def subagent_tool(
    store: Store,
    model: ChatModel,
    *,
    name: str = "subagent",
    description: str = (
        "Give a self-contained task to a sub-agent with its own context window; it works on "
        "it (with its own tools) and returns its final answer."
    ),
    system: str | None = None,
    tools: Iterable[Tool | Callable[..., Any]] | ToolRegistry = (),
    settings: ConversationSettings | None = None,
    summarizer: Summarizer | ChatModel | str | None = None,
    limits: ModelLimits | None = None,
    context_window: int | None = None,
    max_output_tokens: int | None = None,
    owner: str | None = None,
    on_event: Callable[[ConversationEvent], Any] | None = None,
) -> Tool:
    """A tool that runs each ``task`` in a new child conversation (see the module docstring).

    The result names the child conversation (``[sub-agent conversation <id>]``) so that it can
    be inspected in the store.
    """
    registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)

    async def run(task: str, context: ToolContext) -> str:
        child = await Conversation.open(
            store,
            model,
            system=system,
            tools=registry,
            settings=settings,
            summarizer=summarizer,
            limits=limits,
            context_window=context_window,
            max_output_tokens=max_output_tokens,
            owner=owner,
            on_event=on_event,
        )
        try:
            result = await child.send(task)
        finally:
            await child.close()
        answer = result.text or "(the sub-agent gave no answer)"
        if result.stopped:
            answer += f"\n[the sub-agent stopped early: {result.stopped}]"
        return f"{answer}\n[sub-agent conversation {child.id}]"

    return Tool(name, description, _SCHEMA, run)
