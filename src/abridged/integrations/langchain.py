"""abridged in LangChain v1 agents: ``AbridgedMiddleware`` changes only what each model call sends.

    from langchain.agents import create_agent
    from abridged.integrations.langchain import AbridgedMiddleware

    agent = create_agent(model, tools, middleware=[AbridgedMiddleware(context_window=128_000)])

The agent's state (its checkpointed ``messages``) is never rewritten: at every model call the
middleware gives the messages to a ``ContextManager`` (a tool call the state holds no result for,
left by a run that stopped in between, gets an error result in what is sent, so the provider
does not refuse the history) (one per LangGraph ``thread_id``, else one
for the middleware), which prunes old tool output and summarizes old turns at a turn boundary
when they no longer fit, and the call is made with the context it returns
(``request.override(messages=...)``). Messages abridged did not change are the agent's own
objects. A provider's "context too long" error is caught and answered once by the emergency
path. The reply's ``usage_metadata`` teaches the manager the real sizes.

With a ``store`` the compaction state lives in abridged's store, keyed by ``thread_id``, so a
restarted process (or another worker) sends the same context; use the agent's async methods
(``ainvoke``, ``astream``) then: the store is async. Without one, state is kept in memory (the
``max_threads`` most recent threads). Requires ``pip install 'abridged[langchain]'``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.utils.function_calling import convert_to_openai_tool

from abridged.core.budget import BudgetSettings
from abridged.core.model import Image, Message, Text, ToolCall, ToolResult, Usage
from abridged.core.turns import close_interrupted_calls
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import CompactionHooks
from abridged.engine.compaction_settings import CompactionSettings
from abridged.errors import SettingError
from abridged.formats.usage import usage_from_openai
from abridged.integrations.managers import ManagerOptions, stored_conversation_id
from abridged.providers.overflow import is_context_overflow
from abridged.runtime.context_manager import ContextManager, Prepared
from abridged.store import Store

#: The result sent for a tool call the agent's state holds no result for (a run stopped between
#: the call and its result: an interrupt, a recursion limit); the state itself is not changed.
INTERRUPTED_RESULT = "This tool call has no result: the run that made it stopped before it ran."

__all__ = [
    "INTERRUPTED_RESULT",
    "AbridgedMiddleware",
    "message_from_langchain",
    "message_to_langchain",
    "usage_from_langchain",
]


# -- messages, both ways ---------------------------------------------------------------------


def _text_and_images(content: Any) -> tuple[str, list[Image]]:
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[Image] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "image_url":
                url = block.get("image_url")
                url = url.get("url") if isinstance(url, dict) else url
                if isinstance(url, str):
                    images.append(Image(url=url))
            elif kind == "image" and isinstance(block.get("url"), str):
                images.append(Image(url=block["url"]))
    return "".join(texts), images


def message_from_langchain(message: BaseMessage) -> Message:
    """A LangChain message as abridged's (its id kept when it has one).

    >>> message_from_langchain(HumanMessage("hi", id="h1")).role
    'user'
    """
    text, images = _text_and_images(message.content)
    mid = message.id or ""
    if isinstance(message, SystemMessage):
        return Message("system", (Text(text),), id=mid)
    if isinstance(message, AIMessage):
        parts: list[Any] = [Text(text)] if text else []
        for call in message.tool_calls:
            arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
            parts.append(ToolCall(str(call.get("id") or ""), call["name"], arguments))
        return Message("assistant", tuple(parts), id=mid)
    if isinstance(message, ToolMessage):
        result = ToolResult(
            message.tool_call_id,
            message.name or "",
            (Text(text), *images),
            is_error=message.status == "error",
        )
        return Message("tool", (result,), id=mid)
    return Message("user", (*([Text(text)] if text or not images else []), *images), id=mid)


def message_to_langchain(message: Message) -> BaseMessage:
    """An abridged message (a summary, a pruned tool result) as a LangChain message."""
    if message.role == "system":
        return SystemMessage(message.text)
    if message.role == "assistant":
        calls = []
        for call in message.tool_calls:
            args = call.parsed_arguments()
            calls.append(
                {
                    "id": call.id,
                    "name": call.name,
                    "args": args if isinstance(args, dict) else {"input": call.arguments},
                    "type": "tool_call",
                }
            )
        return AIMessage(message.text, tool_calls=calls)
    if message.role == "tool":
        result = message.tool_results[0]
        return ToolMessage(
            result.text,
            tool_call_id=result.call_id,
            name=result.name or None,
            status="error" if result.is_error else "success",
        )
    return HumanMessage(message.text)


def usage_from_langchain(message: BaseMessage) -> Usage | None:
    """A reply's ``usage_metadata`` as abridged's ``Usage`` (``input`` without cached tokens).

    >>> usage_from_langchain(AIMessage("x", usage_metadata={"input_tokens": 100,
    ...     "output_tokens": 5, "total_tokens": 105,
    ...     "input_token_details": {"cache_read": 60}}))
    Usage(input=40, output=5, cache_read=60, cache_write=0, reasoning=0)
    """
    meta = getattr(message, "usage_metadata", None)
    if not meta:
        return None
    details = meta.get("input_token_details") or {}
    read = int(details.get("cache_read") or 0)
    write = int(details.get("cache_creation") or 0)
    reasoning = int((meta.get("output_token_details") or {}).get("reasoning") or 0)
    # LangChain counts cached tokens inside ``input_tokens``, as OpenAI does
    return usage_from_openai(
        {
            "input_tokens": meta.get("input_tokens"),
            "output_tokens": meta.get("output_tokens"),
            "cached_tokens": read,
            "cache_write_tokens": write,
            "reasoning_tokens": reasoning,
        }
    )


# -- the middleware ---------------------------------------------------------------------------


def _thread_id() -> str | None:
    """The LangGraph thread of the running agent, when it has one."""
    try:
        from langgraph.config import get_config  # noqa: PLC0415

        configurable = get_config().get("configurable") or {}
    except (ImportError, RuntimeError):
        return None
    value = configurable.get("thread_id")
    return str(value) if value is not None else None


class _Thread:
    """One thread's manager and the agent's messages already read (by identity)."""

    def __init__(self, manager: ContextManager) -> None:
        self.manager = manager
        self.read: dict[int, tuple[BaseMessage, Message]] = {}

    def convert(self, request: ModelRequest[Any]) -> tuple[list[Message], dict[int, BaseMessage]]:
        """The request's messages as abridged's (the system prompt first), and the agent's own
        message behind each (by the abridged message's identity)."""
        read: dict[int, tuple[BaseMessage, Message]] = {}
        out: list[Message] = []
        own: dict[int, BaseMessage] = {}
        system = request.system_message
        for lc in [system, *request.messages] if system is not None else request.messages:
            known = self.read.get(id(lc))
            if known is None or known[0] is not lc:
                known = (lc, message_from_langchain(lc))
            read[id(lc)] = known
            out.append(known[1])
            own[id(known[1])] = lc
        self.read = read
        return close_interrupted_calls(out, INTERRUPTED_RESULT), own


class AbridgedMiddleware(AgentMiddleware):
    """Keeps each model call of a LangChain agent inside the window (see the module docstring).

    Limits: ``limits`` or ``context_window`` (and ``max_output_tokens``); ``model`` names the
    model (calibration prior). ``budget``, ``settings``, ``summarizer``, ``hooks``: as for
    ``ContextManager``. ``store`` and ``owner``: keep each thread's state in the store (async
    agents only). ``max_threads``: threads kept in memory (least recently used go first).
    """

    def __init__(
        self,
        *,
        limits: ModelLimits | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
        model: str | None = None,
        budget: BudgetSettings | None = None,
        settings: CompactionSettings | None = None,
        summarizer: Any = None,
        hooks: CompactionHooks | None = None,
        store: Store | None = None,
        owner: str | None = None,
        max_threads: int = 256,
    ) -> None:
        super().__init__()
        if isinstance(max_threads, bool) or not isinstance(max_threads, int) or max_threads < 1:
            raise SettingError("max_threads", max_threads, "an integer >= 1")
        self._options = ManagerOptions(
            limits, context_window, max_output_tokens, model, budget, settings, summarizer, hooks
        )
        self._store = store
        self._owner = owner
        self._max_threads = max_threads
        self._threads: OrderedDict[str | None, _Thread] = OrderedDict()
        self._tools: tuple[Any, list[dict[str, Any]]] | None = None
        self._options.manager("abridged")  # the settings are checked now

    def manager(self, thread_id: str | None = None) -> ContextManager | None:
        """The manager of a thread (``None``: the calls made outside any thread), if any."""
        entry = self._threads.get(thread_id)
        return entry.manager if entry is not None else None

    def _thread(self, *, asynchronous: bool) -> _Thread:
        key = _thread_id()
        entry = self._threads.get(key)
        if entry is not None:
            self._threads.move_to_end(key)
            return entry
        if self._store is not None and not asynchronous:
            raise SettingError(
                "store",
                "a Store",
                "async agent calls (ainvoke, astream): the store is async; or no store",
            )
        conversation = stored_conversation_id("langchain", key) if key is not None else None
        manager = self._options.manager(
            "abridged", store=self._store, conversation_id=conversation, owner=self._owner
        )
        entry = self._threads[key] = _Thread(manager)
        while len(self._threads) > self._max_threads:
            self._threads.popitem(last=False)
        return entry

    def _tool_dicts(self, tools: Sequence[Any] | None) -> list[dict[str, Any]]:
        if not tools:
            return []
        if self._tools is None or self._tools[0] is not tools:
            converted = []
            for tool in tools:
                try:
                    converted.append(convert_to_openai_tool(tool))
                except (ValueError, TypeError):  # a provider's built-in tool: no schema
                    continue
            self._tools = (tools, converted)
        return self._tools[1]

    @staticmethod
    def _request(
        request: ModelRequest[Any], prepared: Prepared, own: dict[int, BaseMessage]
    ) -> ModelRequest[Any]:
        """The request with the prepared context (the system prompt stays the request's)."""
        unchanged = all(id(m) in own for m in prepared.messages)
        if unchanged and not prepared.state.compacted and not prepared.state.pruned:
            return request  # the agent's own messages, as they are
        messages: list[AnyMessage] = []
        for index, message in enumerate(prepared.messages):
            lc = own.get(id(message))
            if index == 0 and request.system_message is not None and lc is request.system_message:
                continue
            messages.append(
                cast(AnyMessage, lc if lc is not None else message_to_langchain(message))
            )
        return request.override(messages=messages)

    @staticmethod
    def _learn(manager: ContextManager, response: Any) -> None:
        result = getattr(response, "result", None)
        replies = result if isinstance(result, list) else [response]
        for message in reversed(replies):
            if isinstance(message, AIMessage):
                usage = usage_from_langchain(message)
                if usage is not None:
                    manager.record_usage(usage)
                return

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> Any:
        """Send the context abridged prepares; answer one overflow with the emergency path."""
        thread = self._thread(asynchronous=False)
        messages, own = thread.convert(request)
        manager = thread.manager
        prepared = manager.prepare(messages, tools=self._tool_dicts(request.tools))
        try:
            response = handler(self._request(request, prepared, own))
        except Exception as exc:
            info = is_context_overflow(exc)
            if info is None:
                raise
            recovered = manager.recover_overflow(info.tokens)
            response = handler(self._request(request, recovered, own))
        self._learn(manager, response)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        """The async form of ``wrap_model_call`` (the only one with a store)."""
        thread = self._thread(asynchronous=True)
        messages, own = thread.convert(request)
        manager = thread.manager
        prepared = await manager.aprepare(messages, tools=self._tool_dicts(request.tools))
        try:
            response = await handler(self._request(request, prepared, own))
        except Exception as exc:
            info = is_context_overflow(exc)
            if info is None:
                raise
            recovered = await manager.arecover_overflow(info.tokens)
            response = await handler(self._request(request, recovered, own))
        self._learn(manager, response)
        return response
