"""Writing a streamed response (``send_stream``, under the service's event streams and the
proxy's relay of an upstream's stream): a client that leaves stops the writing and the source
is closed. Plain ASGI callables stand in for the server (no HTTP needed to leave early)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from abridged.server.sse import send_stream


async def test_a_client_that_leaves_stops_the_writing_and_closes_the_source() -> None:
    sent: list[dict[str, Any]] = []
    left = asyncio.Event()
    closed: list[bool] = []
    produced: list[int] = []

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def chunks() -> AsyncIterator[tuple[bytes, bool]]:
        try:
            for i in range(100):
                produced.append(i)
                if i == 2:
                    left.set()  # the client goes away after the second chunk was written
                await asyncio.sleep(0.01)
                yield f"chunk {i}\n".encode(), False
        finally:
            closed.append(True)

    await asyncio.wait_for(send_stream(send, receive, 200, [], chunks()), 5)
    bodies = [m["body"] for m in sent if m["type"] == "http.response.body"]
    assert sent[0] == {"type": "http.response.start", "status": 200, "headers": []}
    assert bodies == [b"chunk 0\n", b"chunk 1\n"]  # nothing after the client left
    assert len(produced) < 5
    assert closed == [True]


async def test_a_source_that_fails_leaves_the_response_unended() -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def chunks() -> AsyncIterator[tuple[bytes, bool]]:
        yield b"part\n", False
        raise ConnectionResetError("the upstream broke off")

    with pytest.raises(ConnectionResetError):
        await send_stream(send, receive, 200, [], chunks())
    # no clean end: the client sees the stream break off, not a complete answer
    assert [m.get("more_body") for m in sent if m["type"] == "http.response.body"] == [True]
