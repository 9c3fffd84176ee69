"""Probe an OpenAI-compatible ``/models`` endpoint for a model's context window (an edge: I/O).

What servers list (checked against their sources and docs):

- vLLM (and SGLang): ``{"object": "list", "data": [{"id": ..., "max_model_len": 32768, ...}]}``;
  ``max_model_len`` is the server's configured window (``--max-model-len``), input plus output.
- OpenRouter: ``context_length`` per model, and ``top_provider`` with ``context_length`` and
  ``max_completion_tokens``; the smaller of the two context lengths is used, because requests
  may be routed to the top provider.
- Groq: ``context_window`` and ``max_completion_tokens``. Mistral: ``max_context_length``.
  Together and Fireworks: ``context_length``. Anthropic-style listings: ``max_input_tokens``.
- OpenAI itself, Ollama (``/v1/models`` lists only id, object, created, owned_by) and LM Studio's
  OpenAI-compatible route list no window: the probe answers ``None`` with a reason and the
  registry or default applies. llama.cpp's ``meta.n_ctx_train`` is the trained length, not the
  server's ``--ctx-size``, so it is not used.

URL: the base URL with a trailing ``/v1`` (or ``/v1/``) removed, then ``/v1/models``:
``http://localhost:8000/v1`` and ``http://localhost:8000`` both give
``http://localhost:8000/v1/models``; OpenRouter's ``https://openrouter.ai/api/v1`` gives
``https://openrouter.ai/api/v1/models``; Ollama's ``http://localhost:11434/v1/`` gives
``http://localhost:11434/v1/models``. A base URL that already ends in ``/v1/models`` is used as is.

Failures never raise into the caller: every probe returns a :class:`ProbeResult` whose
``limits`` is ``None`` and whose ``reason`` says why (timeout, HTTP status, invalid JSON, model not
listed, no window field). ``timeout`` (default 2 s) bounds the whole probe. The API key is sent as
``Authorization: Bearer ...`` and scrubbed from every reason; URLs in reasons lose their
credentials and query. Redirects are not followed (they could carry the key elsewhere).

Results are cached per process in a :class:`~abridged.core.windows.TTLCache` keyed by models URL
and model name: answers (including "listed without a window") for ``ttl`` (default 1 hour),
transport failures and non-200 statuses for ``failure_ttl`` (default 5 minutes), so a dead
endpoint does not cost a timeout on every turn.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from abridged.core.windows import MAX_TOKENS, ProbedLimits, TTLCache, model_name_candidates
from abridged.errors import ProviderError, SettingError

DEFAULT_TIMEOUT = 2.0
DEFAULT_TTL = 3600.0
DEFAULT_FAILURE_TTL = 300.0
MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest ``/models`` body read (OpenRouter's full list is well under this)."""

WINDOW_FIELDS: tuple[str, ...] = (
    "max_model_len",
    "context_length",
    "context_window",
    "max_context_length",
    "max_input_tokens",
)
"""Fields of a listed model that give its window, in order of preference."""

OUTPUT_FIELDS: tuple[str, ...] = ("max_completion_tokens", "max_output_tokens")
"""Fields that give its output limit (OpenRouter's sit under ``top_provider``)."""

ProbeKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """The outcome of one probe: ``limits``, or ``None`` and a ``reason`` (never a secret).

    ``url`` is the endpoint probed, without credentials or query; ``status`` the HTTP status when
    one was received; ``cached`` whether this came from the cache; ``transient`` whether the
    failure is worth retrying sooner than a definitive answer (no response, or a status other
    than 200, e.g. a 401 that a corrected key will fix); transient failures are cached for
    ``failure_ttl`` only.
    """

    limits: ProbedLimits | None
    reason: str | None
    url: str
    status: int | None = None
    cached: bool = False
    transient: bool = False

    @property
    def ok(self) -> bool:
        """True when the endpoint gave a window for the model."""
        return self.limits is not None


_CACHE: TTLCache[ProbeKey, ProbeResult] = TTLCache(DEFAULT_TTL, max_entries=512)
_CACHE_LOCK = threading.Lock()


