"""The FastAPI application: ``create_app(config)``; ``app_from_environment()`` for uvicorn's
workers (``abridged serve`` writes the config to the environment)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from abridged.core.protocols import ChatModel
from abridged.errors import (
    AbridgedError,
    ConflictError,
    CorruptRowError,
    FormatError,
    MessageValidationError,
    NotFoundError,
    OwnershipError,
    ProviderError,
    SchemaVersionError,
    SettingError,
    StoreError,
)
from abridged.providers.select import chat_model_from_string
from abridged.server.auth import TenantResolver
from abridged.server.config import ServiceConfig, load_tools
from abridged.server.headers import HeaderLimit
from abridged.server.lease import TurnBusyError
from abridged.server.metrics import ServiceMetrics
from abridged.server.process import YOUNG_THRESHOLD, shorten_gil_switch, tune_gc_for_serving
from abridged.server.routes import (
    calls,
    conversations,
    messages,
    models,
    page,
    replay,
    search,
    sessions,
    system,
    watch,
)
from abridged.server.runner import ConversationPool, TurnRunner
from abridged.server.scope import public
from abridged.server.service import Service
from abridged.store import Store
from abridged.store.codec import ID_FORMAT

__all__ = ["app_from_environment", "create_app"]

log = logging.getLogger("abridged.server")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """Refuse request bodies over the limit with 413 (declared or as they stream in)."""

    def __init__(self, app: ASGIApp, limit: int, upload_limit: int) -> None:
        self.app = app
        self.limit = limit
        self.upload_limit = upload_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.upload_limit if scope.get("path") == "/v1/replay" else self.limit
        for key, value in scope.get("headers", []):
            if key == b"content-length" and value.isdigit() and int(value) > limit:
                await _too_large(send, limit)
                return
        seen = 0
        refused = False

        async def limited() -> Message:
            # Past the limit the client gets 413 at once, and the application sees the client
            # go away (raising here would become the framework's 400 "cannot parse the body").
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    refused = True
                    await _too_large(send, limit)
                    return {"type": "http.disconnect"}
            return message

        async def watch(message: Message) -> None:
            if not refused:  # after a 413, whatever the application answers is dropped
                await send(message)

        await self.app(scope, limited, watch)


async def _too_large(send: Send, limit: int) -> None:
    body = b'{"detail":"the request body is larger than ' + str(limit).encode() + b' bytes"}'
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _context(exc: AbridgedError) -> dict[str, Any]:
    return {
        k: v for k, v in getattr(exc, "context", {}).items() if isinstance(v, str | int | float)
    }


def _bad_id(exc: AbridgedError) -> bool:
    """An id no database can hold (a NUL, a lone surrogate): the client's error, not the
    store's (a ``FormatError`` from elsewhere, a provider's reply, stays a server error)."""
    return isinstance(exc, FormatError) and exc.format == ID_FORMAT


def _error_response(
    exc: AbridgedError, public: Callable[[Any], Any] = lambda value: value
) -> JSONResponse:
    """Library errors as HTTP answers; another tenant's conversation reads as a missing one.
    ``public`` turns the store's key of the request's conversation back into the tenant's
    name for it (``abridged.server.scope.public``)."""
    if isinstance(exc, NotFoundError | OwnershipError):
        cid = getattr(exc, "context", {}).get("conversation_id")
        return JSONResponse(public({"detail": "no such conversation", "conversation_id": cid}), 404)
    if isinstance(exc, TurnBusyError | ConflictError):
        # the client's conflict (a taken id, a busy turn, a lost race): not logged as an error
        return JSONResponse(public({"detail": str(exc), **_context(exc)}), 409)
    if isinstance(exc, CorruptRowError):
        # damage, not absence (never 404) and not an outage to retry (never 503)
        log.error("damaged stored data: %s", exc)
        return JSONResponse(public({"detail": str(exc), **_context(exc)}), 500)
    if isinstance(exc, SettingError | MessageValidationError) or _bad_id(exc):
        return JSONResponse(public({"detail": str(exc), **_context(exc)}), 422)
    if isinstance(exc, ProviderError):
        return JSONResponse(public({"detail": str(exc)}), 502)
    if isinstance(exc, SchemaVersionError | StoreError):
        log.error("store error: %s", exc)
        return JSONResponse(public({"detail": str(exc)}), 503)
    log.error("error: %s", exc)
    return JSONResponse(public({"detail": str(exc)}), 500)


#: The route modules, in the order of the API's docs.
ROUTES = (conversations, models, messages, sessions, search, watch, calls, replay, system, page)


def service_model(spec: str) -> ChatModel:
    """A model of the service: over the SDK's aiohttp client where the adapter has one (a
    quarter less CPU a call: see ``sdk_http_client``); the pool closes it at shutdown."""
    return chat_model_from_string(spec, http_client="aiohttp")


def create_app(config: ServiceConfig | None = None, *, store: Store | None = None) -> FastAPI:
    """The service's application; ``store`` (else one at ``config.db``) is opened at startup
    and closed at shutdown when the app made it."""
    config = config if config is not None else ServiceConfig()
    tools = load_tools(config.tools)
    owned = store is None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        the_store = store if store is not None else Store(config.db)
        await the_store.open()
        metrics = ServiceMetrics()
        pool = ConversationPool(the_store, config, tools, metrics, service_model)
        runner = TurnRunner(the_store, pool, config, metrics)
        app.state.service = Service(
            config=config,
            store=the_store,
            pool=pool,
            runner=runner,
            metrics=metrics,
            tenants=TenantResolver(the_store, open_access=config.open_access),
        )
        app.state.tenants = app.state.service.tenants
        try:
            yield
        finally:
            await runner.close()
            if owned:
                await the_store.close()

    app = FastAPI(
        title="abridged",
        summary="Long LLM conversations that stay inside the context window.",
        version=_version(),
        lifespan=lifespan,
        docs_url=None,  # served by routes.page from the package's own files, not a CDN
        redoc_url=None,
    )

    @app.exception_handler(AbridgedError)
    async def abridged_error(request: Request, exc: AbridgedError) -> JSONResponse:
        return _error_response(exc, lambda value: public(request, value))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "where": ".".join(str(p) for p in e.get("loc", ())),
                "problem": e.get("msg", ""),
            }
            for e in exc.errors()
        ]
        text = "; ".join(f"{p['where']}: {p['problem']}" for p in problems)
        return JSONResponse({"detail": text, "errors": problems}, 422)

    for module in ROUTES:
        app.include_router(module.router)
    app.add_middleware(BodyLimit, limit=config.max_body_bytes, upload_limit=config.max_upload_bytes)
    # outermost: a request over the header limits reaches nothing else
    app.add_middleware(
        HeaderLimit, max_headers=config.max_headers, max_bytes=config.max_header_bytes
    )
    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("abridged")
    except PackageNotFoundError:
        return "0"


def app_from_environment() -> FastAPI:
    """The application of the ``ABRIDGED_SERVE_*`` environment (uvicorn's ``factory``), its
    logs as JSON lines on stderr."""
    from abridged.server.logs import configure_logging  # noqa: PLC0415

    config = ServiceConfig.from_env()
    configure_logging(config.log_level)
    app = create_app(config)
    tune_gc_for_serving(YOUNG_THRESHOLD)  # a worker process of its own: see the functions
    shorten_gil_switch()
    return app
