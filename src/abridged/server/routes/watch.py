"""The context's meter as server-sent events (``GET /v1/conversations/{id}/events``): now, and
again whenever it changes (``abridged.server.watch``)."""

from __future__ import annotations

import asyncio
import contextlib
from asyncio import FIRST_COMPLETED
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from abridged.runtime.conversation import Conversation
from abridged.server.auth import require_tenant
from abridged.server.service import Service, service_of
from abridged.server.sse import encode_sse, until_disconnect
from abridged.server.watch import ContextWatch

router = APIRouter(prefix="/v1/conversations", tags=["conversations"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]

#: A stream with no change for this long ends (the page opens the next one at once): a
#: server shutting down waits for open requests, and a page left open must not hold it up.
QUIET_SECONDS = 5.0


class MeterStream(Response):
    """The watch's event stream (ASGI): the meter now (unless ``since`` is the ``seq`` of the
    newest change: the client has it already), then one per change; it ends when the client
    goes (at once: the disconnect is awaited beside the meters) or after ``QUIET_SECONDS``
    without a change."""

    media_type = "text/event-stream"

    def __init__(
        self,
        watch: ContextWatch,
        conversation_id: str,
        convo: Conversation,
        *,
        since: int | None = None,
    ) -> None:
        self.watch = watch
        self.conversation_id = conversation_id
        self.convo = convo
        self.since = since
        self.status_code = 200
        self.background = None
        self.init_headers({"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the stream (ASGI)."""
        start = {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
        await send(start)
        gone = asyncio.ensure_future(until_disconnect(receive))
        try:
            with self.watch.subscribe(self.conversation_id) as queue:
                if self.since is None or self.since != self.watch.changes(self.conversation_id):
                    # made once subscribed: a change from here on comes after it
                    first = self.watch.meter(self.conversation_id, self.convo)
                    await send(_body(encode_sse("meter", first)))
                while True:
                    waiting = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait(
                        (waiting, gone), timeout=QUIET_SECONDS, return_when=FIRST_COMPLETED
                    )
                    if waiting not in done:
                        waiting.cancel()
                        break
                    await send(_body(encode_sse("meter", waiting.result())))
            with contextlib.suppress(Exception):  # the client may be gone already
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            gone.cancel()


def _body(chunk: bytes) -> dict[str, object]:
    return {"type": "http.response.body", "body": chunk, "more_body": True}


@router.get("/{conversation_id}/events", response_class=Response)
async def watch_context(
    conversation_id: str,
    tenant: Tenant,
    svc: Svc,
    since: Annotated[
        int | None, Query(ge=0, description="the seq of the last meter the client has")
    ] = None,
) -> Response:
    """``event: meter`` now, then after every change of the context: a turn's end, a
    compaction (in the background too, once committed), a prune, an overflow recovery (the
    payload is the turn stream's ``meter``, plus ``seq``, the change it follows). The stream
    ends after 5 s without a change: open the next one with ``since=<seq>``, and a change made
    in between comes at once."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    convo = await svc.pool.checkout(tenant, info)
    return MeterStream(svc.pool.watch, conversation_id, convo, since=since)
