"""LangChain's real ``SummarizationMiddleware`` as a bench policy, driven with a stand-in model.

The installed class decides when to summarize and what to keep; a stand-in chat model answers its
summary call through the shared summarizer.

Source: the installed ``langchain`` package (1.5.x),
``langchain/agents/middleware/summarization.py``:

- ``SummarizationMiddleware.before_model`` runs before every model call of a ``create_agent``
  loop: it counts the state's messages with its ``token_counter`` (default
  ``count_tokens_approximately``: chars / 4 + 3 per message, scaled by the last AI message's
  reported ``total_tokens`` when its ``model_provider`` matches the model's, via
  ``_get_approximate_token_counter``), checks its trigger (``_should_summarize``: the count, *or*
  the last AI message's reported ``total_tokens``, against the threshold), finds the cutoff
  (``_determine_cutoff_index``: keep the last ``keep`` messages, moved back to the ``AIMessage``
  whose tool calls the first kept ``ToolMessage`` answers, so no result is orphaned), summarizes
  the rest and replaces the state's messages with ``[HumanMessage("Here is a summary of the
  conversation to date:\\n\\n" + summary), *kept]`` (``RemoveMessage(REMOVE_ALL_MESSAGES)``).
- ``_create_summary``: the messages to summarize are trimmed to their last
  ``trim_tokens_to_summarize = 4_000`` tokens (``_DEFAULT_TRIM_TOKEN_LIMIT``), formatted with
  ``get_buffer_string(format="xml")`` into ``DEFAULT_SUMMARY_PROMPT`` and sent to the model as one
  user message; on ``ContextOverflowError`` it retries once with the middle of the history cut.
- ``_DEFAULT_MESSAGES_TO_KEEP = 20``; there is no default trigger (``trigger=None`` never
  summarizes).

**Configuration.** ``trigger=("fraction", 0.8)``, the class docstring's example for managing a
model's context window ("Trigger summarization ... when 80% of model's max input tokens is
reached"), and the default ``keep=("messages", 20)``; the documentation's other example
(``trigger=("tokens", 4000), keep=("messages", 20)`` in the context-engineering and short-term
memory guides) is sized for no particular window. The stand-in model's profile gives
``max_input_tokens`` as the window's input limit (window minus the 4,096 output tokens: 12,288 at
16k, 28,672 at 32k), so the trigger is at 9,830 / 22,937 tokens by LangChain's count; with the raw
window as ``max_input_tokens`` the 16k trigger (13,107) would sit above what the provider accepts.
Other settings give other figures (``TRIGGER``, ``KEEP`` and ``max_input_tokens`` are arguments).

**How it is driven.** The policy keeps the agent state's ``messages`` (the system prompt is
outside them, as ``create_agent(system_prompt=...)`` keeps it) as LangChain messages: replies as
``AIMessage`` with ``tool_calls``, with the provider's usage as ``usage_metadata`` and
``model_provider="openai"`` (what ``ChatOpenAI`` sets, so the usage scaling and the reported-token
trigger work as in a real agent), results as ``ToolMessage`` with ``tool_call_id``. Before each
call it runs the real middleware's ``before_model`` and applies its update. The stand-in chat
model (``ls_provider="openai"``) bills each summary request through ``Kit.summarize``: the request
is the prompt the middleware built, as one user message; the messages summarized are the ones the
middleware put in it (its trimmed list, recorded by wrapping ``_trim_messages_for_summary`` on the
instance without changing what it returns). A request over the provider's limit raises
``ContextOverflowError``, so the middleware's own retry runs. LangChain has no recovery from a
provider's "context too long" error (the agent run fails): ``recover`` returns ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.exceptions import ContextOverflowError
from langchain_core.language_models import BaseChatModel, LangSmithParams
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from abridged.core.model import Message, ToolCall, ToolResult, Usage
from abridged.integrations.langchain import message_from_langchain
from policy_kit import Kit, Rejected

NAME = "langchain"

#: The class docstring's window-relative trigger (see the module docstring).
TRIGGER: tuple[str, float] = ("fraction", 0.8)
#: ``_DEFAULT_MESSAGES_TO_KEEP``: the default ``keep``.
KEEP: tuple[str, int] = ("messages", 20)
#: What ``ChatOpenAI`` reports as ``ls_provider`` and tags its messages' ``model_provider`` with.
PROVIDER = "openai"
SUMMARY_PREFIX = "Here is a summary of the conversation to date:\n\n"


class StandInModel(BaseChatModel):
    """The agent's chat model as far as the middleware sees it: a profile, a provider name, and a
    summary call answered by ``answer`` (the prompt text in, the summary text out)."""

    answer: Callable[[str], str]

    @property
    def _llm_type(self) -> str:
        return "bench-stand-in"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = PROVIDER
        return params

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        del stop, run_manager, kwargs
        prompt = "\n".join(str(m.content) for m in messages)
        text = self.answer(prompt)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def _usage_metadata(usage: Usage) -> dict[str, Any]:
    """``Usage`` as the ``usage_metadata`` ``ChatOpenAI`` reports (cached tokens in the input)."""
    prompt = usage.context_tokens
    return {
        "input_tokens": prompt,
        "output_tokens": usage.output,
        "total_tokens": prompt + usage.output,
        "input_token_details": {"cache_read": usage.cache_read},
    }


def _args(call: ToolCall) -> dict[str, Any]:
    parsed = call.parsed_arguments()
    return parsed if isinstance(parsed, dict) else {"input": call.arguments}


class LangChainPolicy:
    """The agent state of a ``create_agent`` loop under LangChain's ``SummarizationMiddleware``."""

    def __init__(
        self,
        kit: Kit,
        *,
        trigger: tuple[str, float] | tuple[str, int] = TRIGGER,
        keep: tuple[str, int] | tuple[str, float] = KEEP,
        max_input_tokens: int | None = None,
    ) -> None:
        self.name = NAME
        self.kit = kit
        self.model = StandInModel(
            answer=self._answer,
            profile={"max_input_tokens": max_input_tokens or kit.window.limit},
        )
        self.middleware: SummarizationMiddleware[Any, Any] = SummarizationMiddleware(
            self.model,
            trigger=trigger,  # type: ignore[arg-type]
            keep=keep,  # type: ignore[arg-type]
        )
        self._trim = self.middleware._trim_messages_for_summary
        self.middleware._trim_messages_for_summary = self._record_trim  # type: ignore[method-assign]
        self._system: list[Message] = []
        self._state: list[AnyMessage] = []
        self._originals: dict[str, Message] = {}  # state message id -> the harness's message
        self._trimmed: list[AnyMessage] = []
        self._usage: Usage | None = None
        self._serial = 0
        self._compactions = 0
        self._summary_calls = 0
        self._overflowed_requests = 0

    # -- the policy interface -----------------------------------------------------------------

    def prepare(self, new: Sequence[Message]) -> list[Message]:
        for message in new:
            if message.role == "system" and not self._state:
                self._system.append(message)
                continue
            self._state.extend(self._to_langchain(message))
        update = self.middleware.before_model({"messages": self._state}, Runtime())
        if update is not None:
            self._apply(update["messages"])
        return [*self._system, *self._from_state()]

    def observe(self, usage: Usage) -> None:
        self._usage = usage

    def recover(self, error: Rejected) -> list[Message] | None:
        del error
        return None  # the middleware has no answer to a provider's "context too long"

    def stats(self) -> dict[str, int]:
        return {
            "compactions": self._compactions,
            "prunes": 0,
            "summary_calls": self._summary_calls,
            "summary_overflows": self._overflowed_requests,
            "state_messages": len(self._state),
        }

    # -- the state ------------------------------------------------------------------------------

    def _key(self, message: Message) -> str:
        self._serial += 1
        key = f"bench-{self._serial}"
        self._originals[key] = message
        return key

    def _to_langchain(self, message: Message) -> list[AnyMessage]:
        """One harness message as the agent state holds it (a tool message may hold several
        results: one ``ToolMessage`` each)."""
        if message.role == "assistant":
            calls = [
                {"id": c.id, "name": c.name, "args": _args(c), "type": "tool_call"}
                for c in message.tool_calls
            ]
            extra: dict[str, Any] = {}
            if self._usage is not None:
                # the reply to the call last sent: the provider's usage for it
                extra["usage_metadata"] = _usage_metadata(self._usage)
                self._usage = None
            ai = AIMessage(
                message.text,
                tool_calls=calls,
                response_metadata={"model_provider": PROVIDER},
                id=self._key(message),
                **extra,
            )
            return [ai]
        if message.role == "tool":
            results = message.tool_results
            if len(results) == 1:
                return [self._tool_message(results[0], self._key(message))]
            return [
                self._tool_message(r, self._key(Message("tool", (r,), id=f"{message.id}-{n}")))
                for n, r in enumerate(results)
            ]
        return [HumanMessage(message.text, id=self._key(message))]

    @staticmethod
    def _tool_message(result: ToolResult, key: str) -> ToolMessage:
        return ToolMessage(
            result.text,
            tool_call_id=result.call_id,
            name=result.name or None,
            status="error" if result.is_error else "success",
            id=key,
        )

    def _apply(self, update: Sequence[Any]) -> None:
        """The ``add_messages`` reducer on the middleware's update (remove all, then add)."""
        head = update[0]
        if not (isinstance(head, RemoveMessage) and head.id == REMOVE_ALL_MESSAGES):
            raise AssertionError("SummarizationMiddleware returned an unexpected update")
        self._state = list(update[1:])
        self._compactions += 1

    def _from_state(self) -> list[Message]:
        out: list[Message] = []
        for message in self._state:
            original = self._originals.get(message.id or "")
            if original is not None:
                out.append(original)
            elif isinstance(message, HumanMessage):
                # the summary message the middleware built: keep one object for it
                converted = Message.user(str(message.content), meta={"kind": "summary"})
                if message.id:
                    self._originals[message.id] = converted
                out.append(converted)
            else:
                out.append(message_from_langchain(message))
        return out

    # -- the summary call -----------------------------------------------------------------------

    def _record_trim(self, messages: list[AnyMessage]) -> list[AnyMessage]:
        self._trimmed = self._trim(messages)
        return self._trimmed

    def _summarized(self) -> list[Message]:
        """The messages in the summary prompt, as the harness's messages where unchanged."""
        out: list[Message] = []
        for message in self._trimmed:
            original = self._originals.get(message.id or "")
            if original is not None and message.id and self._same(message, original):
                out.append(original)
            else:
                out.append(message_from_langchain(message))
        return out

    @staticmethod
    def _same(message: AnyMessage, original: Message) -> bool:
        """Whether ``trim_messages`` left the message whole (it may cut the oldest one)."""
        if isinstance(message, ToolMessage):
            return any(message.text == r.text for r in original.tool_results)
        return message.text == original.text

    def _answer(self, prompt: str) -> str:
        request = [Message.user(prompt)]
        if self.kit.count(request) > self.kit.window.limit:
            self._overflowed_requests += 1
            raise ContextOverflowError("prompt is too long for the summary model")
        self._summary_calls += 1
        return self.kit.summarize(
            self._summarized(),
            previous=None,  # an earlier summary is a message of the state, summarized with it
            request=request,
            max_tokens=self.kit.window.max_output,
        )


def summary_text(message: Message) -> str | None:
    """The summary in a message the middleware built, or ``None``."""
    text = message.text
    return text[len(SUMMARY_PREFIX) :] if text.startswith(SUMMARY_PREFIX) else None


def make(kit: Kit) -> LangChainPolicy:
    """LangChain's middleware, configured as the module docstring says, for ``kit``."""
    return LangChainPolicy(kit)


__all__ = [
    "KEEP",
    "NAME",
    "TRIGGER",
    "LangChainPolicy",
    "StandInModel",
    "make",
    "summary_text",
]
