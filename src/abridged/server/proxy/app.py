"""The proxy's application: ``create_proxy_app(ProxyConfig(upstream=...))``.

``POST /v1/chat/completions`` (OpenAI), ``POST /v1/responses`` (OpenAI Responses, with the
whole history in ``input``) and ``POST /v1/messages`` (Anthropic): the history the app sent is
stored, the context abridged would send goes upstream instead (the very request bytes while
nothing was pruned or compacted), the answer goes back as it comes (an event stream chunk by
chunk, a JSON answer whole, in one write), and its usage
calibrates the next decision. An upstream "context too long" error runs the emergency path and
one retry; every other upstream error is passed back unchanged. A Responses request that lets
the provider keep the history (``previous_response_id``, ``conversation``) holds only its new
items and is passed through, as is everything else under ``/v1`` (``/v1/models``, token
counting...). ``X-Abridged: off`` passes a request through untouched.

Everything under ``/v1`` is served by plain ASGI (``ProxyApp``), not by FastAPI's routing and
``StreamingResponse``: what the proxy adds to a request is its headline figure, and that
machinery was a large share of it (``bench/proxy.py``; the figure is in ``bench/RESULTS.md``,
"moved from docstrings"). The pages (``/healthz``,
``/metrics``, the meter) are a FastAPI application behind it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib.resources import files
from typing import Any

import aiohttp
from fastapi import FastAPI
from fastapi.responses import Response
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from starlette.requests import ClientDisconnect
from starlette.types import Message, Receive, Scope, Send

from abridged.core.model import Usage
from abridged.errors import (
    AbridgedError,
    ContextOverflowError,
    FormatError,
    MessageValidationError,
    NotFoundError,
    StoreError,
)
from abridged.providers.overflow import connection_failure, is_context_overflow
from abridged.providers.streaming import safe_url
from abridged.runtime.context_manager import ContextManager, Prepared
from abridged.server.headers import header_problem
from abridged.server.lease import LocalTurns, TurnBusyError, hold_turn, new_holder
from abridged.server.metrics import CONTENT_TYPE
from abridged.server.process import tune_gc_for_serving
from abridged.server.proxy.apis import Api, history_key, history_of
from abridged.server.proxy.body import BodyReader, declared_length, read_body
from abridged.server.proxy.config import ProxyConfig
from abridged.server.proxy.conversations import ProxyConversations
from abridged.server.proxy.identity import IDENTITY_HEADERS, conversation_identity, key_scope
from abridged.server.proxy.pages import RecentRequests
from abridged.server.proxy.pages import router as page_routes
from abridged.server.proxy.replies import PASSTHROUGH_HEADER, Shape, error_body, shape_of
from abridged.server.proxy.requestlog import RequestLine, action_of, log_request
from abridged.server.proxy.upstream import (
    UPSTREAM_ERRORS,
    Upstream,
    UsageTap,
    forward_headers,
    response_headers,
)
from abridged.server.sse import send_stream
from abridged.store import Store

__all__ = ["ProxyApp", "create_proxy_app", "proxy_app_from_environment"]

log = logging.getLogger("abridged.proxy")
_OFF = frozenset({"off", "0", "false", "no"})
_MANAGED: dict[str, Api] = {
    "/v1/chat/completions": "openai-chat",
    "/v1/responses": "openai-responses",
    "/v1/messages": "anthropic",
}

Headers = list[tuple[bytes, bytes]]


class ProxyMetrics:
    """The proxy's Prometheus counters (one registry per application)."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter(
            "abridged_proxy_requests",
            "Requests, by API and what the proxy did (unchanged, rewritten, passthrough)",
            ["api", "action"],
            registry=r,
        )
        self.overflow_retries = Counter(
            "abridged_proxy_overflow_retries",
            "Upstream overflow errors answered by the emergency path and one retry",
            registry=r,
        )
        self.added = Histogram(
            "abridged_proxy_added_seconds",
            "Time the proxy adds before the upstream request is sent",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0, 5.0),
            registry=r,
        )
        self.forks = Counter(
            "abridged_proxy_forks", "Histories that stopped continuing the stored one", registry=r
        )
        self._counted: dict[tuple[str, str], Any] = {}

    def count(self, api: str, action: str) -> None:
        """One request of ``api`` that the proxy handled by ``action``."""
        child = self._counted.get((api, action))
        if child is None:  # the labelled child made once: ``labels()`` takes a lock each time
            child = self._counted[(api, action)] = self.requests.labels(api=api, action=action)
        child.inc()


