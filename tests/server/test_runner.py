"""A turn's events on their way to the client: ``TurnHandle`` batches them (``event_batch_ms``)
and ``EventStream`` writes each batch once, the last one together with the response's end."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from abridged.errors import SettingError
from abridged.server.config import ServiceConfig
from abridged.server.runner import TurnHandle
from abridged.server.sse import EventStream


async def _collect(handle: TurnHandle) -> list[tuple[float, list[str]]]:
    """Each batch with the time it was given out."""
    return [(time.perf_counter(), [name for name, _ in batch]) async for batch in handle.batches()]


async def test_events_within_the_window_go_in_one_batch() -> None:
    handle = TurnHandle("c1", "m1", linger=0.05)
    reader = asyncio.ensure_future(_collect(handle))
    handle.put("notice", {})
    await asyncio.sleep(0.01)
    handle.put("meter", {})  # 10 ms later: still inside the 50 ms window
    await asyncio.sleep(0.15)
    handle.put("text", {})  # after the window: a batch of its own
    await asyncio.sleep(0.01)
    handle.put("done", {})
    handle.end()
    batches = [names for _, names in await asyncio.wait_for(reader, 5)]
    assert batches == [["notice", "meter"], ["text", "done"]]
    assert handle.finished


async def test_the_end_of_the_turn_does_not_wait_for_the_window() -> None:
    handle = TurnHandle("c1", "m1", linger=3600.0)  # a window no test could sit through
    reader = asyncio.ensure_future(_collect(handle))
    await asyncio.sleep(0)
    handle.put("started", {})
    await asyncio.sleep(0.02)
    handle.put("result", {"text": "ok"})
    handle.put("done", {})
    handle.end()
    # waiting out the window would take an hour: the guard against hanging ends it long before
    batches = await asyncio.wait_for(reader, 60)
    assert [names for _, names in batches] == [["started", "result", "done"]]
    assert handle.result == {"text": "ok"}


async def test_without_a_window_each_ready_event_goes_at_once() -> None:
    handle = TurnHandle("c1", "m1")
    reader = asyncio.ensure_future(_collect(handle))
    handle.put("started", {})
    await asyncio.sleep(0.01)
    handle.put("notice", {})
    handle.put("meter", {})  # ready together: one batch
    await asyncio.sleep(0.01)
    handle.put("done", {})
    handle.end()
    batches = [names for _, names in await asyncio.wait_for(reader, 5)]
    assert batches == [["started"], ["notice", "meter"], ["done"]]


async def _asgi(response: EventStream) -> list[dict[str, Any]]:
    """What the response sends, over ASGI (a client that stays to the end)."""
    sent: list[dict[str, Any]] = []
    forever = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await forever.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await response({"type": "http"}, receive, send)
    return sent


async def test_the_last_chunk_and_the_end_of_the_response_are_one_message() -> None:
    async def chunks() -> AsyncIterator[tuple[bytes, bool]]:
        yield b"event: started\n\n", False
        yield b"event: done\n\n", True

    sent = await _asgi(EventStream(chunks()))
    bodies = [(m["body"], m["more_body"]) for m in sent if m["type"] == "http.response.body"]
    assert bodies == [(b"event: started\n\n", True), (b"event: done\n\n", False)]


async def test_a_stream_that_stops_without_a_last_chunk_still_ends_the_response() -> None:
    async def chunks() -> AsyncIterator[tuple[bytes, bool]]:
        yield b"event: started\n\n", False

    sent = await _asgi(EventStream(chunks()))
    bodies = [(m["body"], m["more_body"]) for m in sent if m["type"] == "http.response.body"]
    assert bodies == [(b"event: started\n\n", True), (b"", False)]


@pytest.mark.parametrize("value", [-1, 1000.5, True, "16"])
def test_event_batch_ms_out_of_range_is_refused(value: Any) -> None:
    with pytest.raises(SettingError, match="event_batch_ms"):
        ServiceConfig(event_batch_ms=value)


def test_event_batch_ms_goes_through_the_environment() -> None:
    config = ServiceConfig(event_batch_ms=0)
    assert ServiceConfig.from_env(config.to_env()).event_batch_ms == 0
    assert ServiceConfig().event_batch_ms == 16.0
