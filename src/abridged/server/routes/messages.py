"""Messages: send (streamed as server-sent events, or answered as JSON), the timeline
(messages with their statistics, and compactions), abort."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from abridged.core.model import message_to_dict
from abridged.core.windows import Pricing
from abridged.errors import AbridgedError
from abridged.formats.wire import encodable
from abridged.runtime.history import is_command
from abridged.server.auth import require_tenant
from abridged.server.runner import TurnHandle, user_message
from abridged.server.schemas import CompactionOut, MessageOut, SendMessage, TimelineOut
from abridged.server.scope import ConversationKey, public
from abridged.server.service import Service, service_of
from abridged.server.sse import EventStream, encode_sse
from abridged.store import StoredMessage

router = APIRouter(prefix="/v1/conversations", tags=["messages"])

Tenant = Annotated[str, Depends(require_tenant)]
Svc = Annotated[Service, Depends(service_of)]


async def _sse(handle: TurnHandle, request: Request) -> AsyncIterator[tuple[bytes, bool]]:
    async for batch in handle.batches():
        yield (
            b"".join(encode_sse(name, _named(request, name, payload)) for name, payload in batch),
            handle.finished,
        )


def _named(request: Request, event: str, payload: Any) -> Any:
    """An error event names the conversation as the tenant does, never by the store's key."""
    return public(request, payload) if event == "error" else payload


@router.post(
    "/{conversation_id}/messages",
    responses={
        200: {
            "description": "The turn's events as server-sent events (``stream=true``, the "
            "default): queued, started, text, reasoning, tool_call_delta, tool_started, "
            "tool_finished, notice, retrying, meter, result or answered, error, done; or the "
            "result as JSON (``stream=false``)."
        },
        409: {"description": "A turn is running and ``queue=false`` was asked."},
    },
)
async def send_message(
    conversation_id: ConversationKey,
    request: Request,
    body: SendMessage,
    tenant: Tenant,
    svc: Svc,
    stream: Annotated[bool, Query(description="server-sent events (else one JSON)")] = True,
    queue: Annotated[
        bool, Query(description="wait for a running turn (else 409, nothing stored)")
    ] = True,
) -> Any:
    """Send a user message and get the turn that answers it (tools included). A message sent
    while a turn runs is stored at once and answered when that turn ends."""
    # start_turn reads the conversation first (a missing or foreign one: 404, nothing stored)
    handle = await svc.runner.start_turn(
        tenant,
        conversation_id,
        user_message(body.content, body.id),
        queue=queue,
    )
    if stream:
        return EventStream(
            _sse(handle, request), headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )
    events = [(name, payload) async for name, payload in handle.stream()]
    if handle.error is not None:
        error = public(request, handle.error)
        return JSONResponse(error, status_code=int(handle.error.get("status", 500)))
    answered = next((p for n, p in events if n == "answered"), None)
    meter = next((p for n, p in reversed(events) if n == "meter"), None)
    notices = [p for n, p in events if n == "notice"]
    return encodable(
        {
            "message_id": handle.message_id,
            "result": handle.result,
            "answered": answered,
            "meter": meter,
            "notices": notices,
        }
    )


def message_out(stored: StoredMessage, pricing: Pricing | None) -> MessageOut:
    """A stored message with its statistics."""
    message = stored.message
    usage = message.usage
    cost = (
        pricing.cost(
            input=usage.input,
            output=usage.output,
            cache_read=usage.cache_read,
            cache_write=usage.cache_write,
        )
        if usage is not None and pricing is not None
        else None
    )
    kind = message.meta.get("kind")
    return MessageOut(
        seq=stored.seq,
        id=message.id,
        role=message.role,
        kind=kind if isinstance(kind, str) else None,
        text=encodable(message.text),
        message=encodable(message_to_dict(message)),
        status=stored.status,
        session_id=stored.session_id,
        model=stored.model,
        input_tokens=usage.context_tokens if usage is not None else None,
        cached_tokens=usage.cache_read if usage is not None else None,
        output_tokens=usage.output if usage is not None else None,
        ttft_ms=stored.ttft_ms,
        total_ms=stored.total_ms,
        cost=cost,
        created_at=stored.created_at,
    )


def _pricing(model: str | None) -> Pricing | None:
    if not model:
        return None
    from abridged.providers.registry import lookup_model  # noqa: PLC0415

    try:
        entry = lookup_model(model.rpartition("#")[2] or model)
    except AbridgedError:
        return None
    return entry.pricing if entry is not None else None


@router.get("/{conversation_id}/messages", response_model=TimelineOut)
async def list_messages(
    conversation_id: ConversationKey,
    tenant: Tenant,
    svc: Svc,
    limit: Annotated[int, Query(ge=1, le=10_000, description="the newest N messages")] = 1000,
    commands: Annotated[bool, Query(description="include slash commands and outputs")] = True,
) -> Any:
    """The conversation's stored messages (every session, queued ones last) with per-message
    statistics, and its compactions (placed by ``cut_seq``)."""
    info = await svc.store.open_conversation(conversation_id, owner=tenant)
    stored = await svc.store.stored_messages(conversation_id, owner=tenant, skip_corrupt=True)
    if not commands:
        stored = [s for s in stored if not is_command(s.message)]
    shown = stored[-limit:]
    # each reply priced as the model that gave it (the conversation's model may have changed)
    prices = {m: _pricing(m) for m in {s.model or info.model for s in shown}}
    done = await svc.store.compactions(conversation_id, owner=tenant)
    return TimelineOut(
        messages=[message_out(s, prices[s.model or info.model]) for s in shown],
        compactions=[CompactionOut.of(c) for c in done],
    )


@router.post("/{conversation_id}/abort")
async def abort_turn(conversation_id: ConversationKey, tenant: Tenant, svc: Svc) -> Any:
    """Abort the running turn (what was received is stored; unfinished tool calls get error
    results). ``aborted: false`` when no turn runs in the worker that got this request."""
    await svc.store.open_conversation(conversation_id, owner=tenant)
    lease = await svc.store.turn_lease(conversation_id, owner=tenant)
    aborted = svc.runner.abort(conversation_id)
    return {
        "aborted": aborted,
        "running": lease.holder is not None,
        "detail": None
        if aborted or lease.holder is None
        else "the turn runs in another worker; send the abort again (any worker may get it)",
    }