def probe_cache() -> TTLCache[ProbeKey, ProbeResult]:
    """The process-wide probe cache (for inspection or :meth:`~TTLCache.clear`)."""
    return _CACHE


def clear_probe_cache() -> None:
    """Forget every cached probe result."""
    with _CACHE_LOCK:
        _CACHE.clear()


# --- URLs and secrets --------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """``url`` without user name, password, query or fragment (safe to show in messages)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if ":" in host:
        host = f"[{host}]"
    if port is not None:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def models_url(base_url: str) -> str:
    """The ``/v1/models`` URL for an OpenAI-compatible base URL (see the module doc).

    Raises :class:`~abridged.errors.SettingError` (naming ``base_url``, credentials removed) for
    anything but an absolute http(s) URL.
    """
    text = base_url.strip() if isinstance(base_url, str) else ""
    try:
        parts = urlsplit(text)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        shown = redact_url(text) if text else base_url
        raise SettingError("base_url", shown, "an absolute http:// or https:// URL")
    path = parts.path.rstrip("/")
    if not path.endswith("/v1/models"):
        if path.endswith("/v1"):
            path = path[: -len("/v1")]
        path = f"{path}/v1/models"
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _scrub(text: str, api_key: str | None) -> str:
    if api_key and len(api_key) >= 4:
        text = text.replace(api_key, "***")
    return re.sub(r"(?i)(bearer\s+)\S+", r"\1***", text)


def _snippet(body: bytes, limit: int = 200) -> str:
    text = body[:limit].decode("utf-8", errors="replace")
    text = " ".join(text.split())
    return text + ("..." if len(body) > limit else "")


# --- parsing -----------------------------------------------------------------------------------


