"""The proxy's application: ``create_proxy_app(ProxyConfig(upstream=...))``.

``POST /v1/chat/completions`` (OpenAI), ``POST /v1/responses`` (OpenAI Responses, with the
whole history in ``input``) and ``POST /v1/messages`` (Anthropic): the history the app sent is
stored, the context abridged would send goes upstream instead (the very request bytes while
nothing was pruned or compacted), the answer streams back chunk by chunk, and its usage
calibrates the next decision. An upstream "context too long" error runs the emergency path and
one retry; every other upstream error is passed back unchanged. A Responses request that lets
the provider keep the history (``previous_response_id``, ``conversation``) holds only its new
items and is passed through, as is everything else under ``/v1`` (``/v1/models``, token
counting...). ``X-Abridged: off`` passes a request through untouched.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from html import escape
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from abridged.core.budget import format_token_size
from abridged.errors import NotFoundError
from abridged.providers.overflow import is_context_overflow
from abridged.runtime.context_manager import Prepared
from abridged.server.lease import TurnBusyError, hold_turn, new_holder
from abridged.server.metrics import CONTENT_TYPE
from abridged.server.proxy.apis import Api, history_key, history_of
from abridged.server.proxy.config import ProxyConfig
from abridged.server.proxy.conversations import ProxyConversations
from abridged.server.proxy.identity import conversation_identity
from abridged.server.proxy.upstream import UsageTap, forward_headers, response_headers
from abridged.store import Store

__all__ = ["create_proxy_app", "proxy_app_from_environment"]

log = logging.getLogger("abridged.proxy")
_OFF = frozenset({"off", "0", "false", "no"})


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


def create_proxy_app(config: ProxyConfig, *, store: Store | None = None) -> FastAPI:
    """The proxy application; ``store`` (else one at ``config.db``) is opened at startup."""
    owned = store is None
    metrics = ProxyMetrics()
    cleanups: set[asyncio.Task[None]] = set()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        the_store = store if store is not None else Store(config.db)
        await the_store.open()
        client = httpx.AsyncClient(
            base_url=config.upstream,
            timeout=httpx.Timeout(config.timeout, connect=10.0),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
        )
        app.state.store = the_store
        app.state.client = client
        app.state.conversations = ProxyConversations(the_store, config, on_fork=metrics.forks.inc)
        app.state.worker = f"proxy:{uuid.uuid4().hex[:8]}"
        try:
            yield
        finally:
            if cleanups:
                await asyncio.gather(*list(cleanups), return_exceptions=True)
            await client.aclose()
            if owned:
                await the_store.close()

    app = FastAPI(title="abridged proxy", lifespan=lifespan, docs_url=None, redoc_url=None)

    async def send(request: Request, content: bytes) -> httpx.Response:
        client: httpx.AsyncClient = request.app.state.client
        headers = forward_headers(request.headers.items())
        headers["accept-encoding"] = "identity"  # bytes pass through exactly as sent
        upstream = client.build_request(
            request.method,
            request.url.path,
            params=request.query_params,
            headers=headers,
            content=content,
        )
        return await client.send(upstream, stream=True)

    def relay(
        response: httpx.Response,
        after: Any = None,
        tap: UsageTap | None = None,
        conversation_id: str | None = None,
    ) -> Response:
        async def body() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    if tap is not None:
                        tap.feed(chunk)
                    yield chunk
            finally:
                # Starlette cancels this generator's scope once the response is sent: the
                # clean-up (closing upstream, recording usage, giving the lease back) runs in
                # a task of its own, so it is never cut short.
                task = asyncio.ensure_future(_finish(response, after))
                cleanups.add(task)
                task.add_done_callback(cleanups.discard)

        headers = response_headers(response)
        if conversation_id is not None:
            headers["x-abridged-conversation-id"] = conversation_id
        return StreamingResponse(body(), status_code=response.status_code, headers=headers)

    async def passthrough(request: Request, raw: bytes, api: str) -> Response:
        metrics.requests.labels(api=api, action="passthrough").inc()
        try:
            response = await send(request, raw)
        except httpx.HTTPError as exc:
            return _unreachable(exc)
        return relay(response)

    async def proxied(request: Request, api: Api) -> Response:
        started = time.perf_counter()
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        if headers.get("x-abridged", "").strip().lower() in _OFF:
            return await passthrough(request, raw, api)
        try:
            body = json.loads(raw)
        except ValueError:
            return await passthrough(request, raw, api)
        if not isinstance(body, dict) or history_of(api, body) is None:
            return await passthrough(request, raw, api)
        identity = conversation_identity(api, headers, body)
        conversations: ProxyConversations = request.app.state.conversations
        stack = AsyncExitStack()
        model = str(body.get("model") or "unknown")

        def lease() -> Any:
            return hold_turn(
                request.app.state.store,
                identity.conversation_id,
                new_holder(request.app.state.worker),
                owner=identity.owner,
                ttl=config.lease_ttl,
                wait=config.queue_timeout,
            )

        try:
            try:
                held = await stack.enter_async_context(lease())
            except NotFoundError:  # the first request: the conversation is made, then leased
                await conversations.current(identity, model)
                held = await stack.enter_async_context(lease())
            api_key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix(
                "Bearer "
            )
            # the lease's own read of the conversation says where it points (a fork or not)
            made = await conversations.prepare(
                identity, api, body, api_key or None, base=held.lease.conversation
            )
            if made is None:
                await stack.aclose()
                return await passthrough(request, raw, api)
            cid, manager, prepared = made
            unchanged = _unchanged(body, prepared, api)
            content = raw if unchanged else _encode(body, prepared, api)
            metrics.requests.labels(api=api, action="unchanged" if unchanged else "rewritten").inc()
            metrics.added.observe(time.perf_counter() - started)
            response = await send(request, content)
            if response.status_code >= 400:
                error = await response.aread()
                await response.aclose()
                info = is_context_overflow((response.status_code, error.decode("utf-8", "replace")))
                if info is None:  # any other error goes back to the client as it came
                    await stack.aclose()
                    return Response(
                        error, status_code=response.status_code, headers=response_headers(response)
                    )
                # "too long": the emergency path, then the one retry
                metrics.overflow_retries.inc()
                recovered = await manager.arecover_overflow(info.tokens)
                response = await send(request, _encode(body, recovered, api))
            streaming = response.headers.get("content-type", "").startswith("text/event-stream")
            tap = UsageTap(api, streaming=streaming)

            async def after() -> None:
                try:
                    if response.status_code < 400:
                        usage = tap.usage()
                        if usage is not None:
                            manager.record_usage(usage)
                finally:
                    await stack.aclose()

            return relay(response, after, tap, cid)
        except TurnBusyError as exc:
            await stack.aclose()
            return JSONResponse({"error": {"type": "busy", "message": str(exc)}}, 409)
        except httpx.HTTPError as exc:
            await stack.aclose()
            return _unreachable(exc)
        except BaseException:
            await stack.aclose()
            raise

    @app.post("/v1/chat/completions", include_in_schema=False)
    async def chat_completions(request: Request) -> Response:
        return await proxied(request, "openai-chat")

    @app.post("/v1/responses", include_in_schema=False)
    async def responses(request: Request) -> Response:
        return await proxied(request, "openai-responses")

    @app.post("/v1/messages", include_in_schema=False)
    async def messages(request: Request) -> Response:
        return await proxied(request, "anthropic")

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "upstream": config.upstream}

    @app.get("/metrics", include_in_schema=False)
    async def metrics_page() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE)

    @app.get("/abridged/conversations/{conversation_id}", include_in_schema=False)
    async def meter_page(request: Request, conversation_id: str) -> Response:
        return await _meter(request, conversation_id)

    @app.api_route(
        "/v1/{path:path}",
        methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        include_in_schema=False,
    )
    async def other(request: Request, path: str) -> Response:
        return await passthrough(request, await request.body(), "other")

    return app


async def _finish(response: httpx.Response, after: Any) -> None:
    try:
        await response.aclose()
    finally:
        if after is not None:
            await after()


def _unreachable(exc: httpx.HTTPError) -> JSONResponse:
    return JSONResponse(
        {"error": {"type": "upstream_unreachable", "message": f"{type(exc).__name__}: {exc}"}},
        502,
    )


async def _meter(request: Request, conversation_id: str) -> Response:
    """A conversation's context meter (sizes only: no content, no key)."""
    store: Store = request.app.state.store
    conversations: ProxyConversations = request.app.state.conversations
    from abridged.errors import NotFoundError  # noqa: PLC0415

    try:
        info = await store.open_conversation(conversation_id)
    except NotFoundError:
        return HTMLResponse("<h1>No such conversation</h1>", 404)
    fork = info.settings.get("fork")
    current = fork if isinstance(fork, str) and fork else conversation_id
    done = await store.compactions(current)
    manager = conversations.manager_of(current)
    rows = "".join(
        f"<tr><td>{c.created_at:%H:%M:%S}</td><td>{escape(c.record.trigger)}</td>"
        f"<td>{format_token_size(c.record.tokens_before)} → "
        f"{format_token_size(c.record.tokens_after)}</td></tr>"
        for c in done
    )
    if manager is not None:
        budget = manager.budget
        tokens = manager.context_tokens()
        share = tokens / budget.trigger if budget.trigger else 0.0
        colour = "red" if share >= 1 else "#d97706" if share >= 0.75 else "green"
        meter = (
            f"<p style='font-size:1.4em;color:{colour}'>{format_token_size(tokens)} of "
            f"{format_token_size(budget.context_window)} "
            f"(trigger {format_token_size(budget.trigger)}, input budget "
            f"{format_token_size(budget.input_budget)})</p>"
        )
    else:
        meter = "<p>Not open in this worker yet: the meter shows after its next request.</p>"
    html = (
        "<!doctype html><html><head><meta charset='utf-8'><title>abridged proxy</title></head>"
        f"<body><h1>Conversation {escape(current)}</h1>{meter}"
        f"<h2>Compactions ({len(done)})</h2><table><tr><th>when</th><th>trigger</th>"
        f"<th>context</th></tr>{rows}</table></body></html>"
    )
    return HTMLResponse(html)


def proxy_app_from_environment() -> FastAPI:
    """The proxy of the ``ABRIDGED_PROXY_*`` environment (uvicorn's ``factory``)."""
    from abridged.server.logs import configure_logging  # noqa: PLC0415

    configure_logging("info")
    return create_proxy_app(ProxyConfig.from_env())
