"""Who watches a conversation's context, and the meter each watcher is sent when it changes.

``GET /v1/conversations/{id}/events`` subscribes; a conversation this worker keeps open
publishes its meter (``abridged.server.sse.meter_payload``) when a turn ends (the runner
says so) and whenever a compaction, a prune or an overflow recovery changed its context (its
``on_event``), also in the background after the turn's own stream has ended: the page's ring
follows it without polling. The meter is made after the compaction has been committed
(``Conversation.wait_compaction``), so it is the context the next call would send. Nothing
is computed for a conversation nobody watches. Per worker: with several workers, a watcher
hears of the conversations open in its own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from abridged.runtime.events import Notice
from abridged.runtime.overview import context_overview
from abridged.server.sse import meter_payload

__all__ = ["CONTEXT_EVENTS", "ContextWatch"]

#: The engine events after which the context is another.
CONTEXT_EVENTS = frozenset({"compaction_ended", "pruned", "overflow_recovered"})
#: Meters kept for a watcher that reads slowly (older ones are dropped: only the newest counts).
QUEUE_SIZE = 8
#: Conversations whose changes are counted (the oldest forgotten first).
MAX_COUNTED = 10_000


class ContextWatch:
    """Watchers by conversation id, each an ``asyncio.Queue`` of meter payloads."""

    def __init__(self) -> None:
        self._watchers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()  # changed again while their meter was being made
        # changes seen per conversation, watched or not: a watcher that reconnects says the
        # last one it had, and hears at once of any it missed in between
        self._changes: dict[str, int] = {}

    def changes(self, conversation_id: str) -> int:
        """How many changes of the conversation this worker has seen (the meters' ``seq``)."""
        return self._changes.get(conversation_id, 0)

    def watching(self, conversation_id: str) -> bool:
        """Whether anybody watches ``conversation_id``."""
        return bool(self._watchers.get(conversation_id))

    @contextlib.contextmanager
    def subscribe(self, conversation_id: str) -> Iterator[asyncio.Queue[dict[str, Any]]]:
        """A queue of the conversation's meters for the ``with`` block."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_SIZE)
        self._watchers.setdefault(conversation_id, set()).add(queue)
        try:
            yield queue
        finally:
            watchers = self._watchers.get(conversation_id)
            if watchers is not None:
                watchers.discard(queue)
                if not watchers:
                    del self._watchers[conversation_id]

    def publish(self, conversation_id: str, payload: dict[str, Any]) -> None:
        """Send ``payload`` to every watcher (a full queue loses its oldest meter)."""
        for queue in self._watchers.get(conversation_id, ()):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(payload)

    def listener(
        self, conversation_id: str, convo: Callable[[], Any], then: Callable[[Any], object]
    ) -> Callable[[Any], None]:
        """An ``on_event`` for a conversation: ``then(event)`` first (the metrics), then, when
        the event changed the context and somebody watches, the meter once the compaction
        under way (if any) is committed. ``convo`` returns the open conversation (or ``None``).
        """

        def on_event(event: Any) -> None:
            then(event)
            if not self.watching(conversation_id):
                return
            inner = event.event if isinstance(event, Notice) else None
            if inner is not None and inner.kind in CONTEXT_EVENTS:
                self.changed(conversation_id, convo)

        return on_event

    def changed(self, conversation_id: str, convo: Callable[[], Any]) -> None:
        """The conversation's context changed (a turn ended, a compaction or prune ran): its
        watchers get the meter once the compaction under way, if any, is committed."""
        changes = self._changes
        changes[conversation_id] = changes.get(conversation_id, 0) + 1
        if len(changes) > MAX_COUNTED:
            del changes[next(iter(changes))]
        if not self.watching(conversation_id):
            return
        if conversation_id in self._pending:
            self._again.add(conversation_id)  # the meter under way may be older than this
            return
        task = asyncio.ensure_future(self._publish_when_settled(conversation_id, convo))
        self._pending[conversation_id] = task
        task.add_done_callback(lambda _: self._pending.pop(conversation_id, None))

    async def _publish_when_settled(self, conversation_id: str, convo: Callable[[], Any]) -> None:
        while True:
            self._again.discard(conversation_id)
            await asyncio.sleep(0)  # the event's own step (a commit) goes first
            current = convo()
            if current is None:
                return
            await current.wait_compaction()
            if conversation_id not in self._again:
                self.publish(conversation_id, self.meter(conversation_id, current))
                return

    def meter(self, conversation_id: str, convo: Any) -> dict[str, Any]:
        """The meter of an open conversation now, with the change it follows (``seq``)."""
        return {**meter_payload(context_overview(convo)), "seq": self.changes(conversation_id)}
