"""abridged in pydantic-ai agents: ``AbridgedCapability`` compacts what each model request sends.

    from pydantic_ai import Agent
    from abridged.integrations.pydantic_ai import AbridgedCapability

    agent = Agent(model, capabilities=[AbridgedCapability(context_window=128_000)])

Before every model request the request's messages go to a ``ContextManager`` (one per
pydantic-ai ``conversation_id``), which prunes old tool output and summarizes old turns at a
turn boundary when they no longer fit; the request is made with the context it returns. Unlike
pydantic-ai's ``ProcessHistory``, the run's own history (``ctx.messages``, ``all_messages()``)
is never rewritten: only what is sent changes, and messages abridged did not change are sent
as the run's own objects, with every part abridged does not interpret (built-in tool calls,
provider compaction parts, file parts) as it was. The replies' usage teaches the manager the
real sizes. A provider's "context too long" (``ModelContextWindowExceededError``, or an HTTP
error that says so) runs the emergency path and one more attempt.

With a ``store`` each conversation's state lives in abridged's store, keyed by its
``conversation_id``, so a restarted process resumes with the same context. Requires
``pip install 'abridged[pydantic-ai]'``.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelContextWindowExceededError, RetryModelRequest
from pydantic_ai.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext

from abridged.core.budget import BudgetSettings
from abridged.core.model import (
    Image,
    Message,
    Opaque,
    Part,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    Usage,
)
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import CompactionHooks
from abridged.engine.compaction_settings import CompactionSettings
from abridged.errors import SettingError
from abridged.formats.usage import usage_from_openai
from abridged.integrations.managers import ManagerOptions, stored_conversation_id
from abridged.providers.overflow import is_context_overflow
from abridged.runtime.context_manager import ContextManager, Prepared
from abridged.store import Store

__all__ = ["AbridgedCapability", "message_to_pydantic_ai", "messages_from_pydantic_ai"]

#: ``Opaque.format`` of parts abridged does not interpret (never written to a wire format).
FORMAT = "pydantic-ai"


# -- messages, both ways ---------------------------------------------------------------------


def _opaque(part: Any) -> Opaque:
    """A part abridged does not interpret, counted and shown by its kind and its text."""
    kind = str(getattr(part, "part_kind", type(part).__name__))
    return Opaque.of(FORMAT, {"type": kind, "text": repr(part)[:4_000]})


def _usage(response: ModelResponse) -> Usage | None:
    usage = response.usage
    if not usage.input_tokens:
        return None
    # pydantic-ai counts cached tokens inside ``input_tokens``, as OpenAI does
    return usage_from_openai(
        {
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "reasoning_tokens": usage.output_reasoning_tokens,
        }
    )


def _user(content: Any) -> Message:
    items = [content] if isinstance(content, str) else list(content)
    parts: list[Part] = []
    for item in items:
        if isinstance(item, str):
            parts.append(Text(item))
        elif isinstance(item, ImageUrl):
            parts.append(Image(url=item.url))
        else:
            parts.append(_opaque(item))
    return Message("user", tuple(parts))


def messages_from_pydantic_ai(message: ModelMessage) -> list[Message]:
    """One pydantic-ai message as abridged's: a request gives a message per part (system
    prompt, user prompt, one tool message per tool return or tool retry), a response one
    assistant message carrying its usage."""
    if isinstance(message, ModelResponse):
        parts: list[Part] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                parts.append(Text(part.content))
            elif isinstance(part, ToolCallPart):
                parts.append(ToolCall(part.tool_call_id, part.tool_name, part.args_as_json_str()))
            elif isinstance(part, ThinkingPart):
                parts.append(Reasoning(text=part.content, signature=part.signature))
            else:
                parts.append(_opaque(part))
        return [Message("assistant", tuple(parts), usage=_usage(message))]
    out: list[Message] = []
    for item in message.parts:
        if isinstance(item, SystemPromptPart):
            out.append(Message.system(item.content))
        elif isinstance(item, UserPromptPart):
            out.append(_user(item.content))
        elif isinstance(item, ToolReturnPart):
            result = ToolResult(
                item.tool_call_id, item.tool_name, (Text(item.model_response_str()),)
            )
            out.append(Message("tool", (result,)))
        elif isinstance(item, RetryPromptPart) and item.tool_name is not None:
            result = ToolResult(
                item.tool_call_id, item.tool_name, (Text(item.model_response()),), is_error=True
            )
            out.append(Message("tool", (result,)))
        elif isinstance(item, RetryPromptPart):
            out.append(Message.user(item.model_response()))
        else:
            out.append(Message("user", (_opaque(item),)))
    return out


def message_to_pydantic_ai(message: Message) -> ModelMessage:
    """An abridged message (a summary, a pruned tool result) as a pydantic-ai message."""
    if message.role == "assistant":
        parts: list[Any] = [TextPart(message.text)] if message.text else []
        parts += [ToolCallPart(c.name, c.arguments, c.id) for c in message.tool_calls]
        return ModelResponse(parts=parts)
    if message.role == "tool":
        result = message.tool_results[0]
        return ModelRequest(
            parts=[ToolReturnPart(result.name, result.text, tool_call_id=result.call_id)]
        )
    if message.role == "system":
        return ModelRequest(parts=[SystemPromptPart(message.text)])
    return ModelRequest(parts=[UserPromptPart(message.text)])


# -- the capability ---------------------------------------------------------------------------


class _Conversation:
    """One conversation's manager and the run's messages already read (by identity)."""

    def __init__(self, manager: ContextManager) -> None:
        self.manager = manager
        self.read: dict[int, tuple[ModelMessage, list[Message]]] = {}
        # the origin of each abridged message of the last request (for an overflow's retry)
        self.origin: dict[int, tuple[ModelMessage, list[Message]]] = {}
        # the messages the next attempt of this request sends (after an overflow), and whether
        # this request already had its one recovery
        self.recovered: list[ModelMessage] | None = None
        self.retried = False

    def convert(
        self, messages: list[ModelMessage]
    ) -> tuple[list[Message], dict[int, tuple[ModelMessage, list[Message]]]]:
        """The messages as abridged's, and each abridged message's origin (by identity)."""
        read: dict[int, tuple[ModelMessage, list[Message]]] = {}
        out: list[Message] = []
        origin: dict[int, tuple[ModelMessage, list[Message]]] = {}
        for message in messages:
            known = self.read.get(id(message))
            if known is None or known[0] is not message:
                known = (message, messages_from_pydantic_ai(message))
            read[id(message)] = known
            for converted in known[1]:
                origin[id(converted)] = known
            out.extend(known[1])
        self.read = read
        return out, origin


def _back(
    prepared: Prepared, origin: dict[int, tuple[ModelMessage, list[Message]]]
) -> list[ModelMessage]:
    """The prepared context as pydantic-ai messages: the run's own message wherever all the
    abridged messages read from it are sent unchanged, in order; new ones for the rest."""
    context: list[Message] = prepared.messages
    out: list[ModelMessage] = []
    i = 0
    while i < len(context):
        message = context[i]
        known = origin.get(id(message))
        if known is not None:
            own, parts = known
            run = context[i : i + len(parts)]
            if len(run) == len(parts) and all(a is b for a, b in zip(run, parts, strict=True)):
                out.append(own)
                i += len(parts)
                continue
        out.append(message_to_pydantic_ai(message))
        i += 1
    return out


def _tools(request_context: ModelRequestContext) -> list[dict[str, Any]]:
    parameters = request_context.model_request_parameters
    tools = [*parameters.function_tools, *parameters.output_tools]
    return [
        {"name": t.name, "description": t.description or "", "parameters": t.parameters_json_schema}
        for t in tools
    ]


@dataclass
class AbridgedCapability(AbstractCapability[Any]):
    """Keeps every model request of a pydantic-ai agent inside the window (see the module
    docstring). Limits: ``limits`` or ``context_window`` (and ``max_output_tokens``);
    ``model`` names the model (calibration prior); ``budget``, ``settings``, ``summarizer``,
    ``hooks``: as for ``ContextManager``; ``store`` and ``owner``: keep each conversation's
    state in the store; ``max_conversations``: kept in memory (least recently used go first).
    """

    limits: ModelLimits | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    model_name: str | None = None
    budget: BudgetSettings | None = None
    settings: CompactionSettings | None = None
    summarizer: Any = None
    hooks: CompactionHooks | None = None
    store: Store | None = None
    owner: str | None = None
    max_conversations: int = 256
    _conversations: OrderedDict[str | None, _Conversation] = field(
        default_factory=OrderedDict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        limit = self.max_conversations
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise SettingError("max_conversations", limit, "an integer >= 1")
        self._manager_for(None, check_only=True)

    def _manager_for(self, key: str | None, *, check_only: bool = False) -> ContextManager:
        options = ManagerOptions(
            self.limits,
            self.context_window,
            self.max_output_tokens,
            self.model_name,
            self.budget,
            self.settings,
            self.summarizer,
            self.hooks,
        )
        conversation = stored_conversation_id("pydantic-ai", key) if key is not None else None
        return options.manager(
            "abridged",
            store=None if check_only else self.store,
            conversation_id=conversation,
            owner=self.owner,
        )

    def manager(self, conversation_id: str | None = None) -> ContextManager | None:
        """The manager of a conversation (by default the most recently used one), if any."""
        if conversation_id is None:
            last = next(reversed(self._conversations.values()), None)
            return last.manager if last is not None else None
        entry = self._conversations.get(conversation_id)
        return entry.manager if entry is not None else None

    def _conversation(self, ctx: RunContext[Any]) -> _Conversation:
        key = getattr(ctx, "conversation_id", None)
        key = str(key) if key is not None else None
        entry = self._conversations.get(key)
        if entry is not None:
            self._conversations.move_to_end(key)
            return entry
        entry = self._conversations[key] = _Conversation(self._manager_for(key))
        while len(self._conversations) > self.max_conversations:
            self._conversations.popitem(last=False)
        return entry

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Send the context abridged prepares (the run's history stays as it is)."""
        conversation = self._conversation(ctx)
        messages, origin = conversation.convert(list(request_context.messages))
        conversation.origin = origin
        conversation.retried = False
        prepared = await conversation.manager.aprepare(messages, tools=_tools(request_context))
        if prepared.state.compacted or prepared.state.pruned:
            request_context.messages = _back(prepared, origin)
        return request_context

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        """A "context too long" error: the emergency path, then one more attempt."""
        overflow = isinstance(error, ModelContextWindowExceededError)
        info = is_context_overflow(error)
        conversation = self._conversation(ctx)
        if not (overflow or info is not None) or conversation.retried:
            raise error
        conversation.retried = True
        recovered = await conversation.manager.arecover_overflow(
            info.tokens if info is not None else None
        )
        # each attempt starts from what ``before_model_request`` made: the recovered context
        # goes in at ``prepare_model_request``
        conversation.recovered = _back(recovered, conversation.origin)
        raise RetryModelRequest()

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """The attempt after an overflow sends the recovered context."""
        conversation = self._conversation(ctx)
        if conversation.recovered is not None:
            request_context.messages = conversation.recovered
            conversation.recovered = None
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: Any
    ) -> Any:
        """The reply's usage teaches the manager the real size of what was sent."""
        if isinstance(response, ModelResponse):
            usage = _usage(response)
            if usage is not None:
                self._conversation(ctx).manager.record_usage(usage)
        return response