def _encode(body: dict[str, Any], prepared: Prepared, api: Api) -> bytes:
    out = dict(body)
    out[history_key(api)] = prepared.messages
    if api == "anthropic" and prepared.system is not None:
        out["system"] = prepared.system
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _unchanged(body: dict[str, Any], prepared: Prepared, api: Api) -> bool:
    if prepared.messages is not body[history_key(api)]:
        return False
    return api != "anthropic" or prepared.system is None or prepared.system == body.get("system")


async def _send_whole(send: Send, status: int, headers: Headers, body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_error(
    send: Send, shape: Shape, status: int, message: str, code: str, *, close: bool = False
) -> None:
    """One of the proxy's own answers, in the client's API's error shape."""
    headers = [(b"content-type", b"application/json")]
    if close:  # the rest of the request was not read: the connection cannot serve another
        headers.append((b"connection", b"close"))
    await _send_whole(send, status, headers, error_body(shape, status, message, code=code))


def _unmanaged_reason(exc: BaseException) -> str | None:
    """Why abridged could not manage a request, said in a response header; ``None`` for a
    failure that is abridged's own (a bug: logged with its traceback)."""
    if isinstance(exc, FormatError | MessageValidationError | RecursionError):
        return "history not readable"
    if isinstance(exc, ContextOverflowError):
        return "too long for the window"
    if isinstance(exc, StoreError):
        return "store failed"
    return None


@dataclass(slots=True)
class _Exchange:
    """One request to the proxy: its ASGI scope and channels, headers (names in lower case)
    and body."""

    scope: Scope
    receive: Receive
    send: Send
    headers: list[tuple[str, str]]
    raw: bytes
    lookup: dict[str, str]  # the headers by name (the last of a repeated one)
    shape: Shape  # the error shape of the API called


class ProxyApp:
    """The proxy as an ASGI application: ``/v1/...`` here, everything else (and the lifespan)
    in ``pages``, the FastAPI application that holds the worker's state."""

    def __init__(self, pages: FastAPI, config: ProxyConfig, metrics: ProxyMetrics) -> None:
        self.pages = pages
        self.config = config
        self.metrics = metrics
        self.turns = LocalTurns()
        self.recent = RecentRequests(config.max_open)  # each conversation's last request line
        self._cleanups: set[asyncio.Task[None]] = set()
        # a client's history read again only from where its previous request ended
        self.bodies = BodyReader()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            size = sum(len(k) + len(v) + 4 for k, v in headers)  # "name: value\r\n"
            config = self.config
            problem = header_problem(
                len(headers), size, config.max_headers, config.max_header_bytes
            )
            if problem is not None:  # never forwarded: the provider would refuse it, or choke
                shape = shape_of(scope["path"])
                await _send_error(send, shape, 431, problem, "request_header_fields_too_large")
                return
        if scope["type"] == "http" and scope["path"].startswith("/v1/"):
            await self._v1(scope, receive, send)
        else:
            await self.pages(scope, receive, send)

    async def drain(self) -> None:
        """Wait for the clean-ups still running (usage recorded, leases given back)."""
        while self._cleanups:
            await asyncio.gather(*list(self._cleanups), return_exceptions=True)

    def _later(self, work: Awaitable[None]) -> None:
        # The clean-up after a response runs in a task of its own: the client has its answer
        # and the next request need not wait for it (``LocalTurns`` orders a conversation's
        # next turn after it).
        task = asyncio.ensure_future(work)
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    async def _v1(self, scope: Scope, receive: Receive, send: Send) -> None:
        shape = shape_of(scope["path"])
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._request(scope, receive, tracked, shape)
        except ClientDisconnect:  # gone before its body came whole: nothing is sent on
            log.info("the client went away before sending its whole request")
        except Exception:  # abridged's own failure: never a bare 500
            log.exception("the proxy failed on %s %s", scope["method"], scope["path"])
            if not started:
                await _send_error(send, shape, 500, "the proxy failed (see its log)", "proxy_error")

    async def _request(self, scope: Scope, receive: Receive, send: Send, shape: Shape) -> None:
        limit = self.config.max_body_bytes
        declared = declared_length(scope["headers"])
        raw = None if declared is not None and declared > limit else await read_body(receive, limit)
        if raw is None:
            message = f"the request body is larger than the proxy's limit of {limit} bytes"
            await _send_error(send, shape, 413, message, "request_too_large", close=True)
            return
        # ASGI header names are lower case already
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        ex = _Exchange(scope, receive, send, headers, raw, dict(headers), shape)
        api = _MANAGED.get(scope["path"]) if scope["method"] == "POST" else None
        if api is None:
            await self._passthrough(ex, "other")
            return
        if ex.lookup.get("x-abridged", "").strip().lower() in _OFF:
            await self._passthrough(ex, api, "off")
            return
        lookup = ex.lookup
        client = (
            scope["path"],
            key_scope(lookup),
            *[lookup.get(name) for name in IDENTITY_HEADERS],
            raw[:256],  # conversations told apart by their start, as the fingerprint does
        )
        body, problem = self.bodies.parse(raw, history_key(api), client)
        if problem is None and not isinstance(body, dict):
            problem = "not a JSON object"
        elif problem is None and history_of(api, body) is None:
            kept = isinstance(body.get(history_key(api)), list)  # Responses' stored history
            problem = "the provider keeps the history" if kept else f"no {history_key(api)} list"
        if problem is not None:
            await self._passthrough(ex, api, problem)
            return
        await self._managed(ex, api, body)

    async def _send(self, ex: _Exchange, content: bytes) -> aiohttp.ClientResponse:
        upstream: Upstream = self.pages.state.upstream
        scope = ex.scope
        target = scope["raw_path"].decode("latin-1") if scope.get("raw_path") else scope["path"]
        if scope.get("query_string") and "?" not in target:
            target += "?" + scope["query_string"].decode("latin-1")
        return await upstream.send(scope["method"], target, forward_headers(ex.headers), content)

    async def _passthrough(self, ex: _Exchange, api: str, reason: str | None = None) -> None:
        """The request upstream as it came; ``reason`` (why a managed API's request is not
        managed) is logged and said in the ``x-abridged-passthrough`` response header."""
        self.metrics.count(api, "passthrough")
        extra: Headers = []
        if reason is not None:
            extra.append((PASSTHROUGH_HEADER, reason.encode("latin-1", "replace")))
        scope = ex.scope
        line = RequestLine(scope["method"], scope["path"], api, "passthrough", reason=reason)
        try:
            response = await self._send(ex, ex.raw)
        except UPSTREAM_ERRORS as exc:
            log_request(log, replace(line, status=502))
            await _unreachable(ex, exc)
            return
        log_request(log, replace(line, status=response.status))
        await self._relay(ex, response, extra=extra)

    async def _relay(
        self,
        ex: _Exchange,
        response: aiohttp.ClientResponse,
        *,
        tap: UsageTap | None = None,
        extra: Headers | None = None,
        after: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """The upstream's response to the client: a JSON body whole (one write, its length
        known), an event stream chunk by chunk as it comes; then ``after`` (in the
        background). A client that goes away mid-stream closes the upstream response."""
        headers = [*response_headers(response.raw_headers), *(extra or ())]
        send = ex.send
        try:
            if not response.content_type.startswith("text/event-stream"):
                try:
                    body = await response.read()
                except UPSTREAM_ERRORS as exc:  # nothing sent yet: the client gets a 502
                    log.warning("the upstream's answer broke off: %s", exc)
                    await _unreachable(ex, exc, "the upstream's answer broke off")
                    return
                if tap is not None:
                    tap.feed(body)
                await _send_whole(send, response.status, headers, body)
                return

            async def chunks() -> AsyncIterator[tuple[bytes, bool]]:
                async for chunk in response.content.iter_any():
                    if tap is not None:
                        tap.feed(chunk)
                    yield chunk, False

            await send_stream(send, ex.receive, response.status, headers, chunks())
        except UPSTREAM_ERRORS as exc:  # the upstream broke off mid-answer: the client sees it end
            log.info("the upstream's answer broke off: %s", exc)
        finally:
            response.close()
            if after is not None:
                self._later(after())

    async def _prepare(
        self, ex: _Exchange, api: Api, body: dict[str, Any], stack: AsyncExitStack
    ) -> tuple[str, ContextManager, Prepared] | str:
        """The turn held (on ``stack``) and the context to send, or why the request cannot be
        managed (then it passes through: abridged never stands between an app and its
        provider because of what it could not read)."""
        state = self.pages.state
        config = self.config
        lookup = ex.lookup
        conversations: ProxyConversations = state.conversations
        try:
            identity = conversation_identity(api, lookup, body)
            model = str(body.get("model") or "unknown")

            def lease() -> Any:
                return hold_turn(
                    state.store,
                    identity.conversation_id,
                    new_holder(state.worker),
                    owner=identity.owner,
                    ttl=config.lease_ttl,
                    wait=config.queue_timeout,
                )

            await stack.enter_async_context(self.turns.hold(identity.conversation_id))
            try:
                held = await stack.enter_async_context(lease())
            except NotFoundError:  # the first request: the conversation is made, then leased
                await conversations.current(identity, model)
                held = await stack.enter_async_context(lease())
            api_key = lookup.get("x-api-key") or lookup.get("authorization", "").removeprefix(
                "Bearer "
            )
            # the lease's own read of the conversation says where it points (a fork or not)
            made = await conversations.prepare(
                identity, api, body, api_key or None, base=held.lease.conversation
            )
        except TurnBusyError:
            raise
        except Exception as exc:
            reason = _unmanaged_reason(exc)
            if reason is None:
                log.exception("preparing a %s request failed; it passes through", api)
                return "abridged failed (see its log)"
            log.info("%s request not managed: %s: %s", api, reason, exc)
            return reason
        return "history not readable" if made is None else made

    def _log(self, line: RequestLine) -> None:
        """A managed request's line: logged, and kept as its conversation's last request (in
        this worker at once, in the store in the background: the index reads it there after
        a restart and in every worker)."""
        log_request(log, line)
        at = datetime.now(UTC)
        self.recent.note(line, at)
        if line.conversation_id is not None:
            self._later(self._keep(line.conversation_id, line, at))

    async def _keep(self, conversation_id: str, line: RequestLine, at: datetime) -> None:
        store: Store = self.pages.state.store
        try:
            # written out of order (two tasks), the store keeps the later line
            await store.note_request(conversation_id, line.fields(), at=at)
        except AbridgedError as exc:  # the index shows an older line: only noted
            log.warning("the last request of %s was not kept: %s", conversation_id, exc)
        except Exception:
            log.exception("keeping the last request of %s failed", conversation_id)

    async def _managed(self, ex: _Exchange, api: Api, body: dict[str, Any]) -> None:
        started = time.perf_counter()
        send = ex.send
        stack = AsyncExitStack()
        try:
            made = await self._prepare(ex, api, body, stack)
            if isinstance(made, str):
                await stack.aclose()
                await self._passthrough(ex, api, made)
                return
            cid, manager, prepared = made
            scope = ex.scope
            line = RequestLine(
                scope["method"],
                scope["path"],
                api,
                "passed",
                conversation_id=cid,
                messages_app=len(body[history_key(api)]),
            )
            # the new messages are written while the request goes out: done before the lease
            # is given back (the stack unwinds in reverse)
            stack.push_async_callback(_flush, manager, cid)
            unchanged = _unchanged(body, prepared, api)
            content = ex.raw if unchanged else _encode(body, prepared, api)
            action = "unchanged" if unchanged else "rewritten"
            self.metrics.count(api, action)
            added = time.perf_counter() - started
            self.metrics.added.observe(added)
            line = replace(line, added_ms=added * 1000)
            response = await self._send(ex, content)
            if response.status >= 400:
                error = await response.read()
                response.close()
                info = is_context_overflow((response.status, error.decode("utf-8", "replace")))
                recovered = None
                if info is not None:  # "too long": the emergency path, then the one retry
                    self.metrics.overflow_retries.inc()
                    recovered = await _recover(manager, info.tokens, cid)
                if recovered is None:
                    # any other error, and an overflow nothing can be dropped from, goes back
                    # to the client as the provider gave it
                    self._log(
                        _figures(
                            line, manager, prepared, unchanged=unchanged, status=response.status
                        )
                    )
                    await stack.aclose()
                    await _send_whole(
                        send, response.status, response_headers(response.raw_headers), error
                    )
                    return
                response = await self._send(ex, _encode(body, recovered, api))
                prepared, unchanged = recovered, False
            tap = UsageTap(api, streaming=response.content_type.startswith("text/event-stream"))
            ok = response.status < 400
            status = response.status
            sent = prepared

            async def after() -> None:
                try:
                    usage = tap.usage() if ok else None
                    if usage is not None:
                        try:
                            manager.record_usage(usage)
                        except AbridgedError as exc:  # the client has its answer: only noted
                            log.warning("the usage report of %s was not recorded: %s", cid, exc)
                    # figured while the turn is still held: the manager is this request's alone
                    self._log(
                        _figures(
                            line, manager, sent, unchanged=unchanged, status=status, usage=usage
                        )
                    )
                finally:
                    await stack.aclose()

            extra = [(b"x-abridged-conversation-id", cid.encode("latin-1"))]
            await self._relay(ex, response, tap=tap, extra=extra, after=after)
        except TurnBusyError as exc:
            await stack.aclose()
            await _send_error(send, ex.shape, 409, str(exc), "busy")
        except UPSTREAM_ERRORS as exc:
            await stack.aclose()
            await _unreachable(ex, exc)
        except BaseException:
            await stack.aclose()
            raise


def _figures(
    line: RequestLine,
    manager: ContextManager,
    prepared: Prepared,
    *,
    unchanged: bool,
    status: int,
    usage: Usage | None = None,
) -> RequestLine:
    """``line`` with what abridged did and the sizes: the provider's own count of what it was
    sent when it reported one, else abridged's estimate. The estimates are made only when the
    request log is on (``--log-level info`` or ``debug``)."""
    sent = usage.context_tokens if usage is not None else None
    app = sent if unchanged else None
    if log.isEnabledFor(logging.INFO):
        sent = prepared.tokens if sent is None else sent
        app = sent if unchanged else manager.history_tokens()
    return replace(
        line,
        action=action_of(prepared.events, unchanged=unchanged),
        status=status,
        messages_sent=len(prepared.messages),
        tokens_sent=sent,
        tokens_app=app,
        cache_read=usage.cache_read if usage is not None else None,
        # the manager's window, not ``manager.budget``'s: the budget is computed anew after a
        # report taught a hidden prefix, and raises when that prefix alone fills it
        window=manager.context_window,
    )


async def _recover(manager: ContextManager, tokens: int | None, cid: str) -> Prepared | None:
    """The context after the emergency path, or ``None`` when it cannot help (one message
    alone too long, the store failing): the provider's own error then stands."""
    try:
        return await manager.arecover_overflow(tokens)
    except AbridgedError as exc:
        log.info("the overflow of %s cannot be recovered: %s", cid, exc)
    except Exception:
        log.exception("recovering the overflow of %s failed", cid)
    return None


async def _unreachable(
    ex: _Exchange, exc: BaseException, what: str = "the upstream could not be reached"
) -> None:
    cause = connection_failure(exc) or f"{type(exc).__name__}: {exc}".rstrip(": ")
    await _send_error(ex.send, ex.shape, 502, f"{what}: {cause}", "upstream_unreachable")


async def _flush(manager: ContextManager, conversation_id: str) -> None:
    try:
        await manager.aflush()
    except AbridgedError as exc:  # the client keeps its history: the next request writes them
        log.warning("storing the messages of %s failed: %s", conversation_id, exc)


def create_proxy_app(config: ProxyConfig, *, store: Store | None = None) -> ProxyApp:
    """The proxy application; ``store`` (else one at ``config.db``) is opened at startup."""
    owned = store is None
    metrics = ProxyMetrics()
    proxy: ProxyApp

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        the_store = store if store is not None else Store(config.db)
        await the_store.open()
        upstream = Upstream(config.upstream, timeout=config.timeout)
        await upstream.open()
        app.state.store = the_store
        app.state.upstream = upstream
        app.state.conversations = ProxyConversations(the_store, config, on_fork=metrics.forks.inc)
        app.state.worker = f"proxy:{uuid.uuid4().hex[:8]}"
        app.state.config = config
        app.state.recent = proxy.recent
        app.state.upstream_shown = safe_url(config.upstream) or ""
        try:
            yield
        finally:
            await proxy.drain()
            await upstream.close()
            if owned:
                await the_store.close()

    pages = FastAPI(title="abridged proxy", lifespan=lifespan, docs_url=None, redoc_url=None)

    @pages.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "upstream": safe_url(config.upstream) or ""}

    @pages.get("/metrics", include_in_schema=False)
    async def metrics_page() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE)

    @pages.get("/page/style.css", include_in_schema=False)
    async def style() -> Response:  # the service page's style sheet
        css = files("abridged.server").joinpath("page", "style.css").read_bytes()
        return Response(css, media_type="text/css; charset=utf-8")

    pages.include_router(page_routes)

    proxy = ProxyApp(pages, config, metrics)
    return proxy


def proxy_app_from_environment() -> ProxyApp:
    """The proxy of the ``ABRIDGED_PROXY_*`` environment (uvicorn's ``factory``)."""
    from abridged.server.logs import configure_logging  # noqa: PLC0415

    config = ProxyConfig.from_env()
    configure_logging(config.log_level)
    app = create_proxy_app(config)
    tune_gc_for_serving()  # a worker process of its own: see the function
    return app
