"""Shared pieces of the provider adapters: timing, finish reasons, SDK import, safe reprs.

**Timing.** Every adapter streams and records, per reply, the time to the first streamed token
(text, reasoning or tool-call delta) and the total time, both from just before the request is
sent, in milliseconds: ``Completion.message.meta["timing"] = {"ttft_ms": 412.3,
"total_ms": 2310.8}`` (``ttft_ms`` is ``None`` when nothing was streamed before the end).

**Finish reasons** are normalised to ``"stop"``, ``"length"``, ``"tool_calls"``,
``"content_filter"`` or ``None`` (see :func:`normalise_finish`).

**Consuming a stream.** :class:`StreamingModel` gives every adapter its ``complete`` (the
``Completion`` that ends its ``stream``); :func:`mapping_errors` turns an SDK exception into
abridged's error (:func:`~abridged.providers.overflow.error_from_exception`), raised ``from
None``; :func:`close_stream` closes an SDK stream; :func:`as_dict` makes a plain dict of an SDK
event; :func:`timed_completion` builds the final ``Completion`` with its timing.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from abridged.core.model import Message
from abridged.core.protocols import Completion, StreamEvent, ToolSpec
from abridged.errors import ProviderError
from abridged.providers.overflow import error_from_exception

__all__ = [
    "StreamingModel",
    "Timer",
    "as_dict",
    "close_stream",
    "import_sdk",
    "mapping_errors",
    "normalise_finish",
    "safe_url",
    "send_encodable",
    "timed_completion",
    "tool_choice_for_anthropic",
    "tool_dicts_openai",
    "with_timing",
]

_FINISH: dict[str, str] = {
    # OpenAI Chat Completions and compatible servers
    "stop": "stop",
    "eos": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    # Anthropic
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    # OpenAI Responses (status / incomplete_details.reason)
    "completed": "stop",
    "max_output_tokens": "length",
    # Gemini through compatible endpoints
    "safety": "content_filter",
    "recitation": "content_filter",
}


def normalise_finish(raw: str | None, *, has_tool_calls: bool) -> str | None:
    """A provider's stop reason as ``"stop"``, ``"length"``, ``"tool_calls"``,
    ``"content_filter"`` or ``None`` (unknown).

    A reply that calls tools is ``"tool_calls"`` when the provider said ``"stop"`` or nothing
    (Ollama and some compatible servers do), but stays ``"length"`` when it was cut off.

    >>> normalise_finish("end_turn", has_tool_calls=False)
    'stop'
    >>> normalise_finish("stop", has_tool_calls=True)
    'tool_calls'
    """
    reason = _FINISH.get(raw.lower()) if isinstance(raw, str) else None
    if has_tool_calls and reason in (None, "stop"):
        return "tool_calls"
    return reason


class Timer:
    """Time to first token and total time of one call (monotonic clock, milliseconds)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.first: float | None = None

    def token(self) -> None:
        """Mark that a token arrived (only the first one counts)."""
        if self.first is None:
            self.first = time.perf_counter()

    def timing(self) -> dict[str, float | None]:
        """``{"ttft_ms": ..., "total_ms": ...}`` as of now."""
        end = time.perf_counter()
        ttft = None if self.first is None else round((self.first - self.start) * 1000, 1)
        return {"ttft_ms": ttft, "total_ms": round((end - self.start) * 1000, 1)}


def with_timing(message: Message, timing: Mapping[str, float | None]) -> Message:
    """``message`` with ``meta["timing"]`` set."""
    return message.replace(meta={**message.meta, "timing": dict(timing)})


def timed_completion(
    message: Message, timer: Timer, raw_finish: str | None, model: str | None
) -> Completion:
    """The ``Completion`` ending a stream: ``message`` with its timing, the finish normalised."""
    message = with_timing(message, timer.timing())
    return Completion(
        message=message,
        usage=message.usage,
        finish_reason=normalise_finish(raw_finish, has_tool_calls=bool(message.tool_calls)),
        model=model,
    )


class StreamingModel:
    """Base of the streaming adapters: ``name`` is the model, ``complete`` consumes ``stream``
    (which subclasses give) and returns the ``Completion`` it ends with."""

    provider: str
    _model: str

    @property
    def name(self) -> str:
        """The model name (a LiteLLM model string, an Azure deployment...)."""
        return self._model

    async def aclose(self) -> None:
        """Close the SDK client this adapter made (its connections); a client the caller
        passed in is the caller's to close. The model is not used after."""
        client = getattr(self, "_client", None)
        close = getattr(client, "close", None)
        if getattr(self, "_own_client", False) and callable(close):
            await close()

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> AsyncIterator[StreamEvent]:
        """Call the model once, yielding deltas as they arrive, then the ``Completion``."""
        raise NotImplementedError

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        max_output_tokens: int | None = None,
        **options: Any,
    ) -> Completion:
        """Call the model once (streaming underneath) and return its ``Completion``."""
        result: Completion | None = None
        async for event in self.stream(
            messages, tools=tools, max_output_tokens=max_output_tokens, **options
        ):
            if isinstance(event, Completion):
                result = event
        if result is None:  # pragma: no cover - stream always ends with a Completion
            raise ProviderError("the stream ended without a completion", provider=self.provider)
        return result


