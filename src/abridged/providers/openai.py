"""``ChatModel`` over the official ``openai`` SDK: Chat Completions or Responses, compatible URLs.

``OpenAIChatModel("gpt-4.1")`` talks to OpenAI; with ``base_url`` to any OpenAI-compatible server
(vLLM, Ollama, OpenRouter, LM Studio, Groq, DeepSeek...); with ``azure_endpoint`` (and
``api_version``) to Azure OpenAI through ``AsyncAzureOpenAI`` (``model`` is the deployment name).
The SDK is imported when a model is built (``pip install 'abridged[openai]'``).

**Keys.** ``api_key``, else from the environment: ``OPENAI_API_KEY`` for OpenAI itself (and for a
server named by ``OPENAI_BASE_URL``, which the user pairs with it), ``AZURE_OPENAI_API_KEY`` for
Azure. A ``base_url`` given as an argument never receives ``OPENAI_API_KEY`` from the environment
(it may be anyone's server): pass ``api_key``; without one a placeholder is sent, which local
servers (vLLM, Ollama) accept. OpenAI or Azure without a key raise ``ProviderError`` at
construction. The key is never in
``repr``, in errors, or logged: provider messages pass through
:func:`abridged.providers.overflow.scrub`, and SDK exceptions are not chained (they hold the request
headers).

**Streaming everywhere.** ``stream`` yields ``TextDelta``, ``ReasoningDelta`` and
``ToolCallDelta`` as they arrive, then one ``Completion``; ``complete`` consumes the same stream.
Each reply's ``message.meta["timing"]`` holds ``ttft_ms`` and ``total_ms``.

- **Chat** (``api="chat"``): ``stream_options={"include_usage": True}`` (switch off with
  ``stream_usage=False`` for servers that reject it); ``reasoning_content`` (or ``reasoning``) of
  compatible servers is kept as a ``Reasoning`` part; parallel tool calls are assembled by index.
  ``max_output_tokens`` is sent as ``max_completion_tokens`` to OpenAI and Azure, as
  ``max_tokens`` to other servers (``max_tokens_param`` overrides).
- **Responses** (``api="responses"``): ``store=False`` and
  ``include=["reasoning.encrypted_content"]`` by default, so reasoning items come back with
  their encrypted content and are sent back as they were (stateless, no server-side history);
  ``max_output_tokens``; ``reasoning_effort`` and ``reasoning_summary`` become
  ``reasoning={"effort": ..., "summary": ...}``.

**Usage** is normalised by :func:`abridged.formats.usage.usage_from_openai`: cached prompt tokens
land in ``cache_read`` and ``input`` excludes them.

**Errors.** A provider's "too long" error raises ``ContextOverflowError(tokens=, limit=)``; any
other failure ``ProviderError(status=, provider=, code=, retryable=)``; a timeout
``ProviderError(timeout=True)`` (see :mod:`abridged.providers.overflow`).

**Options** of ``complete``/``stream`` (and defaults given to the constructor as extra keyword
arguments) in :data:`CHAT_OPTIONS` / :data:`RESPONSES_OPTIONS` are sent; others are ignored, as the
``ChatModel`` protocol says (Anthropic's ``cache_breakpoints`` among them).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal
from urllib.parse import urlsplit

from abridged.core.model import Message
from abridged.core.protocols import (
    Completion,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from abridged.errors import ContextOverflowError, ProviderError, SettingError
from abridged.formats.openai_chat import (
    completion_from_openai,
    message_json_openai,
    messages_to_openai,
    wire_json,
)
from abridged.formats.openai_responses import messages_from_responses, messages_to_responses
from abridged.formats.usage import usage_from_openai
from abridged.providers.encoded import EncodedMessages
from abridged.providers.overflow import is_context_overflow, scrub
from abridged.providers.streaming import (
    StreamingModel,
    Timer,
    as_dict,
    close_stream,
    import_sdk,
    mapping_errors,
    safe_url,
    sdk_http_client,
    send_encodable,
    timed_completion,
    tool_dicts_openai,
)

__all__ = [
    "CHAT_OPTIONS",
    "RESPONSES_OPTIONS",
    "ChatStreamAssembler",
    "OpenAIChatModel",
]

CHAT_OPTIONS: frozenset[str] = frozenset(
    {
        "temperature",
        "top_p",
        "stop",
        "seed",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning_effort",
        "response_format",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "user",
        "metadata",
        "service_tier",
        "prompt_cache_key",
        "safety_identifier",
        "verbosity",
        "extra_headers",
        "extra_query",
        "extra_body",
        "timeout",
    }
)
"""Options passed to Chat Completions; the others are ignored."""

RESPONSES_OPTIONS: frozenset[str] = frozenset(
    {
        "temperature",
        "top_p",
        "tool_choice",
        "parallel_tool_calls",
        "text",
        "truncation",
        "user",
        "metadata",
        "service_tier",
        "prompt_cache_key",
        "safety_identifier",
        "max_tool_calls",
        "extra_headers",
        "extra_query",
        "extra_body",
        "timeout",
    }
)
"""Options passed to Responses (``reasoning_effort``/``reasoning_summary`` are mapped too)."""

# The SDK's per-request keywords (not body fields) and their ``RequestOptions`` keys.
_SDK_OPTIONS = {
    "extra_headers": "headers",
    "extra_query": "params",
    "extra_body": "extra_json",
    "timeout": "timeout",
}

OPENAI_HOSTS = ("api.openai.com",)
_PLACEHOLDER_KEY = "not-needed"


class ChatStreamAssembler:
    """Turns Chat Completions stream chunks (as dicts) into stream events and a final response.

    ``feed(chunk)`` returns the deltas of one chunk; ``response()`` the whole reply as a
    ``chat.completion`` dict for :func:`~abridged.formats.openai_chat.completion_from_openai`.
    Tool calls are assembled by their ``index``; a server that sends no index (or reuses one for
    a call with a new id) gets the next free one. Shared with the LiteLLM adapter.
    """

    def __init__(self) -> None:
        self.id: str | None = None
        self.model: str | None = None
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.reasoning: list[str] = []
        self.reasoning_key = "reasoning_content"
        self.calls: list[dict[str, Any]] = []
        self._by_index: dict[int, int] = {}
        self.finish_reason: str | None = None
        self.usage: Mapping[str, Any] | None = None

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        """The events of one chunk (and remember what it carried)."""
        if isinstance(chunk.get("id"), str) and chunk["id"]:
            self.id = self.id or chunk["id"]
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self.model = self.model or chunk["model"]
        if isinstance(chunk.get("usage"), Mapping) and chunk["usage"]:
            self.usage = chunk["usage"]
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) not in (0, None):
                continue
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
            delta = choice.get("delta")
            if not isinstance(delta, Mapping):
                continue
            for key in ("reasoning_content", "reasoning"):
                piece = delta.get(key)
                if isinstance(piece, str) and piece:
                    self.reasoning_key = key
                    self.reasoning.append(piece)
                    events.append(ReasoningDelta(piece))
                    break
            content = delta.get("content")
            if isinstance(content, str) and content:
                self.text.append(content)
                events.append(TextDelta(content))
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                self.refusal.append(refusal)
                events.append(TextDelta(refusal))
            for call in delta.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    events.append(self._call_delta(call))
        return events

    def _call_delta(self, call: Mapping[str, Any]) -> ToolCallDelta:
        function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
        assert isinstance(function, Mapping)
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else None
        name = function.get("name") if isinstance(function.get("name"), str) else None
        arguments = function.get("arguments") if isinstance(function.get("arguments"), str) else ""
        wire_index = call.get("index")
        position: int | None = None
        if isinstance(wire_index, int) and wire_index in self._by_index:
            position = self._by_index[wire_index]
            known = self.calls[position]["id"]
            if call_id and known and call_id != known:
                position = None  # a new call under a reused index
        elif not isinstance(wire_index, int) and self.calls and not call_id:
            position = len(self.calls) - 1  # no index: continues the last call
        if position is None:
            position = len(self.calls)
            self.calls.append({"id": call_id or "", "name": "", "arguments": ""})
            if isinstance(wire_index, int):
                self._by_index[wire_index] = position
        entry = self.calls[position]
        if call_id and not entry["id"]:
            entry["id"] = call_id
        if name:
            entry["name"] += name
        entry["arguments"] += arguments or ""
        return ToolCallDelta(index=position, id=call_id, name=name, arguments=arguments or "")

    def response(self) -> dict[str, Any]:
        """The reply as a ``chat.completion`` object."""
        message: dict[str, Any] = {"role": "assistant"}
        text = "".join(self.text)
        message["content"] = text if text or not self.calls else None
        if self.reasoning:
            message[self.reasoning_key] = "".join(self.reasoning)
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": c["id"] or f"call_{n}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": c["arguments"]},
                }
                for n, c in enumerate(self.calls)
            ]
        out: dict[str, Any] = {
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        }
        if self.id:
            out["id"] = self.id
        if self.model:
            out["model"] = self.model
        if self.usage is not None:
            out["usage"] = dict(self.usage)
        return out


class OpenAIChatModel(StreamingModel):
    """A ``ChatModel`` for OpenAI and OpenAI-compatible endpoints (see the module docstring).

    ``name`` is ``model``. ``client`` replaces the SDK client built from the other arguments (for
    tests or custom transports). ``timeout`` (seconds, default 600) and ``max_retries`` (default
    0: abridged's runtime does the retrying, ``ConversationSettings.max_retries``; set it only
    for a model used outside the runtime) go to the SDK. ``http_client``: ``"aiohttp"`` for the
    SDK's aiohttp-backed client (see ``sdk_http_client``; close it with ``aclose``), or an HTTP
    client for the SDK; default, the SDK's own. Extra keyword arguments are default options of
    every call.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api: Literal["chat", "responses"] = "chat",
        client: Any = None,
        timeout: float = 600.0,
        max_retries: int = 0,
        azure_endpoint: str | None = None,
        api_version: str | None = None,
        organization: str | None = None,
        project: str | None = None,
        default_headers: Mapping[str, str] | None = None,
        reasoning_effort: str | None = None,
        reasoning_summary: str | None = None,
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None,
        stream_usage: bool = True,
        store: bool = False,
        encrypted_reasoning: bool = True,
        provider: str | None = None,
        http_client: Any = None,
        **defaults: Any,
    ) -> None:
        if not model or not isinstance(model, str):
            raise SettingError("model", model, "a model name")
        if api not in ("chat", "responses"):
            raise SettingError("api", api, '"chat" or "responses"')
        if max_tokens_param not in (None, "max_tokens", "max_completion_tokens"):
            raise SettingError(
                "max_tokens_param", max_tokens_param, '"max_tokens" or "max_completion_tokens"'
            )
        if timeout <= 0:
            raise SettingError("timeout", timeout, "a positive number of seconds")
        self._model = model
        self.api = api
        self.timeout = timeout
        self.reasoning_effort = reasoning_effort
        self.reasoning_summary = reasoning_summary
        self.stream_usage = stream_usage
        self.store = store
        self.encrypted_reasoning = encrypted_reasoning
        self.defaults: dict[str, Any] = dict(defaults)
        azure = azure_endpoint is not None or (
            client is not None and type(client).__name__.startswith("AsyncAzure")
        )
        env_base = os.environ.get("OPENAI_BASE_URL") if base_url is None and not azure else None
        effective_base = base_url or env_base
        host = ""
        if effective_base:
            try:
                host = (urlsplit(effective_base).hostname or "").lower()
            except ValueError:
                host = ""
        official = not azure and (effective_base is None or host in OPENAI_HOSTS)
        self.provider = provider or (
            "azure-openai" if azure else "openai" if official else "openai-compatible"
        )
        self.base_url = safe_url(effective_base if not azure else azure_endpoint)
        self.max_tokens_param = max_tokens_param or (
            "max_completion_tokens" if official or azure else "max_tokens"
        )
        key = api_key
        if key is None and client is None:
            if azure:
                key = os.environ.get("AZURE_OPENAI_API_KEY")
            elif official or (base_url is None and env_base is not None):
                # OpenAI itself, or OPENAI_BASE_URL paired with OPENAI_API_KEY by the user; a
                # base_url given here never receives the OpenAI key from the environment.
                key = os.environ.get("OPENAI_API_KEY")
        self._secrets: tuple[str, ...] = (key,) if key else ()
        # a client of the caller's (instrumented, wrapped, a stand-in) is called through its
        # own ``create``; one made here is posted to directly (``_post_stream``)
        self._own_client = client is None
        # each message's Chat Completions JSON, encoded once (``_chat_body``)
        self._encoded = EncodedMessages(message_json_openai)
        if client is not None:
            self._client = client
            return
        sdk = import_sdk("openai", "openai")
        if key is None:
            if official or azure:
                variable = "AZURE_OPENAI_API_KEY" if azure else "OPENAI_API_KEY"
                raise ProviderError(
                    f"no API key for {self.provider}: pass api_key or set {variable}",
                    provider=self.provider,
                )
            key = _PLACEHOLDER_KEY  # local servers (vLLM, Ollama) accept any key
        common: dict[str, Any] = {
            "api_key": key,
            "timeout": timeout,
            "max_retries": max_retries,
            "default_headers": dict(default_headers) if default_headers else None,
            "organization": organization,
            "project": project,
        }
        common.update(sdk_http_client(sdk, http_client))
        try:
            if azure:
                self._client = sdk.AsyncAzureOpenAI(
                    azure_endpoint=azure_endpoint, api_version=api_version, **common
                )
            else:
                self._client = sdk.AsyncOpenAI(base_url=effective_base, **common)
        except Exception as e:  # the SDK's own checks (Azure needs an api_version...)
            raise ProviderError(
                f"could not create the {self.provider} client: " + scrub(str(e), self._secrets),
                provider=self.provider,
            ) from None

    # -- identity -----------------------------------------------------------------------------

    def __repr__(self) -> str:
        base = f", base_url={self.base_url!r}" if self.base_url else ""
        return f"OpenAIChatModel(model={self._model!r}, api={self.api!r}{base})"

    # -- the protocol ---------------------------------------------------------------------------

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Call the model once, yielding deltas as they arrive, then the ``Completion``.

        Closing the iterator early (``aclose``, ``break`` then ``aclose``) closes the HTTP
        stream."""
        if self.api == "responses":
            return self._stream_responses(messages, tools, max_output_tokens, options)
        return self._stream_chat(messages, tools, max_output_tokens, options)

    # -- requests -------------------------------------------------------------------------------

    def _options(self, options: Mapping[str, Any], allowed: frozenset[str]) -> dict[str, Any]:
        merged = {**self.defaults, **options}
        return {k: v for k, v in merged.items() if k in allowed and v is not None}

    def chat_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The Chat Completions request body (without ``stream``), as it will be sent."""
        body: dict[str, Any] = {"model": self._model, "messages": messages_to_openai(messages)}
        wire_tools = tool_dicts_openai(tools)
        if wire_tools:
            body["tools"] = wire_tools
        if max_output_tokens is not None:
            body[self.max_tokens_param] = max_output_tokens
        if self.reasoning_effort is not None:
            body["reasoning_effort"] = self.reasoning_effort
        body.update(self._options(options, CHAT_OPTIONS))
        return body

    def _chat_body(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_output_tokens: int | None,
        options: Mapping[str, Any],
    ) -> tuple[bytes, dict[str, Any]] | None:
        """The streamed Chat Completions body as the SDK would encode ``chat_request``'s,
        byte for byte, joined from each message's JSON encoded once (``EncodedMessages``):
        a call converts and encodes only the messages new since the last one. ``None`` when
        the body cannot go as bytes (``extra_body`` to merge, text that is no valid UTF-8:
        ``send_encodable`` repairs it) or the client is the caller's. With it, the SDK's own
        options of the call (``extra_headers``, ``extra_query``, ``timeout``)."""
        if not self._own_client or {**self.defaults, **options}.get("extra_body") is not None:
            return None
        body = self.chat_request((), tools, max_output_tokens, **options)
        body["stream"] = True
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        model = body.pop("model")
        del body["messages"]  # ``chat_request`` puts it second, after ``model``
        sdk = {name: body.pop(name) for name in _SDK_OPTIONS if name in body}
        try:
            rest = wire_json(body)
            data = b"".join(
                [
                    b'{"model":',
                    wire_json(model),
                    b',"messages":[',
                    self._encoded.join(messages),
                    b"]",
                    b"," + rest[1:] if len(rest) > 2 else b"}",
                ]
            )
        except (UnicodeEncodeError, ValueError):
            return None
        return data, sdk

    def responses_request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """The Responses request body (without ``stream``), as it will be sent."""
        body: dict[str, Any] = {
            "model": self._model,
            "input": messages_to_responses(messages),
            "store": self.store,
        }
        if self.encrypted_reasoning:
            body["include"] = ["reasoning.encrypted_content"]
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    **({"description": t.description} if t.description else {}),
                    "parameters": dict(t.parameters),
                }
                for t in tools
            ]
        if max_output_tokens is not None:
            body["max_output_tokens"] = max_output_tokens
        merged = {**self.defaults, **options}
        effort = merged.get("reasoning_effort", self.reasoning_effort)
        summary = merged.get("reasoning_summary", self.reasoning_summary)
        if effort is not None or summary is not None:
            reasoning: dict[str, Any] = {}
            if effort is not None:
                reasoning["effort"] = effort
            if summary is not None:
                reasoning["summary"] = summary
            body["reasoning"] = reasoning
        body.update(self._options(options, RESPONSES_OPTIONS))
        return body

    # -- errors ---------------------------------------------------------------------------------

    def _mapping_errors(self) -> AbstractContextManager[None]:
        return mapping_errors(
            provider=self.provider, model=self._model, secrets=self._secrets, timeout=self.timeout
        )

    def _event_error(self, error: Any) -> BaseException:
        """The abridged error for an error carried by a stream event (no HTTP status)."""
        body = error if isinstance(error, Mapping) else {"message": str(error)}
        info = is_context_overflow((None, body))
        where = f"{self.provider} ({self._model})"
        if info is not None:
            return ContextOverflowError(
                f"{where} rejected the request as too long for the context window: "
                + scrub(info.message, self._secrets),
                tokens=info.tokens,
                limit=info.limit,
                provider=self.provider,
                model=self._model,
                rule=info.rule,
            )
        message = body.get("message") if isinstance(body.get("message"), str) else str(body)
        return ProviderError(
            f"{where} failed: " + scrub(str(message), self._secrets),
            provider=self.provider,
            model=self._model,
            code=body.get("code") if isinstance(body.get("code"), str) else None,
        )

    def _post_stream(
        self, path: str, create: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        """On a client made here: a streamed ``POST`` through the SDK's client (its retries,
        errors, headers), without its per-call walk of the parameters' TypedDicts and its
        typed chunks: the body is already the wire JSON, and the chunks are read as dicts.
        That walk was most of a turn's CPU on a tool-heavy history (``bench/service.py``;
        the figure is in ``bench/RESULTS.md``, "moved from docstrings"). On the caller's
        client: ``create``."""
        if not self._own_client:
            return create
        from openai import AsyncStream  # noqa: PLC0415

        async def post(*, content: bytes | None = None, **body: Any) -> Any:
            options = {
                key: body.pop(name)
                for name, key in _SDK_OPTIONS.items()
                if body.get(name) is not None
            }
            if content is not None:  # the body encoded already (``_chat_body``)
                return await self._client.post(
                    path,
                    cast_to=object,
                    content=content,
                    options=options,
                    stream=True,
                    stream_cls=AsyncStream[object],
                )
            return await self._client.post(
                path,
                cast_to=object,
                body=body,
                options=options,
                stream=True,
                stream_cls=AsyncStream[object],
            )

        return post

    # -- Chat Completions ---------------------------------------------------------------------

    async def _stream_chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_output_tokens: int | None,
        options: Mapping[str, Any],
    ) -> AsyncIterator[StreamEvent]:
        encoded = self._chat_body(messages, tools, max_output_tokens, options)
        timer = Timer()
        assembler = ChatStreamAssembler()
        with self._mapping_errors():
            post = self._post_stream("/chat/completions", self._client.chat.completions.create)
            if encoded is not None:
                stream = await post(content=encoded[0], **encoded[1])
            else:
                body = self.chat_request(messages, tools, max_output_tokens, **options)
                body["stream"] = True
                if self.stream_usage:
                    body["stream_options"] = {"include_usage": True}
                stream = await send_encodable(post, body)
        try:
            with self._mapping_errors():
                async for chunk in stream:
                    for event in assembler.feed(as_dict(chunk)):
                        timer.token()
                        yield event
        finally:
            await close_stream(stream)
        yield timed_completion(
            completion_from_openai(assembler.response()),
            timer,
            assembler.finish_reason,
            assembler.model or self._model,
        )

    # -- Responses ------------------------------------------------------------------------------

    async def _stream_responses(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        max_output_tokens: int | None,
        options: Mapping[str, Any],
    ) -> AsyncIterator[StreamEvent]:
        body = self.responses_request(messages, tools, max_output_tokens, **options)
        body["stream"] = True
        timer = Timer()
        calls: dict[int, int] = {}  # output_index -> tool call index
        final: Mapping[str, Any] | None = None
        with self._mapping_errors():
            create = self._client.responses.create
            stream = await send_encodable(self._post_stream("/responses", create), body)
        try:
            with self._mapping_errors():
                async for raw in stream:
                    event = as_dict(raw)
                    kind = event.get("type")
                    delta = event.get("delta") if isinstance(event.get("delta"), str) else ""
                    out: StreamEvent | None = None
                    if kind in ("response.output_text.delta", "response.refusal.delta") and delta:
                        out = TextDelta(delta)
                    elif (
                        kind
                        in (
                            "response.reasoning_summary_text.delta",
                            "response.reasoning_text.delta",
                        )
                        and delta
                    ):
                        out = ReasoningDelta(delta)
                    elif kind == "response.output_item.added":
                        item = event.get("item")
                        if isinstance(item, Mapping) and item.get("type") == "function_call":
                            index = len(calls)
                            calls[int(event.get("output_index", index))] = index
                            out = ToolCallDelta(
                                index=index,
                                id=item.get("call_id"),
                                name=item.get("name"),
                                arguments=str(item.get("arguments") or ""),
                            )
                    elif kind == "response.function_call_arguments.delta" and delta:
                        index = calls.get(int(event.get("output_index", -1)), len(calls) - 1)
                        out = ToolCallDelta(index=max(index, 0), arguments=delta)
                    elif kind in ("response.completed", "response.incomplete"):
                        response = event.get("response")
                        final = response if isinstance(response, Mapping) else None
                    elif kind == "response.failed":
                        response = event.get("response")
                        error = response.get("error") if isinstance(response, Mapping) else None
                        raise self._event_error(error or {"message": "response failed"})
                    elif kind == "error":
                        raise self._event_error(event.get("error") or event)
                    if out is not None:
                        timer.token()
                        yield out
        finally:
            await close_stream(stream)
        if final is None:
            raise ProviderError(
                f"{self.provider} ({self._model}): the stream ended without a response",
                provider=self.provider,
                model=self._model,
            )
        yield self._responses_completion(final, timer)

    def _responses_completion(self, response: Mapping[str, Any], timer: Timer) -> Completion:
        output = [item for item in response.get("output") or () if isinstance(item, Mapping)]
        parsed = messages_from_responses(output) if output else []
        parts = tuple(p for m in parsed if m.role == "assistant" for p in m.parts)
        meta: dict[str, Any] = {}
        for m in parsed:
            meta.update(m.meta)
        usage = usage_from_openai(
            response.get("usage") if isinstance(response.get("usage"), Mapping) else None
        )
        for key, value in (
            ("response_id", response.get("id")),
            ("model", response.get("model")),
            ("stop_reason", response.get("status")),
        ):
            if isinstance(value, str):
                meta[key] = value
        raw_reason = response.get("status")
        details = response.get("incomplete_details")
        if raw_reason == "incomplete" and isinstance(details, Mapping):
            raw_reason = details.get("reason")
        return timed_completion(
            Message("assistant", parts, meta=meta, usage=usage),
            timer,
            raw_reason if isinstance(raw_reason, str) else None,
            response.get("model") if isinstance(response.get("model"), str) else None,
        )