def _tokens(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    else:
        return None
    return number if 1 <= number <= MAX_TOKENS else None


def _listed_models(payload: Any) -> list[Mapping[str, Any]] | None:
    if isinstance(payload, Mapping):
        data = payload.get("data")
        if data is None:
            data = payload.get("models")
    else:
        data = payload
    if not isinstance(data, list):
        return None
    return [item for item in data if isinstance(item, Mapping)]


def find_listed_model(listed: list[Mapping[str, Any]], model: str) -> Mapping[str, Any] | None:
    """The listed entry for ``model``: by exact id, then case-insensitively, then with provider
    prefixes stripped from ``model`` (``openrouter/anthropic/x`` finds ``anthropic/x``)."""
    by_id: dict[str, Mapping[str, Any]] = {}
    by_lower: dict[str, Mapping[str, Any]] = {}
    for item in listed:
        ident = item.get("id")
        if isinstance(ident, str):
            by_id.setdefault(ident, item)
            by_lower.setdefault(ident.lower(), item)
    if model in by_id:
        return by_id[model]
    for candidate in model_name_candidates(model, fuzzy=False):
        if candidate.lower() in by_lower:
            return by_lower[candidate.lower()]
    return None


def parse_models_payload(
    payload: Any, model: str, *, url: str = ""
) -> tuple[ProbedLimits | None, str | None]:
    """Read ``model``'s limits from a decoded ``/models`` body: ``(limits, None)`` or
    ``(None, reason)``."""
    listed = _listed_models(payload)
    if listed is None:
        return None, "unexpected response shape: no 'data' list of models"
    item = find_listed_model(listed, model)
    if item is None:
        return None, f"model {model!r} is not listed ({len(listed)} models listed)"
    top = item.get("top_provider")
    top = top if isinstance(top, Mapping) else {}

    window: int | None = None
    field = ""
    for name in WINDOW_FIELDS:
        value = _tokens(item.get(name))
        if value is not None:
            window, field = value, name
            break
    top_window = _tokens(top.get("context_length"))
    if top_window is not None and (window is None or top_window < window):
        window, field = top_window, "top_provider.context_length"
    if window is None:
        return None, f"model {model!r} is listed without a context length field"

    output: int | None = None
    for name in OUTPUT_FIELDS:
        output = _tokens(top.get(name))
        if output is None:
            output = _tokens(item.get(name))
        if output is not None:
            break
    ident = item.get("id")
    return (
        ProbedLimits(
            context_window=window,
            max_output=min(output, window) if output is not None else None,
            model_id=ident if isinstance(ident, str) else model,
            field=field,
            url=url,
        ),
        None,
    )


# --- transport ---------------------------------------------------------------------------------


class _ProbeFailedError(ProviderError):
    """One probe request failed (internal: the probe reports it as a result, never raises it)."""

    def __init__(self, reason: str, *, status: int | None = None, transient: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.transient = transient


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def _check_status(status: int, body: bytes, shown_url: str) -> None:
    if status != 200:
        detail = _snippet(body)
        raise _ProbeFailedError(
            f"HTTP {status} from {shown_url}" + (f": {detail}" if detail else ""),
            status=status,
        )


def _decode(body: bytes, status: int) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise _ProbeFailedError(
            f"response is not valid JSON ({exc.__class__.__name__}; starts {_snippet(body, 80)!r})",
            status=status,
            transient=False,
        ) from exc


def _transport_reason(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        kind = type(exc).__name__
        return f"timed out after {timeout:g} s ({kind})"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return f"unexpected error: {type(exc).__name__}: {exc}"


def _settings(timeout: float, ttl: float, failure_ttl: float) -> None:
    for name, value in (("timeout", timeout), ("ttl", ttl), ("failure_ttl", failure_ttl)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise SettingError(name, value, "a number of seconds greater than 0")


def _cache_get(
    cache: TTLCache[ProbeKey, ProbeResult], key: ProbeKey, now: float
) -> ProbeResult | None:
    with _CACHE_LOCK:
        hit = cache.get(key, now=now)
    return replace(hit, cached=True) if hit is not None else None


def _cache_put(
    *,
    cache: TTLCache[ProbeKey, ProbeResult],
    key: ProbeKey,
    result: ProbeResult,
    now: float,
    ttl: float,
    failure_ttl: float,
) -> None:
    life = failure_ttl if result.transient else ttl
    with _CACHE_LOCK:
        cache.put(key, result, now=now, ttl=life)


def _prepare(base_url: str, model: str, api_key: str | None) -> tuple[str, str, ProbeResult | None]:
    """(models URL, URL to show, early failure): a bad base URL fails here, without a request."""
    try:
        url = models_url(base_url)
    except SettingError as exc:
        return "", "", ProbeResult(None, _scrub(str(exc), api_key), url="")
    if not isinstance(model, str) or not model.strip():
        return url, redact_url(url), ProbeResult(None, "no model name given", url=redact_url(url))
    return url, redact_url(url), None


def _finish(body: bytes, status: int, model: str, shown: str, api_key: str | None) -> ProbeResult:
    _check_status(status, body, shown)
    limits, reason = parse_models_payload(_decode(body, status), model, url=shown)
    if limits is None:
        return ProbeResult(None, _scrub(reason or "no limits", api_key), shown, status=status)
    return ProbeResult(limits, None, shown, status=status)


async def probe_model_limits(
    base_url: str,
    model: str,
    *,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    client: httpx.AsyncClient | None = None,
    cache: TTLCache[ProbeKey, ProbeResult] | None = None,
    use_cache: bool = True,
    ttl: float = DEFAULT_TTL,
    failure_ttl: float = DEFAULT_FAILURE_TTL,
    clock: Callable[[], float] = time.monotonic,
) -> ProbeResult:
    """Ask ``base_url``'s ``/v1/models`` for ``model``'s window; never raises on failure.

    ``client`` may be shared (it is not closed; its own timeouts apply per request, and
    ``timeout`` still bounds the whole probe). ``cache`` defaults to the process-wide one;
    ``use_cache=False`` bypasses it. Invalid ``timeout``/``ttl``/``failure_ttl`` values raise
    :class:`~abridged.errors.SettingError` (a programming error, not a probe failure).
    """
    _settings(timeout, ttl, failure_ttl)
    url, shown, early = _prepare(base_url, model, api_key)
    if early is not None:
        return early
    store = cache if cache is not None else _CACHE
    key = (url, model.strip())
    if use_cache and (hit := _cache_get(store, key, clock())) is not None:
        return hit

    try:
        async with asyncio.timeout(timeout):
            status, body = await _fetch_async(url, api_key, timeout, client)
        result = _finish(body, status, model.strip(), shown, api_key)
    except Exception as exc:  # never raise into the chat path
        result = _failed(exc, shown, api_key, timeout)
    if use_cache:
        _cache_put(
            cache=store, key=key, result=result, now=clock(), ttl=ttl, failure_ttl=failure_ttl
        )
    return result


def _failed(exc: Exception, shown: str, api_key: str | None, timeout: float) -> ProbeResult:
    """The result of a probe that failed with ``exc`` (the key scrubbed from the reason)."""
    if isinstance(exc, _ProbeFailedError):
        return ProbeResult(
            None, _scrub(exc.reason, api_key), shown, status=exc.status, transient=exc.transient
        )
    return ProbeResult(
        None, _scrub(_transport_reason(exc, timeout), api_key), shown, transient=True
    )


class _Body:
    """A response body read in chunks, refused past ``MAX_BODY_BYTES``."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > MAX_BODY_BYTES:
            raise _ProbeFailedError(
                f"response larger than {MAX_BODY_BYTES:,} bytes",
                status=self.status,
                transient=False,
            )
        self.chunks.append(chunk)

    def content(self) -> bytes:
        return b"".join(self.chunks)


async def _fetch_async(
    url: str, api_key: str | None, timeout: float, client: httpx.AsyncClient | None
) -> tuple[int, bytes]:
    own = client is None
    http = client or httpx.AsyncClient(timeout=httpx.Timeout(timeout), follow_redirects=False)
    try:
        async with http.stream(
            "GET", url, headers=_headers(api_key), follow_redirects=False
        ) as response:
            body = _Body(response.status_code)
            async for chunk in response.aiter_bytes():
                body.add(chunk)
            return response.status_code, body.content()
    finally:
        if own:
            await http.aclose()


def probe_model_limits_sync(
    base_url: str,
    model: str,
    *,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    client: httpx.Client | None = None,
    cache: TTLCache[ProbeKey, ProbeResult] | None = None,
    use_cache: bool = True,
    ttl: float = DEFAULT_TTL,
    failure_ttl: float = DEFAULT_FAILURE_TTL,
    clock: Callable[[], float] = time.monotonic,
) -> ProbeResult:
    """Blocking :func:`probe_model_limits` (same arguments, with an ``httpx.Client``)."""
    _settings(timeout, ttl, failure_ttl)
    url, shown, early = _prepare(base_url, model, api_key)
    if early is not None:
        return early
    store = cache if cache is not None else _CACHE
    key = (url, model.strip())
    if use_cache and (hit := _cache_get(store, key, clock())) is not None:
        return hit

    try:
        status, body = _fetch_sync(url, api_key, timeout, client)
        result = _finish(body, status, model.strip(), shown, api_key)
    except Exception as exc:  # never raise into the chat path
        result = _failed(exc, shown, api_key, timeout)
    if use_cache:
        _cache_put(
            cache=store, key=key, result=result, now=clock(), ttl=ttl, failure_ttl=failure_ttl
        )
    return result


def _fetch_sync(
    url: str, api_key: str | None, timeout: float, client: httpx.Client | None
) -> tuple[int, bytes]:
    deadline = time.monotonic() + timeout
    own = client is None
    http = client or httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False)
    try:
        with http.stream("GET", url, headers=_headers(api_key), follow_redirects=False) as response:
            body = _Body(response.status_code)
            for chunk in response.iter_bytes():
                body.add(chunk)
                if time.monotonic() > deadline:
                    raise TimeoutError("deadline passed while reading the body")
            return response.status_code, body.content()
    finally:
        if own:
            http.close()