@contextmanager
def mapping_errors(
    *, provider: str, model: str | None, secrets: Sequence[str | None], timeout: float | None
) -> Iterator[None]:
    """Raise an SDK exception in the block as abridged's error (``from None``, so the request
    and its headers are not chained); other exceptions propagate unchanged."""
    try:
        yield
    except Exception as e:
        mapped = error_from_exception(
            e, provider=provider, model=model, secrets=secrets, timeout=timeout
        )
        if mapped is e:
            raise
        raise mapped from None


async def send_encodable(create: Callable[..., Awaitable[Any]], body: Mapping[str, Any]) -> Any:
    """``create(**body)``; when the body cannot be encoded as UTF-8 (a lone surrogate from a
    user or a tool), again with those replaced by U+FFFD (``abridged.formats.wire.encodable``)."""
    try:
        return await create(**body)
    except UnicodeEncodeError:
        from abridged.formats.wire import encodable  # noqa: PLC0415

        return await create(**encodable(dict(body)))


async def close_stream(stream: Any) -> None:
    """Close an SDK stream (the HTTP response) if it can be closed."""
    close = getattr(stream, "close", None)
    if callable(close):
        await close()


def as_dict(obj: Any, what: str = "item") -> dict[str, Any]:
    """An SDK object (pydantic model) or a mapping as a plain dict of what the server sent."""
    if isinstance(obj, Mapping):
        return dict(obj)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        result = to_dict()
        if isinstance(result, dict):
            return result
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        result = dump(exclude_unset=True)
        if isinstance(result, dict):
            return result
    raise ProviderError(f"unexpected stream {what} of type {type(obj).__name__}")


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import a provider SDK, or raise ``ProviderError`` saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ProviderError(
            f"the {module!r} package is not installed: pip install 'abridged[{extra}]'",
            provider=extra,
        ) from None


def sdk_http_client(sdk: ModuleType, choice: Any) -> dict[str, Any]:
    """The ``http_client`` argument of an SDK client for an adapter's ``http_client`` setting:
    ``None``, the SDK's default (httpx); ``"aiohttp"``, the SDK's own aiohttp-backed client
    (``DefaultAioHttpClient``: the same SDK, its retries and errors, over aiohttp) when the
    SDK has one and aiohttp is installed (the ``server`` extra), else the default; any other
    value is the caller's client, given to the SDK as it is.

    A streamed call costs less CPU over aiohttp, which is what a worker holding many streams
    runs out of first (``bench/service.py``; the figures are in ``bench/RESULTS.md``, "moved
    from docstrings"). Not the default: an aiohttp session left unclosed warns when the
    process ends, and a library user rarely closes a model (``aclose``); the service does."""
    if choice is None:
        return {}
    if choice != "aiohttp":
        return {"http_client": choice}
    make = getattr(sdk, "DefaultAioHttpClient", None)
    if make is None or importlib.util.find_spec("aiohttp") is None:
        return {}
    try:
        return {"http_client": make()}
    except Exception:  # an SDK whose aiohttp support needs a package that is missing
        return {}


def safe_url(url: str | None) -> str | None:
    """``url`` without credentials, query or fragment (for reprs and messages).

    >>> safe_url("https://user:secret@host.example/v1?api-key=abc")
    'https://host.example/v1'
    """
    if url is None:
        return None
    try:
        parts = urlsplit(str(url))
    except ValueError:
        return "<invalid url>"
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def tool_dicts_openai(tools: Sequence[ToolSpec] | None) -> list[dict[str, Any]] | None:
    """Tools in Chat Completions form (``{"type": "function", "function": {...}}``)."""
    if not tools:
        return None
    out = []
    for t in tools:
        function: dict[str, Any] = {"name": t.name}
        if t.description:
            function["description"] = t.description
        function["parameters"] = dict(t.parameters)
        out.append({"type": "function", "function": function})
    return out


def tool_choice_for_anthropic(choice: Any) -> Any:
    """An OpenAI-style ``tool_choice`` in Anthropic's form (dicts pass through).

    ``"auto"``, ``"none"``, ``"required"``/``"any"``, a tool name wrapped as OpenAI spells it
    (``{"type": "function", "function": {"name": ...}}``) or as a plain name in ``{"name": ...}``.
    """
    if isinstance(choice, str):
        if choice in ("required", "any"):
            return {"type": "any"}
        return {"type": choice}
    if isinstance(choice, Mapping):
        function = choice.get("function")
        if choice.get("type") == "function" and isinstance(function, Mapping):
            return {"type": "tool", "name": function.get("name")}
        return dict(choice)
    return choice
