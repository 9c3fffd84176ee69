"""What a turn streams to an HTTP client: each ``Conversation.stream`` item as a server-sent
event (``event: <name>`` and one line of JSON), plus the service's own events (``queued``,
``started``, ``meter``, ``answered``, ``error``, ``done``)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from abridged.core.model import Usage, message_to_dict, usage_to_dict
from abridged.core.protocols import ReasoningDelta, TextDelta, ToolCallDelta
from abridged.events.runtime import Notice, Retrying, ToolFinished, ToolStarted, TurnResult
from abridged.runtime.overview import ContextOverview

__all__ = [
    "EventStream",
    "encode_sse",
    "meter_payload",
    "send_stream",
    "stream_event",
    "until_disconnect",
]


def encode_sse(name: str, data: Any) -> bytes:
    """One server-sent event."""
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _plain(value: Any) -> Any:
    """Engine events and their fields as JSON-able values."""
    if isinstance(value, Usage):
        return usage_to_dict(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def meter_payload(overview: ContextOverview) -> dict[str, Any]:
    """The context ring's data: size, thresholds, colour, reported vs estimated."""
    return {
        "context_tokens": overview.total,
        "window": overview.window,
        "window_known": overview.window_known,
        "input_budget": overview.input_budget,
        "trigger": overview.trigger,
        "target": overview.target,
        "state": overview.state,
        "share_of_trigger": round(overview.share_of_trigger, 4),
        "reported": overview.reported,
        "estimated": overview.estimated,
        "breakdown": {
            "system": overview.system,
            "tools": overview.tools,
            "summary": overview.summary,
            "messages": overview.messages,
        },
    }


def result_payload(result: TurnResult) -> dict[str, Any]:
    """The turn's result without its events (they were streamed)."""
    return {
        "text": result.text,
        "message_id": result.message.id if result.message is not None else None,
        "messages": [message_to_dict(m) for m in result.messages],
        "usage": usage_to_dict(result.usage),
        "calls": result.calls,
        "aborted": result.aborted,
        "stopped": result.stopped,
        "command": result.command,
        "inputs": result.inputs,
    }


def stream_event(item: object) -> tuple[str, dict[str, Any]] | None:
    """The event name and payload of one item of ``Conversation.stream`` (``None``: not
    sent)."""
    if isinstance(item, TextDelta):
        return "text", {"text": item.text}
    if isinstance(item, ReasoningDelta):
        return "reasoning", {"text": item.text}
    if isinstance(item, ToolCallDelta):
        return "tool_call_delta", {
            "index": item.index,
            "id": item.id,
            "name": item.name,
            "arguments": item.arguments,
        }
    if isinstance(item, ToolStarted):
        call = item.call
        return "tool_started", {"id": call.id, "name": call.name, "arguments": call.arguments}
    if isinstance(item, ToolFinished):
        result = item.result
        return "tool_finished", {
            "call_id": result.call_id,
            "name": result.name,
            "is_error": result.is_error,
            "text": item.text,
        }
    if isinstance(item, Notice):
        payload: dict[str, Any] = {"text": item.text}
        if item.event is not None:
            payload["event"] = _plain(item.event)
            payload["kind"] = item.event.kind
        return "notice", payload
    if isinstance(item, Retrying):
        return "retrying", {"reason": item.reason, "detail": item.detail}
    if isinstance(item, TurnResult):
        return "result", result_payload(item)
    return None


class EventStream(Response):
    """A ``text/event-stream`` response written chunk by chunk as ``chunks`` yields them.

    Starlette's ``StreamingResponse`` does the same inside an anyio task group made for each
    response (to notice a client that leaves); a turn's stream is the service's hottest path,
    and a task waiting for the disconnect costs less. A client that leaves stops the writing
    (the turn itself goes on: its events are stored)."""

    media_type = "text/event-stream"

    def __init__(
        self, chunks: AsyncIterator[tuple[bytes, bool]], headers: dict[str, str] | None = None
    ) -> None:
        # as ``StreamingResponse`` does: no body, so no Content-Length
        self.chunks = chunks
        self.status_code = 200
        self.background = None
        self.init_headers(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the stream (ASGI)."""
        await send_stream(send, receive, self.status_code, self.raw_headers, self.chunks)


async def send_stream(
    send: Send,
    receive: Receive,
    status: int,
    headers: list[tuple[bytes, bytes]],
    chunks: AsyncIterator[tuple[bytes, bool]],
) -> None:
    """Write a streamed response (ASGI): its start, then each chunk as ``chunks`` yields it,
    ``(body, last)``, the last one in the same write as the response's end; when the client
    has gone (``http.disconnect``) the writing stops. ``chunks`` is closed at the end. The
    service's event streams and the proxy's relay of an upstream's stream both write so."""
    gone: asyncio.Future[None] | None = None
    try:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        gone = asyncio.ensure_future(until_disconnect(receive))
        last = False
        async for chunk, last in chunks:
            if gone.done():
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": not last})
            if last:
                break
        if not last:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        if gone is not None:
            gone.cancel()
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()


async def until_disconnect(receive: Receive) -> None:
    """Return when the client has gone (an ASGI ``http.disconnect``); for a task that watches
    while a response is being written."""
    while (await receive())["type"] != "http.disconnect":
        pass
