"""``ChatModel`` over LiteLLM, for every provider the OpenAI and Anthropic adapters do not cover.

``LiteLLMChatModel("gemini/gemini-2.5-pro")`` (any LiteLLM model string) is an optional extra:
``pip install 'abridged[litellm]'``. Building one without LiteLLM installed raises
``ProviderError`` saying so. LiteLLM reads each provider's key from its usual environment
variable (``GEMINI_API_KEY``, ``AWS_*``, ``MISTRAL_API_KEY``...); ``api_key`` and ``base_url``
override it. The key is never in ``repr`` or in errors.

Messages are sent in OpenAI Chat Completions form (LiteLLM translates them), streamed with
``stream_options={"include_usage": True}``; the reply is assembled like the OpenAI adapter's
(:class:`~abridged.providers.openai.ChatStreamAssembler`), with timing in
``message.meta["timing"]``. LiteLLM's ``ContextWindowExceededError`` (and any provider body it
passes on that says the prompt is too long) raises ``ContextOverflowError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from abridged.core.model import Message
from abridged.core.protocols import StreamEvent, ToolSpec
from abridged.errors import SettingError
from abridged.formats.openai_chat import completion_from_openai, messages_to_openai
from abridged.providers.openai import CHAT_OPTIONS, ChatStreamAssembler
from abridged.providers.streaming import (
    StreamingModel,
    Timer,
    import_sdk,
    mapping_errors,
    safe_url,
    timed_completion,
    tool_dicts_openai,
)

__all__ = ["LiteLLMChatModel"]

_LITELLM_OPTIONS = CHAT_OPTIONS | {"num_retries", "drop_params", "api_version"}


class LiteLLMChatModel(StreamingModel):
    """A ``ChatModel`` through ``litellm.acompletion`` (see the module docstring).

    Extra keyword arguments are default options of every call (``temperature``,
    ``drop_params``...). ``max_retries`` (default 0) is LiteLLM's ``num_retries``: abridged's
    runtime does the retrying (``ConversationSettings.max_retries``).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 600.0,
        max_retries: int = 0,
        **defaults: Any,
    ) -> None:
        if not model or not isinstance(model, str):
            raise SettingError("model", model, "a LiteLLM model string")
        self._litellm = import_sdk("litellm", "litellm")
        self._model = model
        self._api_key = api_key
        self._secrets: tuple[str, ...] = (api_key,) if api_key else ()
        self._base_url = base_url
        self.base_url = safe_url(base_url)
        self.timeout = timeout
        self.max_retries = max_retries
        self.defaults: dict[str, Any] = dict(defaults)
        self.provider = "litellm"

    def __repr__(self) -> str:
        base = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"LiteLLMChatModel(model={self._model!r}{base})"

    def request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The keyword arguments of ``litellm.acompletion`` (without the key)."""
        body: dict[str, Any] = {"model": self._model, "messages": messages_to_openai(messages)}
        wire_tools = tool_dicts_openai(tools)
        if wire_tools:
            body["tools"] = wire_tools
        if max_output_tokens is not None:
            body["max_tokens"] = max_output_tokens
        merged: Mapping[str, Any] = {**self.defaults, **options}
        body.update({k: v for k, v in merged.items() if k in _LITELLM_OPTIONS and v is not None})
        return body

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Call the model once, yielding deltas as they arrive, then the ``Completion``."""
        body = self.request(messages, tools, max_output_tokens, **options)
        body.update(stream=True, stream_options={"include_usage": True})
        body.setdefault("timeout", self.timeout)
        body.setdefault("num_retries", self.max_retries)
        if self._api_key is not None:
            body["api_key"] = self._api_key
        if self._base_url is not None:
            body["api_base"] = self._base_url
        timer = Timer()
        assembler = ChatStreamAssembler()
        with mapping_errors(
            provider=self.provider, model=self._model, secrets=self._secrets, timeout=self.timeout
        ):
            stream = await self._litellm.acompletion(**body)
            async for chunk in stream:
                data = chunk.model_dump() if hasattr(chunk, "model_dump") else dict(chunk)
                for event in assembler.feed(data):
                    timer.token()
                    yield event
        yield timed_completion(
            completion_from_openai(assembler.response()),
            timer,
            assembler.finish_reason,
            assembler.model or self._model,
        )
